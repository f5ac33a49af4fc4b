"""Content gaps for the doc writers: the questions the help center did not serve
(``assistant.selectors.gap_questions``), grouped by meaning.

A service, not a read: grouping embeds each question it has not seen before and caches the
vector (``GAP_VECTOR_SECONDS``), so a page load embeds only what is new."""

from __future__ import annotations

import datetime
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from django.core.cache import cache
from django.utils import timezone

from assistant.selectors import GapExample, GapQuestion, gap_questions
from kb.embedders import Embedder, get_embedder

# Cosine similarity (all-MiniLM-L6-v2) at which a question joins a group. Measured on 41
# hand-written askings of 13 needs the sample help center does not cover (its "unanswerable"
# eval questions, each with 2-3 rephrasings; tests/integration/test_content_gaps.py), pairwise,
# mean of 5 orders: 0.50 → precision 0.66 / recall 0.56; 0.55 → 0.86 / 0.43; 0.60 → 0.94 / 0.34.
# Precision first: a group that mixes two needs hides one of them, while a need split over two
# rows is still in plain view.
GAP_SIMILARITY = 0.55
GAP_WINDOW = datetime.timedelta(days=30)
# Distinct questions embedded per view: the most asked first. All-MiniLM does ~100/s on 2 cores.
GAP_MAX_QUESTIONS = 500
GAP_EXAMPLES = 5
GAP_REASONS = {
    "not_in_docs": "not in our docs",
    "flagged": "flagged",
    "failed": "failed",
    "thumbs_down": "thumbs down",
}


@dataclass
class ContentGap:
    examples: list[GapExample]  # most asked first
    count: int  # askings in the group
    reasons: dict[str, int] = field(default_factory=dict)  # not_in_docs/flagged/failed/thumbs_down
    last_asked: datetime.datetime | None = None

    @property
    def label(self) -> str:
        return self.examples[0].question

    @property
    def reason_counts(self) -> list[tuple[str, int]]:
        """(label, count) in a fixed order, for display."""
        return [(GAP_REASONS[key], self.reasons[key]) for key in GAP_REASONS if key in self.reasons]


def content_gaps(
    *,
    since: datetime.datetime | None = None,
    similarity: float = GAP_SIMILARITY,
    max_questions: int = GAP_MAX_QUESTIONS,
    embedder: Embedder | None = None,
) -> list[ContentGap]:
    """Questions that got no answer ("not in our docs"), a flagged or failed one, or a thumbs
    down, grouped by meaning, most frequent group first.

    Askings with the same normalised text count as one question; distinct questions are embedded
    and grouped greedily, most asked first: each joins the group whose centroid it is most
    similar to if that reaches ``similarity``, else starts a group. Greedy is enough here: the
    groups are a reading aid for writers, and its order makes the common phrasing the label."""
    since = since or timezone.now() - GAP_WINDOW
    ordered = gap_questions(since=since, limit=max_questions)
    if not ordered:
        return []
    vectors = _unit_rows(
        _question_vectors([q.example.question for q in ordered], embedder or get_embedder())
    )
    groups = _greedy_groups(
        vectors, weights=[q.example.count for q in ordered], similarity=similarity
    )
    gaps = [_gap_of([ordered[index] for index in members]) for members in groups]
    gaps.sort(key=lambda gap: (-gap.count, -(gap.last_asked or since).timestamp()))
    return gaps


def _gap_of(questions: list[GapQuestion]) -> ContentGap:
    """One group's row: its questions' askings and reasons summed, the most asked as examples."""
    gap = ContentGap(examples=[], count=0)
    for question in questions:
        gap.examples.append(question.example)
        gap.count += question.example.count
        for reason, count in question.reasons.items():
            gap.reasons[reason] = gap.reasons.get(reason, 0) + count
        if gap.last_asked is None or question.example.last_asked > gap.last_asked:
            gap.last_asked = question.example.last_asked
    gap.examples = gap.examples[:GAP_EXAMPLES]
    return gap


# A question's vector never changes for one model: the page embeds only questions it has not
# seen, instead of up to GAP_MAX_QUESTIONS on every load (about 5 s on 2 cores).
GAP_VECTOR_SECONDS = 30 * 24 * 3600


def _question_vectors(questions: list[str], embedder: Embedder) -> np.ndarray:
    keys = [
        f"gap-vector:{embedder.key}:{hashlib.sha256(question.encode()).hexdigest()}"
        for question in questions
    ]
    cached = cache.get_many(keys)
    missing = [index for index, key in enumerate(keys) if key not in cached]
    if missing:
        fresh = embedder.embed_documents([questions[index] for index in missing])
        new = {keys[index]: vector.tolist() for index, vector in zip(missing, fresh, strict=True)}
        cache.set_many(new, timeout=GAP_VECTOR_SECONDS)
        cached.update(new)
    return np.asarray([cached[key] for key in keys], dtype=np.float32)


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


def _greedy_groups(
    vectors: np.ndarray, *, weights: Sequence[int], similarity: float
) -> list[list[int]]:
    """Indexes grouped in order: each row joins the most similar centroid at or above
    ``similarity`` (centroids are the count-weighted mean of their members), else starts one."""
    groups: list[list[int]] = []
    sums: list[np.ndarray] = []
    for index, vector in enumerate(vectors):
        best, best_score = -1, similarity
        for group_index, total in enumerate(sums):
            centroid = total / max(float(np.linalg.norm(total)), 1e-12)
            score = float(centroid @ vector)
            if score >= best_score:
                best, best_score = group_index, score
        if best < 0:
            groups.append([index])
            sums.append(vector * weights[index])
        else:
            groups[best].append(index)
            sums[best] = sums[best] + vector * weights[index]
    return groups
