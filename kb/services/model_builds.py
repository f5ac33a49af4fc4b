"""Building a new embedding model's chunks in the background, beside the one serving.

Adding a model marks every document pending for it and sends one build task; while it builds,
every edit is indexed into both models (``EmbeddingModel.objects.indexing()``), so coverage
cannot fall behind, and ``embedding_model_activate`` may switch to it once coverage is complete.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import structlog
from django.db import connection, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from kb.chunking import ChunkingError
from kb.embedders import Embedder, EmbeddingError, embedder_for
from kb.models import Document, DocumentIndexState, EmbeddingModel
from kb.services.chunks import Progress, document_index_failed
from kb.services.embedding_models import (
    Coverage,
    embedding_model_coverage,
    embedding_model_register,
)
from kb.services.enqueue import EMBEDDING_MODEL_BUILD_TASK, task_send
from kb.services.indexing import SavedDocumentsPath, documents_index

log = structlog.get_logger("groundwork.kb")

BUILD_BATCH_DOCUMENTS = 32
# How often a build re-touches the pending rows it will reach: well inside the sweep's default
# two minutes, so the sweep never resends what the build is about to do.
TOUCH_PENDING_SECONDS = 30.0


def embedding_model_add(*, embedder: Embedder) -> EmbeddingModel:
    """Register ``embedder``'s model and start building it in the background.

    The first model of a database becomes active at once; any later one is ``building``: every
    document is marked pending for it in this transaction, and the build task is sent when it
    commits (if the broker is down, the sweep sends the pending rows' documents in batches).
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
        pk__in=DocumentIndexState.objects.current_in(model).values("pk")
    )
    stale.update(status=DocumentIndexState.Status.PENDING, attempts=0, error="")


def _enqueue_build(model_id: int) -> None:
    # If the broker is down the pending rows stay, and the sweep sends them in batches.
    task_send(
        name=EMBEDDING_MODEL_BUILD_TASK,
        argument=model_id,
        failed_event="embedding_model_build_enqueue_failed",
    )


@dataclass
class BuildReport:
    key: str
    indexed: int = 0
    stale: int = 0  # edited while being embedded: the edit's own task indexes the new text
    current: int = 0  # indexed at this version by another worker meanwhile: nothing written
    failed: list[str] = field(default_factory=list)
    seconds: float = 0.0
    coverage: Coverage | None = None

    def summary(self) -> str:
        already = f", {self.current} already current" if self.current else ""
        coverage = f"; coverage {self.coverage}" if self.coverage is not None else ""
        return (
            f"{self.key}: {self.indexed} documents indexed, {self.stale} left to their edits"
            f"{already}, {len(self.failed)} failed in {self.seconds:.1f} s{coverage}"
        )


def embedding_model_build(
    *,
    model_id: int,
    batch_documents: int = BUILD_BATCH_DOCUMENTS,
    progress: Progress | None = None,
) -> BuildReport:
    """Index every document that is not current in the model, a batch of documents per
    embedder call. Idempotent: a second run, or one after a crash, does only what is left.

    A document that cannot be chunked is recorded as failed and the build goes on. Raises
    ``EmbeddingError`` when the embedder fails (the task retries later; the pending rows also
    stay visible to the sweep), and anything else the chunker raises, once it is recorded on
    the document, because that is a bug.
    """
    started = time.perf_counter()
    model = EmbeddingModel.objects.get(pk=model_id)
    report = BuildReport(key=model.key)
    if model.state == EmbeddingModel.State.RETIRED:
        report.coverage = embedding_model_coverage(model=model)
        return report
    embedder = embedder_for(model.key)
    current = DocumentIndexState.objects.current_in(model).filter(document=OuterRef("pk"))
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
        _batch_index(batch, model=model, embedder=embedder, report=report)
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


def documents_index_batch(*, document_ids: Sequence[int]) -> list[BuildReport]:
    """Index a batch of documents into every model that follows edits, one embedder call per
    model for the whole batch: the ``bulk`` queue's unit of work (imports, syncs, reindexing
    everything). Documents already current in a model are skipped, so a batch that overlaps
    an edit's own task, or runs twice, writes nothing twice. Raises ``EmbeddingError`` when an
    embedder fails (the task retries; the pending rows stay for the sweep)."""
    reports = []
    for model in EmbeddingModel.objects.indexing().order_by("pk"):
        started = time.perf_counter()
        report = BuildReport(key=model.key)
        current = DocumentIndexState.objects.current_in(model).filter(document=OuterRef("pk"))
        batch = list(
            Document.objects.filter(pk__in=document_ids)
            .filter(~Exists(current))
            .only("pk", "path", "title", "body", "content_hash")
            .order_by("pk")
        )
        if batch:
            _batch_index(batch, model=model, embedder=embedder_for(model.key), report=report)
        report.seconds = time.perf_counter() - started
        reports.append(report)
    return reports


def _batch_index(
    batch: Sequence[Document], *, model: EmbeddingModel, embedder: Embedder, report: BuildReport
) -> None:
    """Chunk ``batch``, embed it in one call, and write each document's chunks unless it was
    edited (or indexed by another worker) meanwhile; counts each outcome on ``report``."""
    counts = documents_index(
        sources=batch,
        embedder=embedder,
        embedding_model=model,
        path=_BatchIndexing(embedding_model=model, batch=len(batch), report=report),
    )
    report.indexed += counts.outcomes["indexed"]
    report.current += counts.outcomes["current"]
    report.stale += counts.outcomes["stale"] + counts.outcomes["gone"]


@dataclass(kw_only=True)
class _BatchIndexing(SavedDocumentsPath):
    """A batch of a build or of the bulk queue: a document that cannot be chunked is recorded
    and the batch goes on; an embedder failure stops it, for the task to retry, with the
    pending rows left for the sweep."""

    report: BuildReport

    def unchunkable(self, source: Document, error: ChunkingError) -> None:
        self.report.failed.append(source.path)
        document_index_failed(
            document=source,
            embedding_model=self.embedding_model,
            error=f"cannot be chunked: {error}",
        )

    def unembeddable(self, sources: Sequence[Document], error: EmbeddingError) -> None:
        raise error
