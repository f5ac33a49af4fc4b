"""HNSW recall against exact search: of the ten visible chunks truly nearest a query, how many
the vector leg's index scan returns, at each ``hnsw.ef_search`` tried.

The exact answer is computed in numpy over every chunk the leg may return (one model, published
pages of the public audiences), streamed out of PostgreSQL once by binary COPY with the leg's
own visibility condition: one pass over the table instead of a sequential scan per query.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from django.db import connection

from kb.models import EmbeddingModel, vector_literal
from kb.tooling.benchmarking import BenchmarkError, percentiles
from search.sql import visible_chunks_sql

RECALL_AT = 10
LEG_DEPTH = 40  # what hybrid_search's vector leg fetches before it ranks by distance
COPY_ROWS = 20_000
WARM_UP = 10  # vectors scored per numpy step while streaming

Percentiles = dict[int, float]


@dataclass(frozen=True)
class RecallPoint:
    ef_search: int
    recall: float  # mean recall@10 over the queries
    worst: float  # the lowest recall@10 of one query
    latency: Percentiles  # the vector leg alone, ms


def exact_neighbours(
    model: EmbeddingModel,
    queries: np.ndarray,
    audiences: Sequence[str],
    *,
    progress: Callable[[str], None],
) -> np.ndarray:
    """The ids of the ``RECALL_AT`` visible chunks nearest each query by cosine distance, shape
    (queries, RECALL_AT), found by scoring every visible chunk."""
    dims = int(model.dimensions)
    queries = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    row = np.dtype(
        [
            ("fields", ">i2"),
            ("id_length", ">i4"),
            ("id", ">i8"),
            ("vector_length", ">i4"),
            ("dimensions", ">u2"),
            ("unused", ">u2"),
            ("vector", ">f4", (dims,)),
        ]
    )
    best_ids = np.full((len(queries), RECALL_AT), -1, dtype=np.int64)
    best_scores = np.full((len(queries), RECALL_AT), -np.inf, dtype=np.float32)
    scanned = 0

    def score(block: bytes) -> None:
        nonlocal best_ids, best_scores, scanned
        records = np.frombuffer(block, dtype=row)
        if not (records["dimensions"] == dims).all():
            raise BenchmarkError(f"a chunk of {model.key} is not {dims}-dimensional")
        vectors = records["vector"].astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        scores = queries.astype(np.float32) @ vectors.T  # (queries, rows)
        ids = np.broadcast_to(records["id"].astype(np.int64), scores.shape)
        all_scores = np.concatenate([best_scores, scores], axis=1)
        all_ids = np.concatenate([best_ids, ids], axis=1)
        keep = np.argpartition(-all_scores, RECALL_AT - 1, axis=1)[:, :RECALL_AT]
        best_scores = np.take_along_axis(all_scores, keep, axis=1)
        best_ids = np.take_along_axis(all_ids, keep, axis=1)
        scanned += len(records)
        if scanned % (10 * COPY_ROWS) < len(records):
            progress(f"  exact search: {scanned:,} chunks scored")

    header_size = 19  # PGCOPY signature, flags, header extension length
    buffer = bytearray()
    header_seen = False
    with connection.cursor() as cursor:
        statement = (
            f"COPY (SELECT c.id, c.embedding::vector({dims}) FROM kb_chunk c "
            f"JOIN kb_document d ON d.id = c.document_id "
            f"WHERE {visible_chunks_sql(model)}) TO STDOUT (FORMAT BINARY)"
        )
        # COPY takes no parameters: the audiences are a literal array of known words.
        literal = cursor.mogrify("%s::text[]", [list(audiences)])
        with cursor.cursor.copy(statement.replace("%(audiences)s::text[]", literal)) as copy:
            for data in copy:
                buffer += data
                if not header_seen and len(buffer) >= header_size:
                    del buffer[:header_size]
                    header_seen = True
                whole = (len(buffer) // row.itemsize) * row.itemsize
                if whole >= COPY_ROWS * row.itemsize:
                    score(bytes(buffer[:whole]))
                    del buffer[:whole]
    trailer = 2  # int16 -1
    whole = ((len(buffer) - trailer) // row.itemsize) * row.itemsize
    if whole:
        score(bytes(buffer[:whole]))
    if scanned < RECALL_AT:
        raise BenchmarkError(f"only {scanned} visible chunks: too few to measure recall")
    return best_ids


def hnsw_neighbours(
    model: EmbeddingModel,
    query: np.ndarray,
    audiences: Sequence[str],
) -> list[int]:
    """The top ``RECALL_AT`` of the vector leg as ``hybrid_search`` runs it: ``LEG_DEPTH``
    chunks from the HNSW scan (iterative, filtered), ranked by distance."""
    dims = int(model.dimensions)
    text = vector_literal(query.tolist())
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH vector_hits AS (
                SELECT c.id, c.embedding::vector({dims}) <=> %(vector)s::vector({dims}) AS distance
                FROM kb_chunk c JOIN kb_document d ON d.id = c.document_id
                WHERE {visible_chunks_sql(model)}
                ORDER BY c.embedding::vector({dims}) <=> %(vector)s::vector({dims})
                LIMIT {LEG_DEPTH}
            )
            SELECT id FROM vector_hits ORDER BY distance, id LIMIT {RECALL_AT}
            """,
            {"vector": text, "audiences": list(audiences)},
        )
        return [row[0] for row in cursor.fetchall()]


def recall_measure(
    model: EmbeddingModel,
    queries: np.ndarray,
    audiences: Sequence[str],
    *,
    ef_search: Sequence[int],
    progress: Callable[[str], None],
) -> list[RecallPoint]:
    """Recall@10 of the vector leg against exact search, and its latency, at each ``ef_search``
    (set on this connection for the measurement, then restored)."""
    exact = exact_neighbours(model, queries, audiences, progress=progress)
    points = []
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('hnsw.ef_search')")
        configured = cursor.fetchone()[0]
        try:
            for breadth in ef_search:
                cursor.execute("SELECT set_config('hnsw.ef_search', %s, false)", [str(breadth)])
                for query in queries[:WARM_UP]:  # the index's pages into the cache, untimed
                    hnsw_neighbours(model, query, audiences)
                recalls, timings = [], []
                for query, truth in zip(queries, exact, strict=True):
                    started = time.perf_counter()
                    found = hnsw_neighbours(model, query, audiences)
                    timings.append((time.perf_counter() - started) * 1000)
                    recalls.append(len(set(found) & set(truth.tolist())) / RECALL_AT)
                point = RecallPoint(
                    ef_search=breadth,
                    recall=float(np.mean(recalls)),
                    worst=float(np.min(recalls)),
                    latency=percentiles(timings),
                )
                progress(
                    f"  ef_search {breadth}: recall@{RECALL_AT} {point.recall:.3f} "
                    f"(worst {point.worst:.1f}), vector leg p50 {point.latency[50]:.1f} ms"
                )
                points.append(point)
        finally:
            cursor.execute("SELECT set_config('hnsw.ef_search', %s, false)", [configured])
    return points
