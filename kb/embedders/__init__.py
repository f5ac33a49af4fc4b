"""Embedders, one module per provider; the configured one is built once per process here."""

from __future__ import annotations

import functools

from django.conf import settings

from kb.embedders.base import Embedder, EmbeddingError

__all__ = ["Embedder", "EmbeddingError", "get_embedder"]


@functools.cache
def get_embedder() -> Embedder:
    """The embedder named by ``settings.EMBEDDING_PROVIDER``, loaded once per process."""
    provider = settings.EMBEDDING_PROVIDER
    if provider == "local":
        from kb.embedders.local import LocalMiniLMEmbedder

        return LocalMiniLMEmbedder(
            batch_size=settings.EMBEDDING_BATCH_SIZE, threads=settings.LOCAL_EMBEDDER_THREADS
        )
    raise EmbeddingError(f"unknown embedding provider {provider!r}")
