"""Probable contradictions: passages of two published pages that are about the same thing (their
vectors are close) but state different numbers, durations or amounts.

The candidate pairs come from one SQL statement over the active embedding model's chunks: for
each chunk of a current published page, a LATERAL probe of that model's HNSW index takes its
nearest chunks of *other* current published pages, kept when their cosine similarity reaches
``SAME_SUBJECT_SIMILARITY``. Python then reads the quantities of both passages
(``kb.attention.quantities``) and keeps the pairs that disagree on one about the same subject
(the same kind of value, counted from the same thing or said in sentences that share a word).

The result depends only on the index's content, so it is cached under ``index_version()``: any
save, retirement or re-index computes it again on the next page load.
"""

from __future__ import annotations

import datetime
import itertools
import time
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import numpy as np
import structlog
from django.core.cache import cache
from django.db import connection, transaction
from django.utils.safestring import SafeString, mark_safe

from kb.attention.quantities import Disagreement, Quantity, disagreements, quantities_in
from kb.models import Chunk, EmbeddingModel
from kb.rendering import passage_to_html
from kb.selectors.index_version import index_version
from kb.visibility import current_document_sql

log = structlog.get_logger("groundwork.kb")

# Cosine similarity (all-MiniLM-L6-v2) from which two passages are taken to be about the same
# thing. Judged by hand on corpus/ (427 chunks) over the pairs this query returns: at 0.75 or
# more, 33 of 50 pairs answer the same question (monthly refunds against monthly refunds, seat
# limits against seats); 8 of the other 17 are "Related pages" link lists, which state no
# values. From 0.70 to 0.75, 13 of the first 30 of 82 pairs do (a webhook guide's
# "Handling events" against the retry schedule). Values differing is the second filter, and
# pages of one area are expected to state different numbers, so the first filter must keep out
# passages that only share an area: the round figure where most pairs share a question.
SAME_SUBJECT_SIMILARITY = 0.75
# Nearest passages of other pages read per chunk. A passage restated on more than three pages
# is rare; the probe costs one HNSW descent however many it returns.
NEIGHBOURS_PER_CHUNK = 3
# HNSW search breadth for these probes. At 3,416 chunks (the corpus's plus seven noisy copies
# of each), ef_search 20 found 7,028 of the 7,031 pairs that 40 (retrieval's setting) found,
# in 0.73 s instead of 1.69 s; 10 took 0.66 s and found 7,021.
PROBE_EF_SEARCH = 20
CACHE_SECONDS = 24 * 3600


@dataclass(frozen=True)
class Passage:
    chunk_id: int
    document_id: int
    path: str
    title: str
    heading_path: str
    text: str
    updated_on: datetime.date | None
    quantities: tuple[Quantity, ...]


@dataclass(frozen=True)
class Segment:
    """A stretch of a passage's text, ``marked`` when it holds a differing value."""

    text: str
    marked: bool


@dataclass(frozen=True)
class Contradiction:
    """Two passages of different pages about the same thing that state different values.
    ``first`` is the older page (by ``updated_on``): the one a steward would retire."""

    first: Passage
    second: Passage
    similarity: float
    disagreements: tuple[Disagreement, ...]

    @property
    def first_segments(self) -> list[Segment]:
        return _segments(self.first.text, [q for d in self.disagreements for q in d.first_only])

    @property
    def second_segments(self) -> list[Segment]:
        return _segments(self.second.text, [q for d in self.disagreements for q in d.second_only])

    @property
    def first_html(self) -> SafeString:
        return _rendered(self.first.text, [q for d in self.disagreements for q in d.first_only])

    @property
    def second_html(self) -> SafeString:
        return _rendered(self.second.text, [q for d in self.disagreements for q in d.second_only])

    @property
    def kinds(self) -> str:
        return ", ".join(disagreement.kind for disagreement in self.disagreements)


def _rendered(text: str, marked: list[Quantity]) -> SafeString:
    """The passage as the public page renders it, its differing values marked."""
    spans = sorted({(q.start, q.end) for q in marked})
    return mark_safe(passage_to_html(text, marked=spans))  # sanitised by nh3 in passage_to_html


def _segments(text: str, marked: list[Quantity]) -> list[Segment]:
    segments, position = [], 0
    for start, end in sorted({(q.start, q.end) for q in marked}):
        if start < position:  # two values of one range share a span
            continue
        segments.append(Segment(text[position:start], marked=False))
        segments.append(Segment(text[start:end], marked=True))
        position = end
    segments.append(Segment(text[position:], marked=False))
    return [segment for segment in segments if segment.text]


