"""The background queue: a save requests indexing, a Celery task does it, a sweep resends what
a lost message or a dead worker left behind.

The per-document index state is the durable to-do list. A save marks it pending in its own
transaction and the task is sent once that commits; if the broker is down the message is lost,
the row is not, and ``index_sweep`` sends it again. Tasks are idempotent and versioned, so a
duplicate, late or out-of-order message is harmless.

Two queues by urgency (``settings.INTERACTIVE_QUEUE`` / ``BULK_QUEUE``): a writer's save sends
one task for its document on ``interactive``; saves made inside ``index_requests_in_bulk`` (an
import, a sync), ``kb_reindex --background`` and the sweep send batches of documents on
``bulk``, beside model builds, so no amount of bulk work queues ahead of an edit.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import timedelta

import structlog
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from kb.chunking import CHUNKER_VERSION, ChunkingError
from kb.embedders import Embedder, EmbeddingError, embedder_for
from kb.models import Document, DocumentIndexState, EmbeddingModel
from kb.services.chunks import document_index_failed
from kb.services.enqueue import DOCUMENT_INDEX_TASK, DOCUMENTS_INDEX_BATCH_TASK, task_send
from kb.services.indexing import SavedDocumentsPath, documents_index

log = structlog.get_logger("groundwork.kb")

# A worker that died mid-task leaves its state "indexing"; after this long the sweep redoes it.
STALE_INDEXING_AFTER = timedelta(minutes=15)
MAX_INDEX_ATTEMPTS = 5
# Documents per bulk task: one embedder call covers them all (the build's batch, too).
BULK_BATCH_DOCUMENTS = 32


class IndexingFailed(RuntimeError):
    """Indexing a document failed; ``transient`` says whether trying again may succeed."""

    def __init__(self, message: str, *, transient: bool) -> None:
        super().__init__(message)
        self.transient = transient


class _BulkOutbox:
    """Documents whose requested indexing committed inside ``index_requests_in_bulk``, sent
    to the bulk queue a batch at a time, and the rest when the outermost block ends."""

    def __init__(self) -> None:
        self.document_ids: list[int] = []
        self.closed = False

    def add(self, document_id: int) -> None:
        self.document_ids.append(document_id)
        if self.closed or len(self.document_ids) >= BULK_BATCH_DOCUMENTS:
            self.send()

    def send(self) -> None:
        document_ids, self.document_ids = self.document_ids, []
        if document_ids:
            index_enqueue(document_ids=document_ids, bulk=True)


@dataclass(frozen=True)
class IndexRequests:
    """What the saves inside one ``index_requests_in_bulk`` block request: indexing into
    ``models`` (None: every model that follows edits), sent through ``outbox`` to the bulk
    queue in batches."""

    outbox: _BulkOutbox
    models: tuple[EmbeddingModel, ...] | None = None


_open_requests: ContextVar[IndexRequests | None] = ContextVar("index_requests", default=None)


@contextmanager
def index_requests_in_bulk(*, indexed_here: EmbeddingModel | None = None) -> Iterator[None]:
    """Send the indexing requested by saves made inside this block to the ``bulk`` queue, in
    batches, instead of one ``interactive`` task per save: for imports and syncs, so a
    thousand saves never queue ahead of a writer's edit. A save whose transaction commits
    after the block ends is still sent to ``bulk``.

    ``indexed_here``: a model the caller indexes each document it saves into itself, in the
    transaction of that save (kb_sync); the saves request only the other models that follow
    edits (one being built), looked up once for the block. Nested in another block, this one
    adds to its batches.

    This is the one input of a save's indexing request that is not on the saved row: the
    post-save signal reads it with ``index_requests_open`` and passes it on by name."""
    outer = _open_requests.get()
    models = outer.models if outer is not None else None
    if indexed_here is not None:
        models = tuple(EmbeddingModel.objects.indexing().exclude(pk=indexed_here.pk))
    requests = IndexRequests(outbox=outer.outbox if outer else _BulkOutbox(), models=models)
    token = _open_requests.set(requests)
    try:
        yield
    finally:
        _open_requests.reset(token)
        if outer is None:
            requests.outbox.closed = True
            requests.outbox.send()


def index_requests_open() -> IndexRequests | None:
    """The requests of the ``index_requests_in_bulk`` block this code runs in, if any."""
    return _open_requests.get()


def document_index_request(*, document: Document, requests: IndexRequests | None = None) -> bool:
    """Mark the saved ``document`` pending in the caller's transaction for each model it
    requests (``requests.models``; every model that follows edits by default) that does not
    hold its text as it is now, and send its indexing once that transaction commits: on the
    interactive queue, or with ``requests`` to the bulk queue. Returns whether anything was
    pending."""
    if requests is None or requests.models is None:
        models = list(EmbeddingModel.objects.indexing())
    else:
        models = list(requests.models)
    if not models:
        return False
    current = set(
        DocumentIndexState.objects.filter(document=document, embedding_model__in=models)
        .current()
        .values_list("embedding_model_id", flat=True)
    )
    now = timezone.now()
    pending = [
        DocumentIndexState(
            document=document,
            embedding_model=embedding_model,
            status=DocumentIndexState.Status.PENDING,
            queued_at=now,
        )
        for embedding_model in models
        if embedding_model.pk not in current
    ]
    if not pending:
        return False
    DocumentIndexState.objects.bulk_create(
        pending,
        update_conflicts=True,
        unique_fields=["document", "embedding_model"],
        update_fields=["status", "queued_at", "updated_at"],
    )
    document_id = document.pk
    outbox = requests.outbox if requests is not None else None
    transaction.on_commit(lambda: _enqueue_if_pending(document_id, outbox=outbox))
    return True


def _enqueue_if_pending(document_id: int, *, outbox: _BulkOutbox | None) -> None:
    """Send the task unless the committing code already indexed the document (kb_sync does).

    "Not current", not "pending": a worker busy with an older version may already have marked
    the state "indexing"; it will find its chunks stale, and only this message indexes the edit.
    """
    states = DocumentIndexState.objects.filter(
        document_id=document_id, embedding_model__in=EmbeddingModel.objects.indexing()
    )
    if not states.exclude(pk__in=states.current().values("pk")).exists():
        return
    if outbox is None:
        index_enqueue(document_ids=[document_id])
    else:
        outbox.add(document_id)


def index_enqueue(*, document_ids: Sequence[int], bulk: bool = False) -> int:
    """Publish the indexing of ``document_ids``: one task per document on the interactive
    queue, or with ``bulk`` one task per ``BULK_BATCH_DOCUMENTS`` on the bulk queue. A broker
    outage is logged, never raised, because the pending rows stay and the sweep retries them.
    Returns how many documents were sent."""
    messages: list[tuple[str, int | list[int], int]]  # task, its argument, documents it covers
    if bulk:
        messages = [
            (DOCUMENTS_INDEX_BATCH_TASK, batch, len(batch))
            for start in range(0, len(document_ids), BULK_BATCH_DOCUMENTS)
            if (batch := list(document_ids[start : start + BULK_BATCH_DOCUMENTS]))
        ]
    else:
        messages = [(DOCUMENT_INDEX_TASK, document_id, 1) for document_id in document_ids]
    sent = 0
    for name, argument, covered in messages:
        if not task_send(name=name, argument=argument, failed_event="index_enqueue_failed"):
            break
        sent += covered
    return sent


def document_index(*, document_id: int, embedder: Embedder) -> str:
    """Bring one document's chunks up to date for ``embedder``'s model, which must be active or
    being built. Idempotent and versioned: a duplicate or late message finds the index current
    and does nothing; a message for a version that was edited again meanwhile leaves the work
    to the newer message.

    Returns what happened: ``indexed``, ``current``, ``stale`` or ``gone``. A document that
    cannot be chunked, or an embedder failure, is recorded on its state and raised as
    ``IndexingFailed``; any other error is a bug: it is recorded too, and raised as it is.
    """
    embedding_model = EmbeddingModel.objects.indexing().filter(key=embedder.key).first()
    if embedding_model is None:
        raise IndexingFailed(
            f"{embedder.key} is neither the active embedding model nor one being built",
            transient=False,
        )
    document = Document.objects.filter(pk=document_id).first()
    if document is None:
        return "gone"
    states = DocumentIndexState.objects.filter(document=document, embedding_model=embedding_model)
    if states.current().exists():
        return "current"
    # Only a state that is still not current at this version: another worker may have indexed
    # it since the check, and overwriting its "indexed" would leave the document looking stale.
    states.exclude(
        status=DocumentIndexState.Status.INDEXED,
        indexed_hash=document.content_hash,
        chunker_version=CHUNKER_VERSION,
    ).update(
        status=DocumentIndexState.Status.INDEXING,
        started_at=timezone.now(),
        attempts=F("attempts") + 1,
    )
    counts = documents_index(
        sources=[document],
        embedder=embedder,
        embedding_model=embedding_model,
        path=_TaskIndexing(embedding_model=embedding_model),
    )
    (outcome,) = counts.outcomes
    return outcome


class _TaskIndexing(SavedDocumentsPath):
    """One document's task: a failure is recorded on its state and stops the task, which
    retries what may succeed later (``IndexingFailed.transient``)."""

    def unchunkable(self, source: Document, error: ChunkingError) -> None:
        document_index_failed(
            document=source,
            embedding_model=self.embedding_model,
            error=f"cannot be chunked: {error}",
        )
        raise IndexingFailed(str(error), transient=False) from error

    def unembeddable(self, sources: Sequence[Document], error: EmbeddingError) -> None:
        for source in sources:
            document_index_failed(
                document=source,
                embedding_model=self.embedding_model,
                error=f"embedding failed: {error}",
            )
        raise IndexingFailed(str(error), transient=True) from error


def document_index_all_models(*, document_id: int) -> list[str]:
    """Index one document into every model that follows edits: the active one and any being
    built. Returns each model's outcome (see ``document_index``), in model order.

    A model whose embedder cannot even be built (a Voyage model without its key) is recorded
    as failed on the document, with the reason and an attempt counted, so the sweep gives up
    on it after ``MAX_INDEX_ATTEMPTS`` instead of resending it for ever. Raises a transient
    ``IndexingFailed`` after trying every model if any of them may succeed later.
    """
    outcomes: list[str] = []
    transient: IndexingFailed | None = None
    for model in EmbeddingModel.objects.indexing().order_by("pk"):
        try:
            outcomes.append(
                document_index(document_id=document_id, embedder=embedder_for(model.key))
            )
        except EmbeddingError as exc:
            DocumentIndexState.objects.mark_failed(
                document_id=document_id,
                embedding_model=model,
                error=f"no embedder: {exc}",
                count_attempt=True,
            )
            log.warning(
                "document_index_failed", document_id=document_id, model=model.key, error=str(exc)
            )
            outcomes.append("failed")
        except IndexingFailed as exc:
            transient = exc if exc.transient else transient
            outcomes.append("failed")
    if transient is not None:
        raise transient
    return outcomes


def index_sweep(*, older_than: timedelta = timedelta(minutes=2)) -> int:
    """Re-enqueue what a lost message or a dead worker left behind: pending or failed rows not
    touched for ``older_than``, and rows stuck "indexing" past ``STALE_INDEXING_AFTER``."""
    now = timezone.now()
    Status = DocumentIndexState.Status
    due = DocumentIndexState.objects.filter(
        Q(status=Status.PENDING, updated_at__lt=now - older_than)
        | Q(status=Status.FAILED, updated_at__lt=now - older_than, attempts__lt=MAX_INDEX_ATTEMPTS)
        | Q(status=Status.INDEXING, updated_at__lt=now - STALE_INDEXING_AFTER)
    )
    document_ids = sorted(set(due.values_list("document_id", flat=True)))
    if document_ids:
        # Touch the rows so the next sweep waits for these messages instead of resending them.
        due.update(queued_at=now, updated_at=now)
    # Catching up is bulk work: a broker outage during an import leaves thousands of rows.
    sent = index_enqueue(document_ids=document_ids, bulk=True)
    if document_ids:
        log.info("index_sweep", due=len(document_ids), sent=sent)
    return sent
