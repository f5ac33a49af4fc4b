"""Content words of a question or a passage, crudely stemmed: how the answering side asks "does
this passage say what was asked about?" (the follow-up decision, the quote picker and the
no-answer decision all ask it, so they share one definition)."""

from __future__ import annotations

import re
from collections.abc import Iterable

WORD = re.compile(r"[a-z0-9][a-z0-9._-]*[a-z0-9]|[a-z0-9]")
_STOPWORDS_TEXT = """
    a about after again all am an and any are as at be been before being but by can could did
    do does doing don for from get got had has have having he her here how i if in into is it its
    just me more most my no not now of off on once only or other our out over own same she should
    so some such than that the their them then there these they this those through to too u under
    until up us very was we were what when where which while who why will with would you your
    yours ur im pls please hi hello thanks"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())


def terms(text: str) -> set[str]:
    """Content words, crudely stemmed (a five-letter prefix: "refunds"/"refunded" → "refun")."""
    words = WORD.findall(text.lower())
    return {word[:5] if word.isalpha() else word for word in words if word not in STOPWORDS}


def overlap(wanted: set[str], found: set[str]) -> float:
    """The share of ``wanted`` that ``found`` holds (0 when nothing is wanted)."""
    if not wanted:
        return 0.0
    return len(wanted & found) / len(wanted)


def coverage(wanted: set[str], texts: Iterable[str]) -> float:
    """The share of ``wanted`` that appears in any of ``texts``."""
    found: set[str] = set()
    for text in texts:
        found |= terms(text)
    return overlap(wanted, found)
