"""Embedders, one module per provider, built here and only here, once per process and model.

An embedding model's key (``local/all-MiniLM-L6-v2``, ``voyage/voyage-3.5``) names both its
vector space in the database and the embedder that produces it: ``embedder_for`` turns one into
the other, so indexing a model that is being built and querying the active one never need an
``if provider == ...`` anywhere else.
"""

from __future__ import annotations

import functools

from django.conf import settings

from kb.embedders.base import Embedder, EmbeddingError

__all__ = ["Embedder", "EmbeddingError", "active_embedder", "embedder_for", "get_embedder"]

LOCAL_MODEL_KEY = "local/all-MiniLM-L6-v2"
# Feature hashing, for tests and benchmarks of the indexing machinery only (kb.embedders.hashing).
HASHING_MODEL_KEY = "test/hashing-64"
# The overall deadline (seconds, retries included) of a Voyage call that embeds documents: nobody
# waits on indexing, so a slow spell is better outlasted than failed. Queries keep
# VOYAGE_TOTAL_TIMEOUT, a customer's wait.
VOYAGE_INDEXING_TOTAL_TIMEOUT = 60.0


@functools.cache
def embedder_for(key: str) -> Embedder:
    """The embedder for an embedding model key, loaded once per process.

    One cached object serves both indexing and queries, so anything that must differ between
    them (the Voyage deadline) is carried inside it, never fixed when it is built."""
    provider, _, model = key.partition("/")
    if key == LOCAL_MODEL_KEY:
        from kb.embedders.local import LocalMiniLMEmbedder

        return LocalMiniLMEmbedder(
            batch_size=settings.EMBEDDING_BATCH_SIZE,
            batch_tokens=settings.EMBEDDING_BATCH_TOKENS,
            threads=settings.LOCAL_EMBEDDER_THREADS,
        )
    if key == HASHING_MODEL_KEY:
        if settings.PRODUCTION:
            raise EmbeddingError(f"{key} is a test embedder; production refuses it")
        from kb.embedders.hashing import HashingEmbedder

        return HashingEmbedder()
    if provider == "voyage" and model:
        if not settings.VOYAGE_API_KEY:
            raise EmbeddingError(f"{key} needs VOYAGE_API_KEY")
        from kb.embedders.voyage import VoyageEmbedder
        from kb.voyage import voyage_api_from_settings

        return VoyageEmbedder(
            api=voyage_api_from_settings(min_total_timeout=VOYAGE_INDEXING_TOTAL_TIMEOUT),
            query_api=voyage_api_from_settings(),
            model=model,
        )
    raise EmbeddingError(f"no embedder for model {key!r}: use {LOCAL_MODEL_KEY} or voyage/<model>")


def get_embedder() -> Embedder:
    """The embedder of ``settings.EMBEDDING_MODEL``: the model a fresh database starts with."""
    return embedder_for(settings.EMBEDDING_MODEL)


def active_embedder() -> Embedder:
    """The embedder of the active embedding model (the configured one before any is active)."""
    from kb.models import EmbeddingModel

    active = EmbeddingModel.objects.active().values_list("key", flat=True).first()
    return embedder_for(active) if active else get_embedder()
