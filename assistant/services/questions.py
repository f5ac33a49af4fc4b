"""What a question becomes before it is searched: cleaned and bounded (whether it is searched
with the question it follows is `assistant.follow_ups`' call)."""

from __future__ import annotations

import re
import string
import unicodedata

from django.conf import settings


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
