"""Embedding model versions: add one, build its chunks in the background, switch atomically,
drop the old one.

Search reads exactly one model per query (the active one, by id, in the SQL), so a switch is a
single state change in one transaction and no search can see two models. A new model serves
nothing until every document has current chunks in it; while it builds, every edit is indexed
into both models (``EmbeddingModel.objects.indexing()``), so coverage cannot fall behind. The
old model's chunks stay until ``embedding_model_drop``: switching back is possible until then.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import structlog
from django.db import connection, transaction
from django.db.models import Exists, F, OuterRef
from django.utils import timezone

from kb.chunking import CHUNKER_VERSION
from kb.embedders import Embedder, embedder_for
from kb.models import Document, DocumentIndexState, EmbeddingModel
from kb.services.indexing import (
    Progress,
    chunks_embed,
    chunks_replace,
    document_chunk,
    embedding_model_register,
)

log = structlog.get_logger("groundwork.kb")

BUILD_BATCH_DOCUMENTS = 32
# How often a build re-touches the pending rows it will reach: well inside the sweep's default
# two minutes, so the sweep never resends what the build is about to do.
TOUCH_PENDING_SECONDS = 30.0


class EmbeddingModelError(RuntimeError):
    """A model operation that cannot be done as asked; the message says why and what to do."""


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


def _current_states(model: EmbeddingModel):  # -> QuerySet[DocumentIndexState]
    return DocumentIndexState.objects.filter(
        embedding_model=model,
        status=DocumentIndexState.Status.INDEXED,
        indexed_hash=F("document__content_hash"),
        chunker_version=CHUNKER_VERSION,
    )


def embedding_model_coverage(*, model: EmbeddingModel) -> Coverage:
    return Coverage(
        documents=Document.objects.count(),
        indexed=_current_states(model).count(),
        failed=DocumentIndexState.objects.filter(
            embedding_model=model, status=DocumentIndexState.Status.FAILED
        ).count(),
    )


def embedding_model_add(*, embedder: Embedder) -> EmbeddingModel:
    """Register ``embedder``'s model and start building it in the background.

    The first model of a database becomes active at once; any later one is ``building``: every
    document is marked pending for it in this transaction, and the build task is sent when it
    commits (if the broker is down, the sweep sends per-document tasks for the pending rows).
    Adding a retired model again rebuilds what changed since it served.
    """
    model = embedding_model_register(embedder=embedder)
    with transaction.atomic():
        model.refresh_from_db()
        if model.state == EmbeddingModel.State.RETIRED:
            model.state = EmbeddingModel.State.BUILDING
            model.retired_at = None
            model.save(update_fields=["state", "retired_at"])
        if model.state == EmbeddingModel.State.BUILDING:
            _mark_documents_pending(model)
            model_id = model.pk
            transaction.on_commit(lambda: _enqueue_build(model_id))
    log.info("embedding_model_added", key=model.key, state=model.state)
    return model


def _mark_documents_pending(model: EmbeddingModel) -> None:
    """A pending state row for every document not already current in ``model``."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO kb_documentindexstate
                (document_id, embedding_model_id, status, indexed_hash, chunker_version,
                 chunk_count, error, attempts, queued_at, updated_at)
            SELECT id, %s, 'pending', '', '', 0, '', 0, now(), now() FROM kb_document
            ON CONFLICT (document_id, embedding_model_id) DO NOTHING
            """,
            [model.pk],
        )
    stale = DocumentIndexState.objects.filter(embedding_model=model).exclude(
        pk__in=_current_states(model).values("pk")
    )
    stale.update(status=DocumentIndexState.Status.PENDING, attempts=0, error="")


def _enqueue_build(model_id: int) -> None:
    from kb.tasks import embedding_model_build_task

    try:
        embedding_model_build_task.apply_async(
            args=[model_id],
            retry=True,
            retry_policy={"max_retries": 1, "interval_start": 0.2, "interval_step": 0.5},
        )
    except Exception as exc:  # the pending rows stay; the sweep sends them one by one
        log.warning("embedding_model_build_enqueue_failed", model_id=model_id, error=str(exc))


@dataclass
class BuildReport:
    key: str
    indexed: int = 0
    stale: int = 0  # edited while being embedded: the edit's own task indexes the new text
    failed: list[str] = field(default_factory=list)
    seconds: float = 0.0
    coverage: Coverage | None = None

    def summary(self) -> str:
        return (
            f"{self.key}: {self.indexed} documents indexed, {self.stale} left to their edits, "
            f"{len(self.failed)} failed in {self.seconds:.1f} s; coverage {self.coverage}"
        )


def embedding_model_build(
    *,
    model_id: int,
    batch_documents: int = BUILD_BATCH_DOCUMENTS,
    progress: Progress | None = None,
) -> BuildReport:
    """Index every document that is not current in the model, a batch of documents per
    embedder call. Idempotent: a second run, or one after a crash, does only what is left.

    Raises ``EmbeddingError`` when the embedder fails (the task retries later; the pending rows
    also stay visible to the sweep).
    """
    started = time.perf_counter()
    model = EmbeddingModel.objects.get(pk=model_id)
    report = BuildReport(key=model.key)
    if model.state == EmbeddingModel.State.RETIRED:
        report.coverage = embedding_model_coverage(model=model)
        return report
    embedder = embedder_for(model.key)
    current = _current_states(model).filter(document=OuterRef("pk"))
    todo = Document.objects.filter(~Exists(current)).order_by("pk")
    total = todo.count()
    done = 0
    # Walk the documents once, in pk order: each one left behind is current, failed or edited
    # meanwhile (and then its edit's own task indexes it), so none needs another look, and a
    # batch query never rescans the documents already done.
    after_pk = 0
    touched_at = -math.inf
    while batch := list(
        todo.filter(pk__gt=after_pk).only("pk", "path", "title", "body", "content_hash")[
            :batch_documents
        ]
    ):
        after_pk = batch[-1].pk
        if time.monotonic() - touched_at >= TOUCH_PENDING_SECONDS:
            # Keep the sweep off rows this build is about to reach; if the build dies they age
            # and the sweep takes them over. Every pending row is rewritten, so not per batch.
            DocumentIndexState.objects.filter(
                embedding_model=model, status=DocumentIndexState.Status.PENDING
            ).update(updated_at=timezone.now())
            touched_at = time.monotonic()
        chunked = []
        for document in batch:
            try:
                chunked.append(
                    (
                        document,
                        document_chunk(title=document.title, body=document.body, embedder=embedder),
                    )
                )
            except ValueError as exc:
                report.failed.append(document.path)
                _state_failed(document, model, f"cannot be chunked: {exc}")
        embedded = chunks_embed(
            documents=[chunks for _, chunks in chunked], embedder=embedder, embedding_model=model
        )
        for (document, _), chunks in zip(chunked, embedded, strict=True):
            with transaction.atomic():
                locked = (
                    Document.objects.select_for_update()
                    .only("pk", "path", "content_hash")
                    .filter(pk=document.pk)
                    .first()
                )
                if locked is None or locked.content_hash != chunks.content_hash:
                    report.stale += 1
                    continue
                chunks_replace(document=locked, embedding_model=model, chunks=chunks)
            report.indexed += 1
        done += len(batch)
        if progress is not None:
            progress(min(done, total), total)
    report.seconds = time.perf_counter() - started
    report.coverage = embedding_model_coverage(model=model)
    log.info(
        "embedding_model_built",
        key=model.key,
        indexed=report.indexed,
        stale=report.stale,
        failed=len(report.failed),
        seconds=round(report.seconds, 2),
        coverage=str(report.coverage),
    )
    return report


def _state_failed(document: Document, model: EmbeddingModel, error: str) -> None:
    DocumentIndexState.objects.update_or_create(
        document=document,
        embedding_model=model,
        defaults={"status": DocumentIndexState.Status.FAILED, "error": error[:2000]},
    )
    log.warning("document_index_failed", path=document.path, model=model.key, error=error[:200])


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
