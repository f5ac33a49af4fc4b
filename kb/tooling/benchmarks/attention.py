"""What the contradiction list costs at a few thousand chunks: the sample corpus, indexed, then
grown by noisy copies of its pages (each copy's vectors moved off the original by gaussian noise,
so a copy is near its original as a restated passage is, not identical to it)."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

import numpy as np
from django.db import connection

from kb.attention.contradictions import contradictions_compute, similar_passage_pairs
from kb.models import Chunk, EmbeddingModel, vector_literal

# Noise norm relative to a vector's norm: the copy sits at cosine ~0.91 from its original,
# about the similarity of the corpus's closest passages on two pages (0.82-0.90).
NOISE_RATIO = 0.45


@dataclass(frozen=True)
class Timing:
    chunks: int
    pairs: int
    contradictions: int
    median_ms: float


def pages_copy(*, embedding_model: EmbeddingModel, copy_number: int, seed: int = 0) -> None:
    """One more copy of every original page (path ``copyN/<path>``) and its chunks."""
    rng = np.random.default_rng(seed + copy_number)
    prefix = f"copy{copy_number}/"
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO kb_document (path, title, category, audience, status, superseded_by_id,
                updated_on, review_by, body, content_hash, created_at, modified_at, origin,
                sync_folder, synced_file_hash, synced_row_hash, synced_status,
                synced_superseded_by, aliases, metadata)
            SELECT %s || path, title, category, audience, status, NULL, updated_on, review_by,
                body, content_hash, now(), now(), 'admin', '', '', '', '', '', '{}', metadata
            FROM kb_document WHERE path NOT LIKE 'copy%%' AND superseded_by_id IS NULL
            """,
            [prefix],
        )
        originals = Chunk.objects.filter(embedding_model=embedding_model).exclude(
            document__path__startswith="copy"
        )
        rows = []
        for chunk in originals.select_related("document"):
            vector = np.asarray(chunk.embedding, dtype=np.float64)
            noise = rng.normal(0.0, 1.0 / np.sqrt(len(vector)), size=vector.shape)
            moved = vector + NOISE_RATIO * np.linalg.norm(vector) * noise
            rows.append((prefix + chunk.document.path, chunk, vector_literal(moved.tolist())))
        cursor.executemany(
            """
            INSERT INTO kb_chunk (document_id, embedding_model_id, ordinal, heading_path, text,
                char_start, char_end, token_count, embedding, text_hash)
            SELECT d.id, %s, %s, %s, %s, %s, %s, %s, %s::vector, ''
            FROM kb_document d WHERE d.path = %s
            """,
            [
                (embedding_model.pk, c.ordinal, c.heading_path, c.text, c.char_start,
                 c.char_end, c.token_count, vector, path)
                for path, c, vector in rows
            ],
        )  # fmt: skip
        cursor.execute("ANALYZE kb_chunk")
        cursor.execute("ANALYZE kb_document")


def contradictions_time(*, embedding_model: EmbeddingModel, repeats: int) -> Timing:
    """Median wall time of computing the list (the SQL and the value comparison), uncached."""
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        found = contradictions_compute(embedding_model=embedding_model)
        seconds.append(time.perf_counter() - started)
    return Timing(
        chunks=Chunk.objects.filter(embedding_model=embedding_model).count(),
        pairs=len(similar_passage_pairs(embedding_model=embedding_model)),
        contradictions=len(found),
        median_ms=statistics.median(seconds) * 1000,
    )
