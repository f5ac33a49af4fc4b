"""The reranker interface: order a question's candidate passages by how well they answer it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from search.rerankers.features import RankingQuestion
from search.results import Hit


class RerankError(RuntimeError):
    """The reranker failed or answered something unusable; retrieval keeps the fused order."""


@runtime_checkable
class Reranker(Protocol):
    name: str  # "voyage/rerank-2.5", "local/...", shown in the debug view
    # Whether a score says how relevant a passage is on a fixed scale (Voyage's relevance in
    # [0, 1]), so the best one can stand for retrieval's confidence; a learned order's scores
    # only compare candidates of one question, and the confidence stays the best cosine.
    scores_relevance: bool

    def rerank(self, *, question: RankingQuestion, hits: Sequence[Hit]) -> list[float]:
        """One score per hit (given in fused order), in the order given; higher is better."""
        ...
