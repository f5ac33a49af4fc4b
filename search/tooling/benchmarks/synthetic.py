"""A synthetic index at scale, built from the sample corpus.

Chunk texts are the corpus's own sentences (so the GIN index sees real vocabulary and
identifiers) and vectors are mixtures of the corpus's real embeddings plus noise (so HNSW sees the
clustered geometry of real embeddings; uniform random vectors make it look unrealistically bad
or good). Everything is written with set-based SQL and binary COPY: 100k chunks load in seconds.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from django.db.backends.utils import CursorWrapper

from kb.embedders import Embedder
from kb.models import EmbeddingModel
from kb.parsing import parse_document
from kb.services import document_chunk
from kb.tooling.benchmarking import BenchmarkError
from search.keywords import keyword_query

CHUNKS_PER_DOCUMENT = 10
# Noise norm relative to the mixture's norm. Measured: a question's best synthetic chunk sits at
# median cosine 0.57 (0.56 against the real corpus), a chunk's nearest neighbour at 0.81.
NOISE_RATIO = 0.45


@dataclass(frozen=True)
class SeedChunk:
    """A real chunk of the sample corpus: the source of synthetic text and vectors."""

    category: str
    title: str
    heading_path: str
    sentences: list[str]
    embedding_text: str  # exactly what kb_sync embeds for this chunk


def synthetic_vectors(
    seed_vectors: np.ndarray, count: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``count`` unit vectors, each a random mixture of 2-3 real embeddings plus gaussian noise.

    Returns the vectors and, per vector, its heaviest and second-heaviest seed: the chunk's
    text is drawn from those seeds' sentences, so both legs agree on what a chunk is about.
    """
    picks = rng.integers(0, len(seed_vectors), size=(count, 3))
    weights = rng.dirichlet([1.0, 1.0, 1.0], size=count)
    weights[rng.random(count) < 0.5, 2] = 0.0  # half the vectors mix two seeds, half three
    weights /= weights.sum(axis=1, keepdims=True)
    mixed = np.einsum("nk,nkd->nd", weights, seed_vectors[picks])
    dims = seed_vectors.shape[1]
    noise = rng.normal(0.0, 1.0 / np.sqrt(dims), size=mixed.shape)
    vectors = mixed + NOISE_RATIO * np.linalg.norm(mixed, axis=1, keepdims=True) * noise
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    order = np.argsort(-weights, axis=1)
    rows = np.arange(count)
    return vectors.astype(np.float32), picks[rows, order[:, 0]], picks[rows, order[:, 1]]


def seed_chunks(corpus: Path, embedder: Embedder) -> list[SeedChunk]:
    seeds = []
    for path in sorted(corpus.rglob("*.md")):
        document = parse_document(path=path.relative_to(corpus).as_posix(), raw=path.read_bytes())
        chunked = document_chunk(title=document.title, body=document.body, embedder=embedder)
        for draft, embedding_text in zip(chunked.drafts, chunked.embedding_texts(), strict=True):
            sentences = [
                " ".join(part.split())
                for part in re.split(r"(?<=[.!?])\s+|\n+", draft.text)
                if part.strip()
            ]
            if sentences:
                seeds.append(
                    SeedChunk(
                        category=document.category,
                        title=document.title,
                        heading_path=draft.heading_path,
                        sentences=sentences,
                        embedding_text=embedding_text,
                    )
                )
    if not seeds:
        raise BenchmarkError(f"no Markdown pages under {corpus}")
    return seeds


def corpus_identifiers(seeds: list[SeedChunk]) -> list[str]:
    """Codes, event names and headers the sample corpus really uses (``invoice.paid``...)."""
    found = {
        identifier
        for seed in seeds
        for sentence in seed.sentences
        for identifier in keyword_query(sentence).identifiers
    }
    return sorted(found) or ["invoice.paid"]


def documents_insert(cursor: CursorWrapper, seeds: list[SeedChunk], count: int) -> int:
    """``count`` documents in one statement; returns the first id (ids are consecutive)."""
    cursor.execute(
        """
        INSERT INTO kb_document (path, title, category, audience, status, updated_on, body,
                                 content_hash, created_at, modified_at, origin, sync_folder,
                                 synced_file_hash, synced_row_hash, synced_status,
                                 synced_superseded_by, aliases, metadata)
        SELECT format('bench/%%s/page-%%s.md', category[1 + g %% cardinality(category)], g),
               title[1 + g %% cardinality(title)] || ' (' || g || ')',
               category[1 + g %% cardinality(category)],
               CASE WHEN g %% 20 IN (3, 13) THEN 'internal' ELSE 'public' END,
               CASE WHEN g %% 20 = 7 THEN 'retired' ELSE 'published' END,
               DATE '2025-01-01' + g %% 365, 'Synthetic page ' || g,
               encode(sha256(g::text::bytea), 'hex'), now(), now(), 'import', '', '', '', '', '',
               '{}'::text[], '{}'::jsonb
        FROM generate_series(0, %s - 1) AS g,
             (SELECT %s::text[] AS title, %s::text[] AS category) AS names
        ORDER BY g
        """,
        [
            count,
            [seed.title for seed in seeds],
            sorted({seed.category or "general" for seed in seeds}),
        ],
    )
    cursor.execute("SELECT min(id) FROM kb_document")
    return cursor.fetchone()[0]


