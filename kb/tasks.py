"""Celery adapters: take ids, call one service, retry what may succeed later."""

from __future__ import annotations

import structlog
from celery import shared_task

from kb.embedders import EmbeddingError, embedder_for
from kb.models import EmbeddingModel
from kb.services import IndexingFailed, document_index, embedding_model_build, index_sweep

log = structlog.get_logger("groundwork.kb")


@shared_task(bind=True, max_retries=5, acks_late=True)
def document_index_task(self, document_id: int) -> str:
    """Index one document into every model that follows edits: the active one and any being
    built. A transient failure retries the whole task; models already current are no-ops."""
    outcomes = []
    transient: IndexingFailed | None = None
    for key in EmbeddingModel.objects.indexing().order_by("pk").values_list("key", flat=True):
        try:
            outcomes.append(document_index(document_id=document_id, embedder=embedder_for(key)))
        except EmbeddingError as exc:  # the model's embedder cannot even be built (no key)
            log.warning("document_index_failed", document_id=document_id, model=key, error=str(exc))
            outcomes.append("failed")
        except IndexingFailed as exc:
            if exc.transient:
                transient = exc
            outcomes.append("failed")
    if transient is not None:
        # 10 s, 20 s, 40 s...: a provider outage is given time; the sweep covers longer ones.
        raise self.retry(exc=transient, countdown=10 * 2**self.request.retries)
    return ",".join(outcomes)


@shared_task(acks_late=True)
def embedding_model_build_task(model_id: int) -> str:
    """Build a new model's chunks for every document; safe to run twice or after a crash."""
    return embedding_model_build(model_id=model_id).summary()


@shared_task
def index_sweep_task() -> int:
    return index_sweep()
