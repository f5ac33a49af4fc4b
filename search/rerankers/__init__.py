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
        from kb.voyage import VoyageAPI
        from search.rerankers.voyage import VoyageReranker

        api = VoyageAPI(
            api_key=settings.VOYAGE_API_KEY,
            base_url=settings.VOYAGE_BASE_URL,
            timeout=settings.VOYAGE_TIMEOUT,
            max_retries=settings.VOYAGE_MAX_RETRIES,
            total_timeout=settings.VOYAGE_TOTAL_TIMEOUT,
        )
        return VoyageReranker(api=api, model=settings.VOYAGE_RERANK_MODEL)
    return None
