"""Whether a question is a follow-up, decided from its wording and then from evidence.

A question is a follow-up only when both hold:

1. it leans on the previous turn (``leans_on_previous``): it opens like a continuation ("and for
   annual plans?"), points back ("how long does that take?") or is too short to name a topic
   ("how many times?"); a question that pastes an identifier names its own topic;
2. searching it with the question it follows finds better evidence than searching it alone
   (``joined_is_better``): the best passage found with the earlier question is closer to the
   query than the best passage found for the question alone. A question with a topic of its own
   ("Refund policy?" after a 2FA question) finds a close passage alone, and mixing in the 2FA
   question only blurs it; "how many times?" alone finds nothing close, and with "How do
   webhook retries work?" finds the retry schedule. On the 51 labelled pairs of
   tests/data/follow_ups.jsonl this decides 50 right; the miss is a one-word question
   ("Coupons?"), whose similarity to anything is low (docs/answers.md).

Content-word coverage of the top passage was tried first as the evidence and decided 45 of
the 51 right: a follow-up's own words ("expire", "phone") are often not in the passage that
answers it.

Counting words alone (the first version: any question of 6 words or fewer was joined to the
previous one) turned "Which currencies do you support?" after a 2FA question into a 2FA search.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from search.keywords import keyword_query
from search.results import RetrievalResult

# Too short to name a topic of its own ("annual?", "how many times?").
ELLIPTICAL_MAX_WORDS = 3
# A pointing word ("it", "that") in a long question usually points inside it ("…try it out?").
REFERRING_MAX_WORDS = 12
# The anchor plus the follow-up must stay a question, not a transcript.
JOINED_QUERY_MAX_CHARS = 600

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
# "Is there a free trial?" asks whether something exists; it points nowhere.
_EXISTENTIAL_THERE = re.compile(r"\b(?:is|are|was|were|will) there\b|\bthere (?:is|are|'s)\b")
_WORD = re.compile(r"[\w'.-]+")


def leans_on_previous(question: str) -> bool:
    """Whether the wording of ``question`` depends on an earlier turn (condition 1)."""
    text = question.casefold().strip()
    words = _WORD.findall(text)
    if not words or keyword_query(question).identifiers:
        return False
    if len(words) <= ELLIPTICAL_MAX_WORDS or text.startswith(_CONTINUATION_OPENERS):
        return True
    pointing = set(words) & _REFERRING_WORDS
    if "there" in pointing and _EXISTENTIAL_THERE.search(text):
        pointing.discard("there")
    return len(words) <= REFERRING_MAX_WORDS and bool(pointing)


def joined_query(*, question: str, anchor: str) -> str:
    """The follow-up searched with the question it follows, bounded in length."""
    room = max(JOINED_QUERY_MAX_CHARS - len(question) - 1, 0)
    return f"{anchor[:room]} {question}".strip()


def anchor_of(*, query: str, question: str) -> str | None:
    """The earlier question a follow-up was searched with (``joined_query`` undone), or None
    when ``query`` is the question alone."""
    if query == question or not query.endswith(question):
        return None
    return query[: -len(question)].strip() or None


def joined_is_better(*, alone: RetrievalResult, joined: RetrievalResult) -> bool:
    """Condition 2: the search with the earlier question found a passage closer to what was
    asked than the question alone did. Retrieval's ``confidence`` (the best passage's cosine
    similarity, or its rerank score) is on one scale for any query, so the two compare
    directly. Without it (the vector leg down) the wording decides."""
    if alone.confidence is None or joined.confidence is None:
        return True
    return joined.confidence > alone.confidence


@dataclass(frozen=True)
class FollowUpSearch:
    """What was searched for a question and why: ``query`` and its ``result`` feed the answer."""

    query: str
    result: RetrievalResult
    follow_up: bool
    # Both searches' confidence, when the question leaned on an earlier one.
    alone_confidence: float | None = None
    joined_confidence: float | None = None
    compared: bool = False

    def evidence(self) -> dict[str, Any] | None:
        if not self.compared:
            return None
        return {
            "follow_up": self.follow_up,
            "alone_confidence": self.alone_confidence,
            "joined_confidence": self.joined_confidence,
        }


def follow_up_search(
    *, question: str, anchor: str | None, search: Callable[[str], RetrievalResult]
) -> FollowUpSearch:
    """Search ``question``, and when it leans on ``anchor`` (the conversation's latest standalone
    question) search it with the anchor too and keep whichever evidence is better. The second
    search costs one retrieval (tens of milliseconds with the local model) and only runs for
    questions whose wording leans back."""
    alone_result = search(question)
    if not anchor or not leans_on_previous(question):
        return FollowUpSearch(query=question, result=alone_result, follow_up=False)
    query = joined_query(question=question, anchor=anchor)
    joined_result = search(query)
    follow_up = joined_is_better(alone=alone_result, joined=joined_result)
    return FollowUpSearch(
        query=query if follow_up else question,
        result=joined_result if follow_up else alone_result,
        follow_up=follow_up,
        alone_confidence=alone_result.confidence,
        joined_confidence=joined_result.confidence,
        compared=True,
    )
