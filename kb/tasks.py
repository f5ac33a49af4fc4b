"""Celery adapters: take ids, call one service, retry what may succeed later.

The services send these tasks by name (``kb.services.enqueue``), never by importing this module,
so the dependency runs one way: from here to the services.
"""

from __future__ import annotations

from celery import shared_task

from kb.embedders import EmbeddingError
from kb.services import (
    IndexingFailed,
    document_index_all_models,
    documents_index_batch,
    embedding_model_build,
    index_sweep,
)
from kb.services.enqueue import (
    CONNECTOR_SYNC_TASK,
    DOCUMENT_INDEX_TASK,
    DOCUMENTS_INDEX_BATCH_TASK,
    EMBEDDING_MODEL_BUILD_TASK,
    INDEX_SWEEP_TASK,
)
from kb.services.sync.connector import connector_sync_scheduled

# Indexing that failed on something that may pass (a provider outage) is retried this often,
# after 10 s, 20 s, 40 s...: the outage is given time; the sweep covers longer ones.
INDEX_MAX_RETRIES = 5


def index_retry_countdown(*, retries: int) -> int:
    """Seconds before retry number ``retries + 1`` of an indexing task."""
    return 10 * 2**retries


@shared_task(name=DOCUMENT_INDEX_TASK, bind=True, max_retries=INDEX_MAX_RETRIES, acks_late=True)
def document_index_task(self, document_id: int) -> str:
    """Index one document into every model that follows edits; models already current are
    no-ops, so a retry after a transient failure only redoes what failed."""
    try:
        return ",".join(document_index_all_models(document_id=document_id))
    except IndexingFailed as exc:
        raise self.retry(
            exc=exc, countdown=index_retry_countdown(retries=self.request.retries)
        ) from exc


@shared_task(
    name=DOCUMENTS_INDEX_BATCH_TASK, bind=True, max_retries=INDEX_MAX_RETRIES, acks_late=True
)
def documents_index_batch_task(self, document_ids: list[int]) -> str:
    """Index a batch of documents (the bulk queue's unit); documents already current are
    skipped, so a retry or a duplicate writes nothing twice."""
    try:
        reports = documents_index_batch(document_ids=document_ids)
    except EmbeddingError as exc:
        raise self.retry(
            exc=exc, countdown=index_retry_countdown(retries=self.request.retries)
        ) from exc
    return "; ".join(report.summary() for report in reports)


@shared_task(name=EMBEDDING_MODEL_BUILD_TASK, acks_late=True)
def embedding_model_build_task(model_id: int) -> str:
    """Build a new model's chunks for every document; safe to run twice or after a crash."""
    return embedding_model_build(model_id=model_id).summary()


@shared_task(name=INDEX_SWEEP_TASK)
def index_sweep_task() -> int:
    return index_sweep()


@shared_task(name=CONNECTOR_SYNC_TASK, acks_late=True)
def connector_sync_task(connector_name: str) -> str:
    """One run of a connector (on the bulk queue, from beat). Not retried: a run that fails
    keeps its checkpoint, and the next scheduled run resumes from it."""
    return connector_sync_scheduled(name=connector_name)
