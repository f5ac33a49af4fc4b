"""Embedding models: register one and give it its HNSW index, measure how far its chunks cover
the documents, switch the active one atomically, drop an old one. Building a new model's chunks
is ``model_builds``.

Search reads exactly one model per query (the active one, by id, in the SQL), so a switch is a
single state change in one transaction and no search can see two models. A new model serves
nothing until every document has current chunks in it. The old model's chunks stay until
``embedding_model_drop``: switching back is possible until then.
"""

from __future__ import annotations

from dataclasses import dataclass

import structlog
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from kb.embedders import Embedder
from kb.models import Document, DocumentIndexState, EmbeddingModel

log = structlog.get_logger("groundwork.kb")


class EmbeddingModelError(RuntimeError):
    """A model operation that cannot be done as asked; the message says why and what to do."""


class EmbeddingModelMismatch(RuntimeError):
    """The configured embedder is not the active embedding model: vectors would not compare."""


def embedding_model_register(*, embedder: Embedder) -> EmbeddingModel:
    """Record ``embedder``'s vector space (idempotent) and give it its partial HNSW index.

    The first model registered becomes active; later ones start as ``building``. The index is
    built after the row is committed, ``CONCURRENTLY`` when no transaction is open (a live
    database keeps taking writes to kb_chunk meanwhile), and while the model has no chunks yet.
    """
    with transaction.atomic():
        model, created = EmbeddingModel.objects.get_or_create(
            key=embedder.key,
            defaults={
                "provider": embedder.provider,
                "model_name": embedder.model_name,
                "dimensions": embedder.dimensions,
                "max_input_tokens": embedder.max_input_tokens,
            },
        )
        if model.dimensions != embedder.dimensions:
            raise EmbeddingModelMismatch(
                f"{embedder.key} is registered with {model.dimensions} dimensions but the "
                f"embedder produces {embedder.dimensions}"
            )
        if created and not EmbeddingModel.objects.active().exists():
            model.state = EmbeddingModel.State.ACTIVE
            model.activated_at = timezone.now()
            model.save(update_fields=["state", "activated_at"])
    if created or not hnsw_index_exists(model):
        hnsw_index_create(model)
    if created:
        log.info("embedding_model_registered", key=model.key, state=model.state)
    return model


def embedding_model_for_indexing(*, embedder: Embedder) -> EmbeddingModel:
    """The registered model for ``embedder``; refuses to index into a space search doesn't use."""
    model = embedding_model_register(embedder=embedder)
    if model.state == EmbeddingModel.State.RETIRED:
        raise EmbeddingModelMismatch(
            f"embedding model {model.key} is retired; configure the active model instead"
        )
    return model


def hnsw_index_exists(model: EmbeddingModel) -> bool:
    """True when the model's HNSW index exists and is valid (a failed concurrent build leaves
    an invalid one behind, which queries ignore)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "WHERE c.relname = %s",
            [model.hnsw_index_name],
        )
        row = cursor.fetchone()
    return bool(row and row[0])


def hnsw_index_create(
    model: EmbeddingModel, *, m: int | None = None, ef_construction: int | None = None
) -> None:
    """Build ``model``'s partial HNSW index with graph degree ``m`` and build breadth
    ``ef_construction`` (``HNSW_M`` / ``HNSW_EF_CONSTRUCTION`` unless given: the benchmark
    tries others)."""
    m = settings.HNSW_M if m is None else m
    ef_construction = settings.HNSW_EF_CONSTRUCTION if ef_construction is None else ef_construction
    # Identifiers, the dimension and the parameters are integers we control, never user input.
    definition = (
        f"{model.hnsw_index_name} ON kb_chunk "
        f"USING hnsw ((embedding::vector({int(model.dimensions)})) vector_cosine_ops) "
        f"WITH (m = {int(m)}, ef_construction = {int(ef_construction)}) "
        f"WHERE embedding_model_id = {int(model.pk)}"
    )
    with connection.cursor() as cursor:
        if connection.in_atomic_block:
            # CREATE INDEX refuses to run while deferred foreign-key checks on kb_chunk are
            # queued in this transaction (chunks written earlier in it); run those checks now.
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            cursor.execute(f"CREATE INDEX IF NOT EXISTS {definition}")
            return
        # Outside a transaction the build takes no lock that blocks writes to kb_chunk.
        cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {model.hnsw_index_name}")
        cursor.execute(f"CREATE INDEX CONCURRENTLY {definition}")


@dataclass(frozen=True)
class Coverage:
    """How far a model's chunks cover the documents: only complete coverage may serve."""

    documents: int
    indexed: int  # documents whose chunks in this model match their current text
    failed: int

    @property
    def pending(self) -> int:
        return self.documents - self.indexed - self.failed

    @property
    def complete(self) -> bool:
        return self.indexed == self.documents

    def __str__(self) -> str:
        share = 100.0 * self.indexed / self.documents if self.documents else 100.0
        return (
            f"{self.indexed}/{self.documents} documents ({share:.0f}%), "
            f"{self.pending} pending, {self.failed} failed"
        )


