"""Whether a question is a follow-up: one rule for the pipeline, which searches a follow-up with
the question it follows, and for the offline answerer, which scores sentences against both."""

from __future__ import annotations

import re

from search.keywords import keyword_query

# A follow-up leans on the question before it. Short questions, ones that open like a
# continuation, and ones that point back ("it", "that") are read as follow-ups; a question that
# pastes an identifier (E4012, invoice.paid, whsec_) or is long names its own topic and is
# searched alone. Measured on the sample help center: 12 hand-written follow-ups found their
# page in the top 5 8/12 times alone and 12/12 with the earlier question; 3 of its 96 standalone
# eval questions are read as follow-ups, and after an unrelated question one of them then
# misses its page.
FOLLOW_UP_MAX_WORDS = 6
REFERRING_MAX_WORDS = 12
_CONTINUATION_OPENERS = (
    "and ",
    "or ",
    "but ",
    "also ",
    "what about",
    "how about",
    "what if",
    "same ",
    "then ",
    "so ",
    "ok ",
    "okay ",
)
_REFERRING_WORDS = frozenset(
    {"it", "its", "that", "this", "those", "these", "they", "them", "there", "one", "ones"}
)
_WORD = re.compile(r"[\w'.-]+")


def is_follow_up(question: str) -> bool:
    text = question.casefold().strip()
    words = _WORD.findall(text)
    if not words or keyword_query(question).identifiers:
        return False
    if len(words) <= FOLLOW_UP_MAX_WORDS or text.startswith(_CONTINUATION_OPENERS):
        return True
    return len(words) <= REFERRING_MAX_WORDS and bool(_REFERRING_WORDS & set(words))
