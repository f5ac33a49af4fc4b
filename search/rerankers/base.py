"""The reranker interface: order a question's candidate passages by how well they answer it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable


class RerankError(RuntimeError):
    """The reranker failed or answered something unusable; retrieval keeps the fused order."""


@runtime_checkable
class Reranker(Protocol):
    name: str  # "voyage/rerank-2.5", "local/...", shown in the debug view

    def rerank(self, *, question: str, passages: Sequence[str]) -> list[float]:
        """One relevance score per passage, in the order given; higher is better."""
        ...
