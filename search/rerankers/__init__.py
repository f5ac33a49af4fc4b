"""Rerankers, one module per provider; the configured one is built once per process here."""

from __future__ import annotations

import functools

from django.conf import settings

from search.rerankers.base import Reranker, RerankError

__all__ = ["RerankError", "Reranker", "get_reranker"]


@functools.cache
def get_reranker() -> Reranker | None:
    """The reranker named by ``settings.RERANKER``; None keeps the fused order."""
    choice = settings.RERANKER
    if choice == "voyage":
        from kb.voyage import voyage_api_from_settings
        from search.rerankers.voyage import VoyageReranker

        return VoyageReranker(api=voyage_api_from_settings(), model=settings.VOYAGE_RERANK_MODEL)
    if choice == "local":
        from search.rerankers.local import LocalRanker

        return LocalRanker()
    return None