def embedding_model_coverage(*, model: EmbeddingModel) -> Coverage:
    return Coverage(
        documents=Document.objects.count(),
        indexed=DocumentIndexState.objects.current_in(model).count(),
        failed=DocumentIndexState.objects.filter(
            embedding_model=model, status=DocumentIndexState.Status.FAILED
        ).count(),
    )


def embedding_model_activate(*, model: EmbeddingModel) -> EmbeddingModel:
    """Make ``model`` the one search uses, in one transaction; the previous one retires.

    Refused until the model's chunks cover every document: a search must never find a page
    missing because the new model has not reached it yet.
    """
    with transaction.atomic():
        # Lock every model row: two switches at once would otherwise race on "the active one".
        list(EmbeddingModel.objects.select_for_update().order_by("pk"))
        model.refresh_from_db()
        if model.state == EmbeddingModel.State.ACTIVE:
            return model
        if model.state == EmbeddingModel.State.RETIRED:
            raise EmbeddingModelError(
                f"{model.key} is retired and no longer follows edits; "
                f"run 'kb_models add {model.key}' to rebuild it first"
            )
        coverage = embedding_model_coverage(model=model)
        if not coverage.complete:
            raise EmbeddingModelError(
                f"{model.key} is not ready: {coverage}; wait for the build "
                "('kb_models list' shows progress) or fix the failed documents"
            )
        now = timezone.now()
        previous = list(EmbeddingModel.objects.active().values_list("key", flat=True))
        EmbeddingModel.objects.active().update(state=EmbeddingModel.State.RETIRED, retired_at=now)
        model.state = EmbeddingModel.State.ACTIVE
        model.activated_at = now
        model.save(update_fields=["state", "activated_at"])
    log.info("embedding_model_activated", key=model.key, previous=",".join(previous))
    return model


def embedding_model_drop(*, model: EmbeddingModel) -> int:
    """Delete a model that is not serving: its chunks, its index states, its HNSW index.
    Returns how many chunks were deleted."""
    with transaction.atomic():
        locked = EmbeddingModel.objects.select_for_update().get(pk=model.pk)
        if locked.state == EmbeddingModel.State.ACTIVE:
            raise EmbeddingModelError(
                f"{locked.key} is the active model; activate another one before dropping it"
            )
        with connection.cursor() as cursor:
            # Raw SQL: the ORM would load every chunk into Python to delete it.
            cursor.execute("DELETE FROM kb_chunk WHERE embedding_model_id = %s", [locked.pk])
            chunks = cursor.rowcount
            cursor.execute(
                "DELETE FROM kb_documentindexstate WHERE embedding_model_id = %s", [locked.pk]
            )
            cursor.execute(f"DROP INDEX IF EXISTS {locked.hnsw_index_name}")
        locked.delete()
    log.info("embedding_model_dropped", key=model.key, chunks=chunks)
    return chunks


def embedding_model_for_key(key: str) -> EmbeddingModel:
    model = EmbeddingModel.objects.filter(key=key).first()
    if model is None:
        known = ", ".join(EmbeddingModel.objects.values_list("key", flat=True)) or "none"
        raise EmbeddingModelError(f"no embedding model {key!r} (registered: {known})")
    return model