def similar_passage_pairs(
    *, embedding_model: EmbeddingModel, min_similarity: float = SAME_SUBJECT_SIMILARITY
) -> list[tuple[int, int, float]]:
    """(chunk id, chunk id, cosine similarity) of passages of different current published pages
    at ``min_similarity`` or more, each pair once (lower id first), most similar first."""
    dims = int(embedding_model.dimensions)
    model_id = int(embedding_model.pk)  # a literal: the shape of the model's partial HNSW index
    with transaction.atomic(), connection.cursor() as cursor:
        # Each probe must walk the HNSW index in distance order. Below a few thousand chunks the
        # planner prefers reading every chunk and sorting once per probe: 5.5 s against 0.66 s
        # by the index at 427 chunks (measured while each vector was read from TOAST, before
        # migration 0018; a whole read per probe still grows with the square of the chunks).
        cursor.execute(
            "SELECT set_config('hnsw.ef_search', %s, true), set_config('enable_sort', 'off', true)",
            [str(PROBE_EF_SEARCH)],
        )
        cursor.execute(
            f"""
            WITH current_page AS (
                SELECT d.id FROM kb_document d WHERE {current_document_sql(alias="d")}
            )
            SELECT LEAST(c.id, n.id), GREATEST(c.id, n.id), max(1 - n.distance)
            FROM kb_chunk c
            JOIN current_page d ON d.id = c.document_id
            CROSS JOIN LATERAL (
                SELECT o.id, o.embedding::vector({dims}) <=> c.embedding::vector({dims}) AS distance
                FROM kb_chunk o
                JOIN current_page od ON od.id = o.document_id
                WHERE o.embedding_model_id = {model_id} AND o.document_id <> c.document_id
                ORDER BY o.embedding::vector({dims}) <=> c.embedding::vector({dims})
                LIMIT %(neighbours)s
            ) n
            WHERE c.embedding_model_id = {model_id} AND 1 - n.distance >= %(min_similarity)s
            GROUP BY 1, 2
            ORDER BY 3 DESC, 1, 2
            """,
            {"neighbours": NEIGHBOURS_PER_CHUNK, "min_similarity": min_similarity},
        )
        return [(int(a), int(b), float(similarity)) for a, b, similarity in cursor.fetchall()]


def _passages(chunk_ids: set[int]) -> dict[int, Passage]:
    rows = Chunk.objects.filter(pk__in=chunk_ids).values_list(
        "id",
        "document_id",
        "document__path",
        "document__title",
        "heading_path",
        "text",
        "document__updated_on",
    )
    return {
        row[0]: Passage(
            chunk_id=row[0],
            document_id=row[1],
            path=row[2],
            title=row[3],
            heading_path=row[4],
            text=row[5],
            updated_on=row[6],
            quantities=tuple(quantities_in(row[5], heading=_own_heading(row[4]))),
        )
        for row in rows
    }


def _own_heading(heading_path: str) -> str:
    """A passage's own heading, the last of its path: the page title is shared by every
    passage of the page, so it says nothing about what one passage's values are about."""
    return heading_path.rsplit(" > ", 1)[-1]


def _older_first(first: Passage, second: Passage) -> tuple[Passage, Passage]:
    oldest = datetime.date.max
    if (first.updated_on or oldest, first.path) > (second.updated_on or oldest, second.path):
        return second, first
    return first, second


def contradictions_compute(*, embedding_model: EmbeddingModel) -> list[Contradiction]:
    """The probable contradictions in ``embedding_model``'s index, most similar first."""
    started = time.perf_counter()
    pairs = similar_passage_pairs(embedding_model=embedding_model)
    passages = _passages({chunk_id for a, b, _ in pairs for chunk_id in (a, b)})
    found = []
    for first_id, second_id, similarity in pairs:
        if first_id not in passages or second_id not in passages:
            continue  # re-indexed between the two reads
        first, second = _older_first(passages[first_id], passages[second_id])
        differing = disagreements(list(first.quantities), list(second.quantities))
        if differing:
            found.append(
                Contradiction(
                    first=first,
                    second=second,
                    similarity=similarity,
                    disagreements=tuple(differing),
                )
            )
    log.info(
        "contradictions_computed",
        pairs=len(pairs),
        contradictions=len(found),
        ms=round((time.perf_counter() - started) * 1000),
    )
    return found


def contradicting_chunks(*, chunk_ids: Collection[int]) -> set[frozenset[int]]:
    """The pairs of these chunks, from different documents, that contradict each other by the
    rule of ``contradictions_compute``: about the same thing (their vectors at
    ``SAME_SUBJECT_SIMILARITY`` or more) and each stating a value of one kind the other does
    not. For the few passages one answer cites: one query, no index probe."""
    if len(set(chunk_ids)) < 2:
        return set()
    rows: list[Any] = list(
        Chunk.objects.filter(pk__in=set(chunk_ids)).values_list(
            "id",
            "document_id",
            "embedding_model_id",
            "heading_path",
            "text",
            "embedding",
            named=True,
        )
    )
    values: dict[int, Any] = {}  # a passage's values, read once however many pairs it is in

    def values_of(row: Any) -> Any:
        if row.id not in values:
            values[row.id] = quantities_in(row.text, heading=_own_heading(row.heading_path))
        return values[row.id]

    found: set[frozenset[int]] = set()
    for first, second in itertools.combinations(rows, 2):
        if first.document_id == second.document_id:
            continue
        if first.embedding_model_id != second.embedding_model_id:
            continue  # vectors of different models are never compared
        if _cosine(first.embedding, second.embedding) < SAME_SUBJECT_SIMILARITY:
            continue
        if disagreements(values_of(first), values_of(second)):
            found.add(frozenset({first.id, second.id}))
    return found


def _cosine(first: object, second: object) -> float:
    a = np.asarray(first, dtype=np.float64)
    b = np.asarray(second, dtype=np.float64)
    norms = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b) / norms if norms else 0.0


def probable_contradictions() -> list[Contradiction]:
    """The active model's probable contradictions, computed once per version of the index."""
    embedding_model = EmbeddingModel.objects.active().first()
    if embedding_model is None:
        return []
    key = f"kb:attention:contradictions:{embedding_model.pk}:{index_version()}"
    found: list[Contradiction] | None = cache.get(key)
    if found is None:
        found = contradictions_compute(embedding_model=embedding_model)
        cache.set(key, found, CACHE_SECONDS)
    return found
