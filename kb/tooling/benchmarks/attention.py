"""What the contradiction list costs at a few thousand chunks: the sample corpus, indexed, then
grown by noisy copies of its pages (each copy's vectors moved off the original by gaussian noise,
so a copy is near its original as a restated passage is, not identical to it)."""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from django.db import connection

from kb.attention.contradictions import contradictions_compute, similar_passage_pairs
from kb.models import Chunk, EmbeddingModel, vector_literal
from kb.tooling.benchmarking import BenchmarkError

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


# --- Precision: the offered pairs, and how many of them a steward judged true ------------------


@dataclass(frozen=True)
class OfferedPair:
    """One contradiction the page offers, as a labels file names it: each passage by its page
    path and chunk ordinal (stable for an unchanged corpus), with what was marked."""

    key: str  # "older path#ordinal | newer path#ordinal"
    older: str  # "path > heading path"
    newer: str
    kinds: str
    older_values: tuple[str, ...]
    newer_values: tuple[str, ...]
    similarity: float
    older_text: str
    newer_text: str


@dataclass(frozen=True)
class Precision:
    offered: int
    true: int
    false: int
    unlabelled: tuple[str, ...]  # keys of offered pairs the labels file does not judge

    @property
    def precision(self) -> float | None:
        judged = self.true + self.false
        return self.true / judged if judged else None


def offered_pairs(*, embedding_model: EmbeddingModel) -> list[OfferedPair]:
    """The pairs the attention page lists for this model's index, most similar first."""
    ordinals = dict(
        Chunk.objects.filter(embedding_model=embedding_model).values_list("id", "ordinal")
    )
    pairs = []
    for row in contradictions_compute(embedding_model=embedding_model):
        first = f"{row.first.path}#{ordinals.get(row.first.chunk_id)}"
        second = f"{row.second.path}#{ordinals.get(row.second.chunk_id)}"
        pairs.append(
            OfferedPair(
                key=f"{first} | {second}",
                older=f"{row.first.path} > {row.first.heading_path}",
                newer=f"{row.second.path} > {row.second.heading_path}",
                kinds=row.kinds,
                older_values=tuple(s.text for s in row.first_segments if s.marked),
                newer_values=tuple(s.text for s in row.second_segments if s.marked),
                similarity=round(row.similarity, 3),
                older_text=row.first.text,
                newer_text=row.second.text,
            )
        )
    return pairs


def labels_read(path: Path) -> dict[str, bool]:
    """A labels file (one JSON object a line: ``{"key", "contradiction": bool, "why"}``) as
    key → judged a contradiction. A line without those fields is refused, naming the line."""
    labels: dict[str, bool] = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            case = json.loads(line)
            key, verdict = case["key"], case["contradiction"]
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise BenchmarkError(
                f"{path}:{number}: expected {{'key', 'contradiction', 'why'}}: {exc}"
            ) from exc
        if not isinstance(verdict, bool):
            raise BenchmarkError(f"{path}:{number}: 'contradiction' must be true or false")
        labels[str(key)] = verdict
    return labels


def precision_of(pairs: Sequence[OfferedPair], labels: dict[str, bool]) -> Precision:
    judged = [labels[pair.key] for pair in pairs if pair.key in labels]
    return Precision(
        offered=len(pairs),
        true=sum(judged),
        false=len(judged) - sum(judged),
        unlabelled=tuple(pair.key for pair in pairs if pair.key not in labels),
    )
