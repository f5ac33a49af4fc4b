"""Sending kb's Celery tasks, by name.

The services send the tasks and the tasks call the services: if the services imported
``kb.tasks`` to send them, each would need the other. So the services send by name through
here, and ``kb.tasks`` registers its tasks under these same names; the dependency runs one way,
from the adapters (``kb.tasks``) to the services. The queue of each task is chosen by name too,
in ``settings.CELERY_TASK_ROUTES``.
"""

from __future__ import annotations

from typing import Any

import structlog
from celery import current_app

log = structlog.get_logger("groundwork.kb")

DOCUMENT_INDEX_TASK = "kb.tasks.document_index_task"
DOCUMENTS_INDEX_BATCH_TASK = "kb.tasks.documents_index_batch_task"
EMBEDDING_MODEL_BUILD_TASK = "kb.tasks.embedding_model_build_task"
INDEX_SWEEP_TASK = "kb.tasks.index_sweep_task"
CONNECTOR_SYNC_TASK = "kb.tasks.connector_sync_task"

# A broker that does not answer is tried once more, briefly: a save waits on this in its
# on-commit hook, and the durable pending rows let the sweep send what is lost.
SEND_RETRY_POLICY = {"max_retries": 1, "interval_start": 0.2, "interval_step": 0.5}


def task_send(*, name: str, argument: Any, failed_event: str) -> bool:
    """Publish task ``name`` with its one argument (ids, never model instances). A broker
    outage is logged as ``failed_event``, never raised, because what the task would do stays
    pending in the database for the sweep. Returns whether the message was sent."""
    if current_app.conf.task_always_eager:
        # ``send_task`` ignores eager mode, where ``apply_async`` runs the task in this process.
        current_app.loader.import_default_modules()
        current_app.tasks[name].apply(args=[argument])
        return True
    try:
        current_app.send_task(name, args=[argument], retry=True, retry_policy=SEND_RETRY_POLICY)
    except Exception as exc:  # kombu raises several types when the broker is unreachable
        log.warning(failed_event, task=name, argument=argument, error=str(exc)[:200])
        return False
    return True
