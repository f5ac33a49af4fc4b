"""Turning a customer's question into terms for the keyword leg.

Natural questions contain words no page has, so the leg ORs its terms instead of requiring all.
The leg ranks by BM25 (``search.hybrid``), which weighs each term on its own: a pasted identifier
(``invoice.paid``, ``E4012``, ``X-Acme-Signature``) would count no more than its words found apart,
so identifiers are kept apart too, a chunk holding one as a phrase gets a bonus
(``FusionWeights.identifier_bonus``) and a question carrying one leans the fusion towards the
keyword leg.

A bare number is not an identifier by its shape: "404", "2025" and "100" are as often a
quantity, a year or a limit as a code. It is one only where the help center uses it as one, a
heading naming it ("404: Not found"); ``search.terms.named_numbers`` looks that up in the index
for the question's ``numbers`` and ``KeywordQuery.with_named_numbers`` adds the ones it finds.

Terms are always passed to Postgres as bind parameters of ``plainto_tsquery``, which treats its
input as plain text: tsquery syntax (``!``, ``&``, ``:*``, quotes) and SQL in a question are just
characters here, never operators.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import unicodedata
from collections.abc import Collection
from dataclasses import dataclass

# Longer questions are cut: the keyword leg needs the gist, not a pasted log file.
MAX_QUESTION_CHARS = 1000
MAX_TERMS = 24

# A word, or several joined by . _ - / : (identifiers, header names, config keys, versions).
_TOKEN = re.compile(r"\w+(?:[._\-/:]\w+)*_?", re.UNICODE)
_HAS_DIGIT = re.compile(r"\d")
_HAS_LETTER = re.compile(r"[^\W\d_]")


# PostgreSQL's english text-search stop words (share/tsearch_data/english.stop, the Snowball
# list; the same file in PostgreSQL 15 and 18). The english parser splits ``starting_after`` at
# the underscore and drops ``after``, so that identifier searches for every chunk saying "start".
_ENGLISH_STOP_TEXT = """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his
    himself she her hers herself it its itself they them their theirs themselves what which
    who whom this that these those am is are was were be been being have has had having do
    does did doing a an the and but if or because as until while of at by for with about
    against between into through during before after above below to from up down in out on
    off over under again further then once here there when where why how all any both each
    few more most other some such no nor not only own same so than too very s t can will
    just don should now
"""
ENGLISH_STOP_WORDS = frozenset(_ENGLISH_STOP_TEXT.split())


@dataclass(frozen=True)
class KeywordQuery:
    terms: tuple[str, ...]  # every term, ORed
    identifiers: tuple[str, ...]  # the subset that looks like an identifier
    numbers: tuple[str, ...] = ()  # bare numbers of 3+ digits: identifiers if a heading names one
    # The question as the leg reads it (cut at MAX_QUESTION_CHARS), words in their order and
    # repeats kept: the question's phrases (``search.terms.KeywordTerms.phrases``) come from it.
    text: str = ""

    @functools.cached_property
    def identifier_phrases(self) -> tuple[str, ...]:
        """The identifiers the index can find exactly, as phrases (``collection method`` for
        ``collection_method``: its words adjacent, in order). An identifier with a stop word
        in it (``starting_after``) is left out: the index keeps only its common word."""
        phrases = []
        for identifier in self.identifiers:
            parts = [part for part in identifier.split("_") if part]
            if parts and not any(part.lower() in ENGLISH_STOP_WORDS for part in parts):
                phrases.append(" ".join(parts))
        return tuple(phrases)

    @property
    def is_empty(self) -> bool:
        return not self.terms

    def with_named_numbers(self, named: Collection[str]) -> KeywordQuery:
        """The query with the bare numbers the help center names (in ``named``) as identifiers."""
        found = tuple(number for number in self.numbers if number in named)
        if not found:
            return self
        return dataclasses.replace(self, identifiers=self.identifiers + found)


def is_identifier(token: str) -> bool:
    """True for tokens a person pastes rather than says: codes, event names, headers, keys."""
    if "_" in token or re.search(r"[^\W\d_][./:][^\W\d_]", token):
        return True  # auto_advance, sk_test_, invoice.paid; not 0.00 or 19/20
    parts = token.split("-")
    if (
        len(parts) > 1
        and _HAS_LETTER.search(token)
        and all(p[:1].isupper() or p[:1].isdigit() for p in parts)
    ):
        return True  # X-Acme-Signature, Retry-After; not "follow-up", "intra-EU" or "2024-2025"
    if re.fullmatch(r"\d+(st|nd|rd|th|s|k|m|x)", token, re.IGNORECASE):
        return False  # 15th, 1990s, 10k, 2x: quantities, not identifiers
    return bool(_HAS_DIGIT.search(token) and _HAS_LETTER.search(token))  # E4012, v2, 2fa


def is_bare_number(token: str) -> bool:
    """A number that may be a code (429, 4012) or a quantity (100, 2025): only the help center
    can tell (see the module's docstring). Shorter ones are steps, counts and versions."""
    return token.isascii() and token.isdigit() and len(token) >= 3


_NAME = re.compile(r"\b[^\W\d_][^\W_]*\b")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\n)\W*([^\W\d_][^\W_]*)")


def proper_names(question: str) -> tuple[str, ...]:
    """Capitalised words a person wrote mid-sentence (``Klarna``, ``QuickBooks``, ``GCS``):
    names of products, companies and places. When the help center mentions one nowhere, the
    question is very likely about something it does not cover."""
    text = unicodedata.normalize("NFKC", question[:MAX_QUESTION_CHARS])
    starts = {match.group(1) for match in _SENTENCE_START.finditer(text)}
    names: list[str] = []
    for match in _NAME.finditer(text):
        word = match.group(0)
        if word in starts or word == "I" or len(word) < 2 or word in names:
            continue
        if any(character.isupper() for character in word) and not is_identifier(word):
            names.append(word)
    return tuple(names)


def keyword_query(question: str) -> KeywordQuery:
    text = unicodedata.normalize("NFKC", question[: MAX_QUESTION_CHARS * 2])[:MAX_QUESTION_CHARS]
    terms: list[str] = []
    identifiers: list[str] = []
    numbers: list[str] = []
    seen: set[str] = set()
    for match in _TOKEN.finditer(text):
        # The pattern starts and ends a token on a word character (or a trailing "_" of a
        # pasted prefix like sk_test_), so edge punctuation never reaches a term.
        token = match.group(0)
        key = token.lower()
        if key in seen:
            continue
        seen.add(key)
        terms.append(token)
        if is_identifier(token):
            identifiers.append(token)
        elif is_bare_number(token):
            numbers.append(token)
        if len(terms) >= MAX_TERMS:
            break
    return KeywordQuery(
        terms=tuple(terms), identifiers=tuple(identifiers), numbers=tuple(numbers), text=text
    )
