"""What a question becomes before it is searched: cleaned, bounded, and for a short follow-up,
joined to the question it follows so retrieval knows what "and for annual plans?" is about."""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Sequence

from django.conf import settings

from assistant.follow_ups import is_follow_up


class QuestionRejected(ValueError):
    """The question cannot be asked as it is; the message says why, for the customer."""

    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message)
        self.code = code  # "empty" or "too_long"


# Control characters would reach PostgreSQL (which refuses NUL in text) and the prompt; newlines
# and tabs are kept because a pasted error message or stack line may need them.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_SPACES = re.compile(r"[ \t\u00a0]+")
_WHITESPACE = re.compile(r"\s+")


def customer_text_clean(text: str) -> str:
    """Text a customer typed, as stored: NFKC, no control characters, no runs of blanks or of
    blank lines (questions and support requests alike)."""
    text = unicodedata.normalize("NFKC", text or "")
    text = _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = "\n".join(_SPACES.sub(" ", line).strip() for line in text.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def question_normalise(question: str) -> str:
    """The question as it will be stored and answered (``customer_text_clean``). Raises
    ``QuestionRejected`` when nothing is left or it is longer than the limit."""
    text = customer_text_clean(question)
    if not text:
        raise QuestionRejected("Please type a question.", code="empty")
    limit = settings.QUESTION_MAX_CHARS
    if len(text) > limit:
        raise QuestionRejected(
            f"That question is {len(text):,} characters long; please keep it under "
            f"{limit:,} characters (a short description of what you need works best).",
            code="too_long",
        )
    return text


_EDGE_PUNCTUATION = string.punctuation + "¿¡…«» \u201c\u201d\u2018\u2019"


def question_cache_text(question: str) -> str:
    """The form two askings of the same question share: casefolded, whitespace collapsed,
    punctuation trimmed at both ends ("How do refunds work?" == "how do refunds  work")."""
    return _WHITESPACE.sub(" ", question.casefold()).strip(_EDGE_PUNCTUATION + "\n\t")


# The anchor plus the follow-up must stay a question, not a transcript.
RETRIEVAL_QUERY_MAX_CHARS = 600


def retrieval_query_for(*, question: str, earlier_questions: Sequence[str]) -> str:
    """What to search for. ``earlier_questions`` are the conversation's standalone questions,
    oldest first; a follow-up is searched together with the latest of them (not with other
    follow-ups, so "and monthly?" then "and annual?" both stay about the first topic)."""
    if not earlier_questions or not is_follow_up(question):
        return question
    anchor = earlier_questions[-1]
    room = max(RETRIEVAL_QUERY_MAX_CHARS - len(question) - 1, 0)
    return f"{anchor[:room]} {question}".strip()
