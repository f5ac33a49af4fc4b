"""Finishing a question's keyword query against the index, before the hybrid statement runs.

``search.keywords`` turns the question into terms without looking at the index. Here the terms
meet the index, once per question: each lexeme's BM25 inverse document frequency (from the
per-model statistics that triggers keep, ``kb.models.IndexStatistic``), which lexemes select the
keyword leg's candidates, and which bare numbers the help center uses as codes. The result,
``KeywordTerms``, is everything the statement binds and fusion reads of the question's words.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from kb.models import EmbeddingModel
from search.keywords import KeywordQuery
from search.spelling import lexeme_corrections
from search.sql import (
    CHUNKS,
    DOCUMENTS,
    INDEX_STATISTICS,
    TERM_STATISTICS,
    reading_connection,
    visible_chunks_sql,
)

# The keyword leg scores the chunks that hold the question's rarest terms: lexemes are taken
# rarest first while the chunks holding them add up to at most this many. BM25 is dominated by
# rare terms, and scoring costs ~10 microseconds per candidate: at 100k chunks ranking every
# chunk holding "delete" (8% of them) cost 166 ms. When even the rarest term is more common
# than that, a candidate must hold two of the three rarest terms; and no more than
# ``search.hybrid.KEYWORD_CANDIDATE_CAP`` chunks are ever scored (a bound on the worst case, not
# a ranking). 500 and 1,000 gave the same nDCG@10 on every eval set (4-7k chunks each); at 100k
# synthetic chunks 500 took hybrid SQL from p50 32 / p95 55 ms to 24 / 33 ms.
KEYWORD_CANDIDATE_BUDGET = 500
# What the GIN index may read to find those candidates: the posting lists of the selected terms
# (in "pairs" mode, of the three it intersects). The candidate cap bounds the rows scored, not
# the bitmap built first: at 1M chunks "customers pay invoices" read 208k matches (42 ms) to
# keep an arbitrary 500 of them. Past this many postings the terms are so common that the leg
# selects no candidates of its own (the vector leg's are still scored by BM25). At 0.2 us per
# posting it bounds that scan near 10 ms; a corpus under ~16k chunks never reaches it (three
# terms cannot hold more postings than three times the chunks), so every eval set ranks as it
# did.
KEYWORD_SELECTION_POSTINGS = 50_000
# A question's phrases are the pairs of its neighbouring words (``KeywordTerms.phrases``); a
# pasted paragraph is read for its first ones only, as its terms are (MAX_TERMS). A question
# of fewer than three phrases is a query of a few words ("cancel my subscription", "refund
# annual plan"), not a quote: a chunk that happens to say "annual plan refunds" is no likelier
# to answer it than the section about annual plans (a bonus for two phrases put the sample's
# refund summary table over its "Annual plans" section, and took Plausible's "where is the
# button to cancel my plan?" from nDCG@10 1.000 to 0.631; docs/retrieval.md).
MAX_PHRASES = 24
MIN_PHRASES = 3


@dataclass(frozen=True)
class Phrase:
    """Two of the question's lexemes in its order, ``distance`` positions apart (stop words
    between them count, as they do in a chunk's ``tsvector``), weighted by their IDF."""

    first: str
    second: str
    distance: int
    weight: float  # the mean IDF of the two (0 for a lexeme no chunk holds)


