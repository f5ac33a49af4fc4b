"""Where a sentence ends: one rule for every part of the product that cuts prose into sentences.

The chunker cuts an over-long paragraph at sentence ends, the offline answerer quotes whole
sentences, and the eval sets take an option's first sentence as its definition. Their copies of
the rule had drifted apart (two never ended a sentence inside closing quotes or bold, one never
before a digit); this is the one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import pairwise

from kb.chunking.markup import LINK_LABEL

# What may close a sentence after its stop: quotes, brackets, emphasis
_CLOSERS = r"[\"'\u201d\u2019)\]*_]*"
# A sentence ends at . ! ? (plus closing quotes, brackets or emphasis) followed by whitespace and
# then anything but a lowercase letter, which keeps "e.g. the" and "approx. five" in one piece.
SENTENCE_END = re.compile(rf"(?P<mark>[.!?\u2026]+{_CLOSERS})\s+(?=[^\sa-z])|[\u3002\uff01\uff1f]+")
# Text that ends as a statement does: with a stop, or a colon or semicolon, then its closers
_STATEMENT_END = re.compile(rf"(?:[.!?\u2026:;]{_CLOSERS}|[\u3002\uff01\uff1f])\s*$")
# A full stop that ends an abbreviation, not a sentence, even before a capital: "e.g. Stripe".
ABBREVIATION = re.compile(
    r"\b(?:e\.g|i\.e|a\.k\.a|etc|vs|approx|incl|no|Mr|Ms|Dr)\.$", re.IGNORECASE
)
# A Markdown link's or picture's label, "[Session Affinity (a.k.a. Sticky Sessions)](…)": a stop
# in it ends no sentence (its brackets may nest once, "[[services.concurrency]](…)")
_LINK_LABEL = re.compile(rf"!?{LINK_LABEL}(?=[(\[])")
# Enough text before a full stop to hold the longest abbreviation and the character before it,
# so its leading word boundary is the text's own.
_ABBREVIATION_WINDOW = 8


def ends_statement(text: str) -> bool:
    """Whether ``text`` ends with a stop (or a colon, a semicolon) and what closes it: a list
    item or a label often does not, and what follows it then reads as a new statement only if
    something marks it."""
    return _STATEMENT_END.search(text) is not None


def sentence_ends(
    text: str, start: int = 0, end: int | None = None, *, abbreviations: bool = False
) -> list[int]:
    """Offsets just past each sentence end in ``text[start:end]`` (and past the whitespace after
    it, so each is where the next sentence starts).

    With ``abbreviations``, a full stop after a known abbreviation ("e.g.", "No.") ends nothing,
    nor does a stop inside a link's label. The chunker does without: its cut points are part of
    every stored chunk's boundaries.
    """
    return list(_ends(text, start, len(text) if end is None else end, abbreviations=abbreviations))


def split_sentences(text: str, *, abbreviations: bool = False) -> list[str]:
    """The sentences of ``text`` in order, without surrounding whitespace."""
    cuts = [0, *sentence_ends(text, abbreviations=abbreviations), len(text)]
    pieces = (text[start:stop].strip() for start, stop in pairwise(cuts))
    return [piece for piece in pieces if piece]


def first_sentence(text: str, *, abbreviations: bool = False) -> str:
    """The first sentence of ``text``, without surrounding whitespace (all of it if it has one)."""
    cut = next(_ends(text, 0, len(text), abbreviations=abbreviations), len(text))
    return text[:cut].strip()


def _ends(text: str, start: int, end: int, *, abbreviations: bool) -> Iterator[int]:
    labels = (
        [match.span(1) for match in _LINK_LABEL.finditer(text, start, end)]
        if abbreviations and "[" in text
        else []
    )
    for match in SENTENCE_END.finditer(text, start, end):
        mark_end = match.end("mark")
        if abbreviations and mark_end != -1:
            if ABBREVIATION.search(text[max(start, mark_end - _ABBREVIATION_WINDOW) : mark_end]):
                continue
            if any(first <= match.start() < last for first, last in labels):
                continue
        yield match.end()