def seeds_load(cursor: CursorWrapper, seeds: list[SeedChunk]) -> None:
    numbers, ordinals, sentences = [], [], []
    for number, seed in enumerate(seeds):
        for ordinal, sentence in enumerate(seed.sentences):
            numbers.append(number)
            ordinals.append(ordinal)
            sentences.append(sentence)
    cursor.execute(
        "CREATE TEMP TABLE bench_vector "
        "(row_number integer, seed_a integer, seed_b integer, embedding vector)"
    )
    cursor.execute(
        """
        CREATE TEMP TABLE bench_seed AS
        SELECT s.seed, h.heading_path, array_agg(s.sentence ORDER BY s.ordinal) AS sentences
        FROM unnest(%s::int[], %s::int[], %s::text[]) AS s (seed, ordinal, sentence)
        JOIN unnest(%s::text[]) WITH ORDINALITY AS h (heading_path, seed) ON h.seed = s.seed + 1
        GROUP BY s.seed, h.heading_path
        """,
        [numbers, ordinals, sentences, [seed.heading_path for seed in seeds]],
    )
    cursor.execute("ALTER TABLE bench_seed ADD PRIMARY KEY (seed)")


def vectors_copy(
    cursor: CursorWrapper,
    vectors: np.ndarray,
    seed_a: np.ndarray,
    seed_b: np.ndarray,
    *,
    first_row: int,
) -> None:
    """One batch of vectors into ``bench_vector`` by binary COPY, packed by numpy.

    Binary COPY rows are (int16 field count, then int32 length + bytes per field), big-endian;
    pgvector's binary ``vector`` is (uint16 dimensions, uint16 0, float4 values).
    """
    count, dims = vectors.shape
    row = np.dtype(
        [
            ("fields", ">i2"),
            ("row_length", ">i4"),
            ("row_number", ">i4"),
            ("seed_a_length", ">i4"),
            ("seed_a", ">i4"),
            ("seed_b_length", ">i4"),
            ("seed_b", ">i4"),
            ("vector_length", ">i4"),
            ("dimensions", ">u2"),
            ("unused", ">u2"),
            ("vector", ">f4", (dims,)),
        ]
    )
    records = np.zeros(count, dtype=row)
    records["fields"] = 4
    records["row_length"] = records["seed_a_length"] = records["seed_b_length"] = 4
    records["row_number"] = np.arange(first_row, first_row + count)
    records["seed_a"], records["seed_b"] = seed_a, seed_b
    records["vector_length"] = 4 + 4 * dims
    records["dimensions"] = dims
    records["vector"] = vectors
    header = b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0)
    cursor.execute("TRUNCATE bench_vector")
    with cursor.cursor.copy(
        "COPY bench_vector (row_number, seed_a, seed_b, embedding) FROM STDIN (FORMAT BINARY)"
    ) as copy:
        copy.write(header + records.tobytes() + struct.pack(">h", -1))


def chunks_insert(
    cursor: CursorWrapper,
    model: EmbeddingModel,
    identifiers: list[str],
    *,
    first_document: int,
    batch: int,
) -> None:
    """The batch in ``bench_vector`` as chunks: 3-5 sentences of the main seed, 1-2 of the
    second, and in some chunks an error code (E1234) or a real identifier of the corpus.

    Each seed sentence and heading recurs in hundreds of chunks, so every term is at least that
    common; error codes are redrawn per chunk so that, as in a real help center, a pasted code
    matches a handful of chunks rather than thousands.
    """
    cursor.execute(
        rf"""
        WITH drafted AS MATERIALIZED (
            SELECT v.row_number, v.embedding, a.heading_path,
                   concat_ws(' ',
                       a.sentences[1 + floor(random() * cardinality(a.sentences))::int],
                       a.sentences[1 + floor(random() * cardinality(a.sentences))::int],
                       a.sentences[1 + floor(random() * cardinality(a.sentences))::int],
                       CASE WHEN random() < 0.7 THEN
                           a.sentences[1 + floor(random() * cardinality(a.sentences))::int] END,
                       CASE WHEN random() < 0.4 THEN
                           a.sentences[1 + floor(random() * cardinality(a.sentences))::int] END,
                       b.sentences[1 + floor(random() * cardinality(b.sentences))::int],
                       CASE WHEN random() < 0.5 THEN
                           b.sentences[1 + floor(random() * cardinality(b.sentences))::int] END,
                       CASE WHEN random() < 0.25 THEN
                           'If you see error E' || (1000 + floor(random() * 9000))::int
                           || ', check the request and retry.' END,
                       CASE WHEN random() < 0.2 THEN
                           'This also applies to '
                           || (%s::text[])[1 + floor(random() * %s)::int] || '.' END
                   ) AS text
            FROM bench_vector v
            JOIN bench_seed a ON a.seed = v.seed_a
            JOIN bench_seed b ON b.seed = v.seed_b
        )
        INSERT INTO kb_chunk (document_id, embedding_model_id, ordinal, heading_path, text,
                              char_start, char_end, token_count, embedding)
        SELECT %s + row_number / {CHUNKS_PER_DOCUMENT}, {int(model.pk)},
               row_number %% {CHUNKS_PER_DOCUMENT},
               regexp_replace(heading_path, '\mE[0-9]{{4}}\M', drawn.code, 'g'),
               regexp_replace(text, '\mE[0-9]{{4}}\M', drawn.code, 'g'),
               0, length(text), length(text) / 4, embedding
        FROM drafted
        CROSS JOIN LATERAL (
            SELECT 'E' || (1000 + floor(random() * 9000))::int AS code WHERE row_number >= 0
        ) AS drawn
        """,
        [identifiers, len(identifiers), first_document],
    )
    if cursor.rowcount != batch:
        raise BenchmarkError(f"inserted {cursor.rowcount} chunks, expected {batch}")