@dataclass(frozen=True)
class KeywordTerms:
    """The question's index terms with their BM25 inverse document frequencies, and the
    identifier phrases the keyword leg boosts (named numbers included)."""

    lexemes: tuple[str, ...]
    idfs: tuple[float, ...]
    selecting: tuple[str, ...]  # the lexemes whose matches are the keyword leg's candidates
    # (none when even the rarest are too common to look up: see KEYWORD_SELECTION_POSTINGS)
    average_length: float
    pairs: bool = False  # candidates must hold two of ``selecting`` (all its terms are common)
    question_idf: float = 0.0  # of every lexeme of the question, those no chunk holds included
    identifier_phrases: tuple[str, ...] = ()
    # The question's neighbouring words, in order: a chunk holding them so holds the words as
    # the question writes them, which a question quoting the docs does (FusionWeights).
    phrases: tuple[Phrase, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not self.lexemes

    @property
    def idf_by_lexeme(self) -> dict[str, float]:
        return dict(zip(self.lexemes, self.idfs, strict=True))


def keyword_terms(
    *, embedding_model: EmbeddingModel, keywords: KeywordQuery, audiences: Sequence[str]
) -> KeywordTerms:
    """The question's keyword query finished against the index: its lexemes' weights, and its
    identifier phrases once the bare numbers a visible heading names have joined them."""
    terms = term_weights(embedding_model=embedding_model, keywords=keywords)
    named = named_numbers(
        embedding_model=embedding_model, numbers=keywords.numbers, audiences=audiences
    )
    phrases = keywords.with_named_numbers(named).identifier_phrases
    return dataclasses.replace(terms, identifier_phrases=phrases)


def term_weights(*, embedding_model: EmbeddingModel, keywords: KeywordQuery) -> KeywordTerms:
    """Look up the question's lexemes (as the index parses them) in the model's statistics.

    IDF is Lucene's ``ln(1 + (N - df + 0.5) / (df + 0.5))``, always positive. A lexeme no chunk
    holds can match nothing and is dropped from the terms, but still counts (as the rarest of
    all) in ``question_idf``: a question full of words the docs never use does not quote them.
    The identifier phrases are the question's own (``keyword_terms`` adds named numbers). A
    lexeme no chunk holds that is a typing slip from one that chunks do hold is read as that one
    (``search.spelling``), in the terms and in ``question_idf``.
    """
    # One round trip: the terms' statistics, then (kind "position") where each lexeme stands in
    # the question as written, which its phrases are read from.
    with reading_connection().cursor() as cursor:
        cursor.execute(
            f"""
            SELECT 'term', q.lexeme, coalesce(t.chunk_count, 0), s.chunk_count, s.term_count,
                   NULL::smallint[]
            FROM (SELECT DISTINCT lexeme FROM unnest(to_tsvector('english', %(text)s))) q
            CROSS JOIN {INDEX_STATISTICS} s
            LEFT JOIN {TERM_STATISTICS} t
                ON t.embedding_model_id = s.embedding_model_id AND t.lexeme = q.lexeme
            WHERE s.embedding_model_id = %(model)s AND s.chunk_count > 0
            UNION ALL
            SELECT 'position', lexeme, NULL, NULL, NULL, positions
            FROM unnest(to_tsvector('english', %(question)s))
            """,
            {
                "text": " ".join(keywords.terms),
                "question": keywords.text,
                "model": embedding_model.pk,
            },
        )
        rows = cursor.fetchall()
    every = sorted(tuple(row[1:5]) for row in rows if row[0] == "term")  # by lexeme
    parsed = [(row[1], row[5]) for row in rows if row[0] == "position"]
    # A lexeme no chunk holds may be a typing slip: it is searched as its nearest indexed one.
    corrected = lexeme_corrections(
        lexemes=[lexeme for lexeme, df, _, _ in every if df == 0], embedding_model=embedding_model
    )
    frequencies = {lexeme: df for lexeme, df, _, _ in every}
    for asked, (indexed, df) in corrected.items():
        del frequencies[asked]
        frequencies.setdefault(indexed, df)
    held = sorted((lexeme, df) for lexeme, df in frequencies.items() if df > 0)
    read_as = {asked: indexed for asked, (indexed, _) in corrected.items()}
    positions = [
        (int(at), read_as.get(lexeme, lexeme)) for lexeme, ats in parsed for at in ats or ()
    ]
    if not held:
        return KeywordTerms(
            lexemes=(), idfs=(), selecting=(), average_length=1.0, identifier_phrases=()
        )
    chunks, total_terms = every[0][2], every[0][3]

    def idf(df: int) -> float:
        return math.log(1 + (chunks - df + 0.5) / (df + 0.5))

    selecting, pairs = _selecting(held)
    idfs = {lexeme: idf(df) for lexeme, df in held}
    return KeywordTerms(
        lexemes=tuple(idfs),
        idfs=tuple(idfs.values()),
        selecting=selecting,
        pairs=pairs,
        average_length=max(total_terms / chunks, 1.0),
        question_idf=sum(idf(df) for df in frequencies.values()),
        identifier_phrases=keywords.identifier_phrases,
        phrases=_phrases(positions, idfs),
    )


def _phrases(positions: Sequence[tuple[int, str]], idfs: dict[str, float]) -> tuple[Phrase, ...]:
    """Each two neighbouring lexemes of the question (``positions``: position and lexeme, as
    ``to_tsvector`` parses the question) as a ``Phrase``; a lexeme repeated at once or a pair
    no chunk could hold (neither lexeme is indexed) is none, and so is every one of a question
    of fewer than MIN_PHRASES."""
    ordered = sorted(positions)
    phrases = []
    for (at, first), (then, second) in itertools.pairwise(ordered):
        weight = (idfs.get(first, 0.0) + idfs.get(second, 0.0)) / 2
        if first != second and weight > 0:
            phrases.append(Phrase(first, second, then - at, weight))
    return tuple(phrases[:MAX_PHRASES]) if len(phrases) >= MIN_PHRASES else ()


def _selecting(held: Sequence[tuple[str, int]]) -> tuple[tuple[str, ...], bool]:
    """The lexemes (of ``(lexeme, document frequency)``) whose matches are the keyword leg's
    candidates, and whether a candidate must hold two of them (see KEYWORD_CANDIDATE_BUDGET)."""
    selecting: list[str] = []
    holding = 0
    rarest_first = sorted(held, key=lambda row: (row[1], row[0]))
    for lexeme, df in rarest_first:
        if selecting and holding + df > KEYWORD_CANDIDATE_BUDGET:
            break
        selecting.append(lexeme)
        holding += df
    pairs = holding > KEYWORD_CANDIDATE_BUDGET and len(rarest_first) > 1
    if pairs:
        selecting = [lexeme for lexeme, _ in rarest_first[:3]]
        holding = sum(df for _, df in rarest_first[:3])
    if holding > KEYWORD_SELECTION_POSTINGS:
        selecting, pairs = [], False
    return tuple(selecting), pairs


def named_numbers(
    *, embedding_model: EmbeddingModel, numbers: Sequence[str], audiences: Sequence[str]
) -> frozenset[str]:
    """Which of ``numbers`` (bare numbers, ``is_bare_number``) a heading of a page the asker
    may see names: where the help center uses a number as a code (``## 404: Not found``).

    Heading words are weight A in ``tsv``, so this is a GIN lookup of ``'404':A`` (a constant
    tsquery, so the planner can estimate it and use the index), made only for a question with
    a bare number and always current: a page published or retired counts at once.
    """
    if not numbers:
        return frozenset()
    with reading_connection().cursor() as cursor:
        cursor.execute(
            f"""
            SELECT DISTINCT u.lexeme
            FROM {CHUNKS} c JOIN {DOCUMENTS} d ON d.id = c.document_id, unnest(c.tsv) u
            WHERE {visible_chunks_sql(embedding_model)} AND c.tsv @@ %(headings)s::tsquery
              AND u.lexeme = ANY(%(numbers)s::text[]) AND 'A' = ANY(u.weights)
            """,
            {
                "audiences": list(audiences),
                "headings": " | ".join(f"'{number}':A" for number in numbers if number.isdigit()),
                "numbers": list(numbers),
            },
        )
        return frozenset(row[0] for row in cursor.fetchall())
