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

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import timedelta
from typing import Any

import structlog
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from kb.chunking import CHUNKER_VERSION, ChunkingError
from kb.embedders import Embedder, EmbeddingError, embedder_for
from kb.models import Document, DocumentIndexState, EmbeddingModel
from kb.services.chunks import (
    chunks_embed,
    chunks_write_if_current,
    document_chunk,
    document_index_failed,
    log_document_indexed,
)

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


# kb_sync indexes each document into its model itself, in the transaction that saves it: a
# request for that model would only re-check work that is already done. So the sync names, on
# each document it saves, the models the save must still request (one being built); the
# post-save signal passes them on. It is set on that one instance and used by its next save
# only, so no other save, on this thread or any other, can be told to skip its request.
_REQUEST_ONLY_FOR = "_index_request_only_for"


def index_request_only_for(
    document: Document, *, embedding_models: Sequence[EmbeddingModel]
) -> Document:
    """Make the next save of ``document`` request indexing into ``embedding_models`` only: for
    a caller that indexes it into every other model itself, in the transaction of that save."""
    setattr(document, _REQUEST_ONLY_FOR, tuple(embedding_models))
    return document


def index_request_models(document: Document) -> Sequence[EmbeddingModel] | None:
    """The models a save of ``document`` was limited to (see ``index_request_only_for``), or
    None for every model that follows edits; the limit is used up by reading it."""
    return document.__dict__.pop(_REQUEST_ONLY_FOR, None)


def document_index_request(
    *, document: Document, embedding_models: Sequence[EmbeddingModel] | None = None
) -> bool:
    """Mark ``document`` pending in the caller's transaction for each of ``embedding_models``
    (every model that follows edits, by default) it is not current in, and enqueue its
    indexing once that transaction commits. Returns whether anything was pending."""
    models = EmbeddingModel.objects.indexing() if embedding_models is None else embedding_models
    current = set(
        DocumentIndexState.objects.filter(document=document, embedding_model__in=models)
        .current()
        .values_list("embedding_model_id", flat=True)
    )
    now = timezone.now()
    pending = False
    for embedding_model in models:
        if embedding_model.pk in current:
            continue
        DocumentIndexState.objects.update_or_create(
            document=document,
            embedding_model=embedding_model,
            defaults={"status": DocumentIndexState.Status.PENDING, "queued_at": now},
        )
        pending = True
    if pending:
        document_id = document.pk
        bulk = _bulk_requests.get()
        transaction.on_commit(lambda: _enqueue_if_pending(document_id, bulk=bulk))
    return pending


class _BulkRequests:
    """The documents saves inside ``index_requests_in_bulk`` asked to index, sent to the bulk
    queue a batch at a time as they commit, and the rest when the block ends."""

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


_bulk_requests: ContextVar[_BulkRequests | None] = ContextVar("bulk_index_requests", default=None)


@contextmanager
def index_requests_in_bulk() -> Iterator[None]:
    """Send the indexing requested by saves made inside this block to the ``bulk`` queue, in
    batches, instead of one ``interactive`` task per save: for imports and syncs, so a
    thousand saves never queue ahead of a writer's edit. A save whose transaction commits
    after the block ends is still sent to ``bulk``."""
    requests = _BulkRequests()
    token = _bulk_requests.set(requests)
    try:
        yield
    finally:
        _bulk_requests.reset(token)
        requests.closed = True
        requests.send()


def _enqueue_if_pending(document_id: int, *, bulk: _BulkRequests | None) -> None:
    """Send the task unless the committing code already indexed the document (kb_sync does).

    "Not current", not "pending": a worker busy with an older version may already have marked
    the state "indexing"; it will find its chunks stale, and only this message indexes the edit.
    """
    states = DocumentIndexState.objects.filter(
        document_id=document_id, embedding_model__in=EmbeddingModel.objects.indexing()
    )
    if not states.exclude(pk__in=states.current().values("pk")).exists():
        return
    if bulk is None:
        index_enqueue(document_ids=[document_id])
    else:
        bulk.add(document_id)


def index_enqueue(*, document_ids: Sequence[int], bulk: bool = False) -> int:
    """Publish the indexing of ``document_ids``: one task per document on the interactive
    queue, or with ``bulk`` one task per ``BULK_BATCH_DOCUMENTS`` on the bulk queue. A broker
    outage is logged, never raised, because the pending rows stay and the sweep retries them.
    Returns how many documents were sent."""
    from kb.tasks import PUBLISH_RETRY_POLICY, document_index_task, documents_index_batch_task

    messages: list[tuple[Any, int | list[int], int]]  # task, its argument, documents it covers
    if bulk:
        messages = [
            (documents_index_batch_task, batch, len(batch))
            for start in range(0, len(document_ids), BULK_BATCH_DOCUMENTS)
            if (batch := list(document_ids[start : start + BULK_BATCH_DOCUMENTS]))
        ]
    else:
        messages = [(document_index_task, document_id, 1) for document_id in document_ids]
    sent = 0
    for task, argument, covered in messages:
        try:
            task.apply_async(
                args=[argument],
                retry=True,
                retry_policy=PUBLISH_RETRY_POLICY,
            )
        except Exception as exc:  # kombu raises several types when the broker is unreachable
            log.warning("index_enqueue_failed", documents=argument, error=str(exc)[:200])
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
    started = time.perf_counter()
    try:
        chunks = chunks_embed(
            documents=[document_chunk(title=document.title, body=document.body, embedder=embedder)],
            embedder=embedder,
            embedding_model=embedding_model,
        )[0]
    except EmbeddingError as exc:
        document_index_failed(
            document=document, embedding_model=embedding_model, error=f"embedding failed: {exc}"
        )
        raise IndexingFailed(str(exc), transient=True) from exc
    except ChunkingError as exc:
        document_index_failed(
            document=document, embedding_model=embedding_model, error=f"cannot be chunked: {exc}"
        )
        raise IndexingFailed(str(exc), transient=False) from exc
    except Exception as exc:
        document_index_failed(
            document=document,
            embedding_model=embedding_model,
            error=f"indexing failed: {exc!r}",
            bug=True,
        )
        raise
    outcome = chunks_write_if_current(
        document_id=document_id, embedding_model=embedding_model, chunks=chunks
    )
    if outcome == "indexed":
        log_document_indexed(
            path=document.path, embedding_model=embedding_model, chunks=chunks, started=started
        )
    return outcome


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
