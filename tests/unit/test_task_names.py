"""The services send kb's tasks by name (``kb.services.enqueue``), so a name that no task is
registered under would be lost in the broker without an error: each name they send is the
name of a ``kb.tasks`` task, and the queue routes and beat schedule name the same tasks."""

from __future__ import annotations

from celery import current_app
from django.conf import settings

from kb import tasks
from kb.services import enqueue


def test_every_task_the_services_send_is_registered_under_that_name() -> None:
    sent = {
        enqueue.DOCUMENT_INDEX_TASK: tasks.document_index_task,
        enqueue.DOCUMENTS_INDEX_BATCH_TASK: tasks.documents_index_batch_task,
        enqueue.EMBEDDING_MODEL_BUILD_TASK: tasks.embedding_model_build_task,
        enqueue.INDEX_SWEEP_TASK: tasks.index_sweep_task,
        enqueue.CONNECTOR_SYNC_TASK: tasks.connector_sync_task,
    }

    for name, task in sent.items():
        assert task.name == name
        assert current_app.tasks[name] == task  # the proxy `shared_task` returns compares equal


def test_the_bulk_routes_and_the_sweep_schedule_name_registered_tasks() -> None:
    kb_routes = [name for name in settings.CELERY_TASK_ROUTES if name.startswith("kb.")]
    kb_beats = [
        entry["task"]
        for entry in settings.CELERY_BEAT_SCHEDULE.values()
        if entry["task"].startswith("kb.")
    ]

    assert sorted(kb_routes) == sorted(
        [
            enqueue.CONNECTOR_SYNC_TASK,
            enqueue.DOCUMENTS_INDEX_BATCH_TASK,
            enqueue.EMBEDDING_MODEL_BUILD_TASK,
        ]
    )
    assert kb_beats == [enqueue.INDEX_SWEEP_TASK]
    assert all(name in current_app.tasks for name in [*kb_routes, *kb_beats])
