"""Queues by urgency: a writer's save is indexed on ``interactive``; model builds, reindexing
everything and imports go to ``bulk`` in batches, so a rebuild never delays an edit."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.utils import timezone
from kombu.simple import SimpleQueue

from config.celery_app import app
from kb.actors import SYSTEM
from kb.embedders.hashing import HashingEmbedder
from kb.models import Document, DocumentIndexState, EmbeddingModel
from kb.services import document_save, embedding_model_add, index_requests_in_bulk
from kb.services.index_queue import BULK_BATCH_DOCUMENTS
from kb.services.sync import corpus_sync
from tests.support.celery_worker import worker_process
from tests.support.polling import until

CORPUS_DIR = Path(__file__).resolve().parents[2] / "corpus"


def _drain(queue: str) -> list[tuple[str, list]]:
    """Every message waiting on ``queue`` in the real broker, as (task name, args), removed."""
    messages = []
    with app.connection_for_read() as connection:
        simple = SimpleQueue(connection, queue)
        try:
            while True:
                try:
                    message = simple.get(block=False)
                except simple.Empty:
                    return messages
                messages.append((message.headers["task"], message.payload[0]))
                message.ack()
        finally:
            simple.close()


@pytest.mark.django_db
def test_a_save_is_sent_to_interactive_and_bulk_work_to_bulk_in_batches(
    local_embedder, django_capture_on_commit_callbacks
) -> None:
    # given an active model and empty queues
    embedding_model_add(embedder=HashingEmbedder())
    _drain(settings.INTERACTIVE_QUEUE), _drain(settings.BULK_QUEUE)

    # when a writer saves one page, and an import saves forty
    with django_capture_on_commit_callbacks(execute=True):
        edited = Document.objects.create(path="edit.md", title="Edit", body="# Edit\n\nText.")
    with index_requests_in_bulk(), django_capture_on_commit_callbacks(execute=True):
        imported = [
            Document.objects.create(path=f"import/{n}.md", title=f"Page {n}", body="Body.")
            for n in range(40)
        ]

    # then the save is one interactive task; the import is bulk batches of its documents
    assert _drain(settings.INTERACTIVE_QUEUE) == [("kb.tasks.document_index_task", [edited.pk])]
    bulk = _drain(settings.BULK_QUEUE)
    assert {task for task, _ in bulk} == {"kb.tasks.documents_index_batch_task"}
    batches = [args[0] for _, args in bulk]
    assert sorted(pk for batch in batches for pk in batch) == [page.pk for page in imported]
    assert [len(batch) for batch in batches] == [BULK_BATCH_DOCUMENTS, 40 - BULK_BATCH_DOCUMENTS]

    # when everything is reindexed in the background, and a second model is added
    call_command("kb_reindex", "--all", "--background", stdout=io.StringIO())
    with django_capture_on_commit_callbacks(execute=True):
        building = embedding_model_add(embedder=local_embedder)

    # then both are bulk work, and nothing waits on the interactive queue
    assert building.state == EmbeddingModel.State.BUILDING
    bulk = _drain(settings.BULK_QUEUE)
    assert [task for task, _ in bulk] == [
        "kb.tasks.documents_index_batch_task",
        "kb.tasks.documents_index_batch_task",
        "kb.tasks.embedding_model_build_task",
    ]
    assert _drain(settings.INTERACTIVE_QUEUE) == []


def _index_edit(document: Document, model: EmbeddingModel, text: str) -> tuple[float, float]:
    """Save ``text`` into ``document``, wait until its chunks are current in ``model`` (a save
    indexes every model that follows edits, ``model`` last) and return, in seconds, how long
    the edit waited before a worker took it and how long that worker then took to index it,
    from the times the worker wrote on the document's index states."""
    document.body += f"\n\n{text}"
    saved = timezone.now()
    document_save(document=document, actor=SYSTEM)
    states = DocumentIndexState.objects.filter(document=document)
    until(
        states.current_in(model).exists,
        seconds=90,
        why=f"{document.path} was not indexed within 90 s",
    )
    taken = min(state.started_at for state in states if state.started_at)
    done = states.get(embedding_model=model).indexed_at
    assert taken is not None and done is not None
    return (taken - saved).total_seconds(), (done - taken).total_seconds()


def _not_current(model: EmbeddingModel) -> int:
    current = DocumentIndexState.objects.current_in(model).values("document_id")
    return Document.objects.exclude(pk__in=current).count()


def test_a_save_is_indexed_while_a_model_rebuild_is_still_running(
    transactional_db, local_embedder
) -> None:
    # given the sample corpus indexed in a fast model, and the real model added: its build of
    # the whole corpus waits on the bulk queue, while edits are indexed into both models
    embedding_model_add(embedder=HashingEmbedder())
    report = corpus_sync(directory=CORPUS_DIR, embedder=HashingEmbedder(), actor=SYSTEM)
    assert report.failed == []
    building = embedding_model_add(embedder=local_embedder)
    assert building.state == EmbeddingModel.State.BUILDING
    # The longest page, so that indexing it is real work next to the wait for a worker.
    page = max(Document.objects.all(), key=lambda document: len(document.body))
    one_core = {"LOCAL_EMBEDDER_THREADS": "1"}
    with worker_process(one_core, queues=settings.INTERACTIVE_QUEUE, name="interactive"):
        # when a bulk worker takes the build, and a writer saves while it runs
        bulk_started = timezone.now()
        with worker_process(one_core, queues=settings.BULK_QUEUE, name="bulk") as bulk:
            # A build touches the pending rows it is about to reach as it starts (so the sweep
            # leaves them alone): the sign it is under way. A solo worker answers no ping then.
            touched = DocumentIndexState.objects.filter(
                embedding_model=building,
                status=DocumentIndexState.Status.PENDING,
                updated_at__gt=bulk_started,
            )
            until(touched.exists, seconds=90, why="the bulk worker did not start the build")
            waited, indexing = _index_edit(page, building, "An edit during the rebuild.")
            left = _not_current(building)
            # What is measured is measured: the rest of the build is not watched, so it is
            # cut short instead of being waited for (a warm shutdown finishes the task first,
            # ~20 s of embedding). Its message goes back to the broker unacknowledged.
            bulk.kill()

    # then the edit did not wait behind the build: it was current while the build still had
    # pages to embed, and it waited for a worker less than that worker took to index it (both
    # stretch alike when the machine is busy; a bound in seconds did not hold on a loaded CI)
    assert left > 0, "the build ended before the edit was indexed: the edit waited behind it"
    assert waited < indexing, f"waited {waited:.2f} s for a worker, indexed in {indexing:.2f} s"
