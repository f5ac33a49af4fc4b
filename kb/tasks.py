"""Celery adapters: take ids, call one service, retry what may succeed later."""

from __future__ import annotations

from celery import shared_task

from kb.embedders import get_embedder
from kb.services import IndexingFailed, document_index, index_sweep


@shared_task(bind=True, max_retries=5, acks_late=True)
def document_index_task(self, document_id: int) -> str:
    try:
        return document_index(document_id=document_id, embedder=get_embedder())
    except IndexingFailed as exc:
        if not exc.transient:
            return "failed"
        # 10 s, 20 s, 40 s...: a provider outage is given time; the sweep covers longer ones.
        raise self.retry(exc=exc, countdown=10 * 2**self.request.retries) from exc


@shared_task
def index_sweep_task() -> int:
    return index_sweep()
