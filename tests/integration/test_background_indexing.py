"""Saving a document from any code path gets it indexed in the background, idempotently."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.utils import timezone

from kb.actors import SYSTEM
from kb.chunking import chunker
from kb.embedders import EmbeddingError
from kb.models import Chunk, Document, DocumentIndexState
from kb.services import IndexingFailed, document_index, embedding_model_register, index_sweep
from kb.services import index_queue as services
from search.services import retrieve
from tests.conftest import CountingEmbedder
from tests.support.celery_worker import worker_process as _worker_process
from tests.support.polling import until

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def active_model(local_embedder):
    return embedding_model_register(embedder=local_embedder)


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The document ids handed to the broker, without a broker."""
    calls: list[int] = []
    monkeypatch.setattr(
        services,
        "index_enqueue",
        lambda *, document_ids, bulk=False: calls.extend(document_ids) or 0,
    )
    return calls


def _new_document(text: str = "Refunds arrive within ten business days.") -> Document:
    return Document.objects.create(path="refunds.md", title="Refunds", body=f"# Refunds\n\n{text}")


@pytest.mark.django_db
def test_saving_marks_pending_and_enqueues_on_commit(
    active_model, sent: list[int], django_capture_on_commit_callbacks
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        document = _new_document()

    state = DocumentIndexState.objects.get(document=document)
    assert state.status == DocumentIndexState.Status.PENDING and state.queued_at is not None
    assert sent == [document.pk]


@pytest.mark.django_db
def test_nothing_is_enqueued_before_commit(active_model, sent: list[int]) -> None:
    _new_document()

    assert sent == []  # the test transaction never commits


@pytest.mark.django_db
def test_task_indexes_the_saved_version_and_is_idempotent(active_model, local_embedder) -> None:
    document = _new_document()

    assert document_index(document_id=document.pk, embedder=local_embedder) == "indexed"
    assert document_index(document_id=document.pk, embedder=local_embedder) == "current"
    state = DocumentIndexState.objects.get(document=document)
    assert (state.status, state.indexed_hash, state.attempts) == (
        "indexed",
        document.content_hash,
        1,
    )
    assert "ten business days" in Chunk.objects.get(document=document).text


@pytest.mark.django_db
def test_a_message_for_an_overtaken_version_leaves_the_work_to_the_newer_one(
    active_model, local_embedder
) -> None:
    document = _new_document()

    class EditWhileEmbedding(CountingEmbedder):
        def embed_documents(self, texts):
            edited = Document.objects.get(pk=document.pk)
            edited.body = "# Refunds\n\nNow 30 days."
            edited.save()
            return super().embed_documents(texts)

    outcome = document_index(document_id=document.pk, embedder=EditWhileEmbedding(local_embedder))

    assert outcome == "stale"
    assert not Chunk.objects.filter(document=document).exists()


@pytest.mark.django_db
def test_editing_again_reindexes_only_the_latest(active_model, local_embedder) -> None:
    document = _new_document()
    document_index(document_id=document.pk, embedder=local_embedder)
    document.body = "# Refunds\n\nRefunds now arrive within three business days."
    document.save()

    assert DocumentIndexState.objects.get(document=document).status == "pending"
    assert document_index(document_id=document.pk, embedder=local_embedder) == "indexed"
    assert "three business days" in Chunk.objects.get(document=document).text


@pytest.mark.django_db
def test_embedding_failure_is_recorded_on_the_document(active_model, local_embedder) -> None:
    document = _new_document()
    broken = CountingEmbedder(local_embedder)
    broken.failure = EmbeddingError("provider returned 503")

    with pytest.raises(IndexingFailed) as raised:
        document_index(document_id=document.pk, embedder=broken)

    assert raised.value.transient
    state = DocumentIndexState.objects.get(document=document)
    assert state.status == "failed" and "503" in state.error and state.attempts == 1


def _chunker_raises(monkeypatch: pytest.MonkeyPatch, error: Exception) -> None:
    def chunk(self, sections):
        raise error

    monkeypatch.setattr(chunker._Chunker, "chunk", chunk)


@pytest.mark.django_db
def test_a_document_that_cannot_be_chunked_is_failed_for_good(
    active_model, local_embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given a document the chunker cannot fit into the model's window
    document = _new_document()
    _chunker_raises(monkeypatch, chunker.ChunkingError("the title leaves no room for text"))

    # when its task runs
    with pytest.raises(IndexingFailed) as raised:
        document_index(document_id=document.pk, embedder=local_embedder)

    # then it is recorded as unchunkable, and retrying would not help
    assert not raised.value.transient
    state = DocumentIndexState.objects.get(document=document)
    assert state.status == "failed" and state.error.startswith("cannot be chunked: ")


@pytest.mark.django_db
def test_a_chunker_bug_surfaces_instead_of_passing_for_an_unchunkable_document(
    active_model, local_embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given a chunker with a bug that happens to raise ValueError
    document = _new_document()
    _chunker_raises(monkeypatch, ValueError("list index out of range"))

    # when the document's task runs
    with pytest.raises(ValueError, match="list index out of range") as raised:
        document_index(document_id=document.pk, embedder=local_embedder)

    # then the error itself is raised and recorded, never read as "cannot be chunked"
    assert not isinstance(raised.value, IndexingFailed)
    state = DocumentIndexState.objects.get(document=document)
    assert state.status == "failed" and "list index out of range" in state.error
    assert "cannot be chunked" not in state.error


@pytest.mark.django_db
def test_sweep_resends_old_pending_and_failed_but_not_fresh_ones(
    active_model, sent: list[int]
) -> None:
    old = _new_document()
    fresh = Document.objects.create(path="fresh.md", title="Fresh", body="# Fresh\n\nNew.")
    long_ago = timezone.now() - timedelta(minutes=10)
    DocumentIndexState.objects.filter(document=old).update(updated_at=long_ago)

    index_sweep()

    assert sent == [old.pk]
    assert fresh.pk not in sent


@pytest.fixture
def worker(transactional_db) -> Iterator[subprocess.Popen[str]]:
    with _worker_process() as process:
        yield process


def test_an_admin_edit_is_searchable_after_the_worker_runs(
    transactional_db, local_embedder, worker
) -> None:
    # given a doc writer in admin
    embedding_model_register(embedder=local_embedder)
    writer = User.objects.create_user(username="writer", password="pw", is_staff=True)
    # The Doc writers group's permissions (earlier transactional tests flush the group itself).
    writer.user_permissions.set(
        Permission.objects.filter(
            content_type__app_label="kb",
            codename__in=["add_document", "change_document", "view_document"],
        )
    )
    client = Client()
    client.force_login(writer)

    # when they add a page through the admin form
    response = client.post(
        "/admin/kb/document/add/",
        {
            "path": "policies/pets.md",
            "title": "Pet Policy",
            "category": "policies",
            "audience": "public",
            "status": "published",
            "body": "# Pet Policy\r\n\r\nDogs and cats may visit the office on Fridays.\r\n",
            "updated_on": "",
            "review_by": "",
            "index_states-TOTAL_FORMS": "0",
            "index_states-INITIAL_FORMS": "0",
            "test_questions-TOTAL_FORMS": "0",
            "test_questions-INITIAL_FORMS": "0",
        },
    )
    assert response.status_code == 302, response.content.decode()[:1000]
    document = Document.objects.get(path="policies/pets.md")

    # then the real worker indexes it from the real broker, and search finds it
    until(
        lambda: DocumentIndexState.objects.filter(document=document, status="indexed").exists(),
        seconds=90,
        why=lambda: worker.stdout and worker.stdout.read(2000),
    )
    assert retrieve(question="can I bring my dog to work?").hits[0].path == "policies/pets.md"


@pytest.mark.django_db
def test_kb_sync_indexes_inline_without_background_requests(
    active_model,
    local_embedder,
    sent: list[int],
    tmp_path: Path,
    django_capture_on_commit_callbacks,
) -> None:
    from kb.services.sync import corpus_sync

    (tmp_path / "a.md").write_text("# A\n\nAlpha text.\n")
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        corpus_sync(directory=tmp_path, embedder=local_embedder, actor=SYSTEM)

    # nothing sent for indexing; the one callback tells kb.events that the page was indexed
    assert sent == []
    assert [callback.func.__name__ for callback in callbacks] == ["_documents_indexed"]
    assert DocumentIndexState.objects.get().status == "indexed"


def test_a_save_made_while_the_broker_is_down_is_indexed_after_it_returns(
    transactional_db, local_embedder, django_capture_on_commit_callbacks
) -> None:
    from django.conf import settings

    from kb.runtime import embedded

    if "CELERY_BROKER_URL" in os.environ:
        pytest.skip("needs the embedded broker, which this test stops and restarts")
    embedding_model_register(embedder=local_embedder)

    # given the broker is down while a doc writer saves
    embedded.redis_stop(data_dir=settings.DATA_DIR)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            document = Document.objects.create(
                path="policies/parking.md",
                title="Parking",
                body="# Parking\n\nVisitors park free in bay C for up to two hours.",
            )
        # then the save stands and the to-do row says pending
        assert DocumentIndexState.objects.get(document=document).status == "pending"
    finally:
        embedded.redis_ensure_running(data_dir=settings.DATA_DIR)

    # when the broker is back, a worker runs and the sweep comes round
    with _worker_process() as worker:
        assert index_sweep(older_than=timedelta(0)) == 1
        until(
            lambda: DocumentIndexState.objects.filter(document=document, status="indexed").exists(),
            seconds=90,
            why=lambda: worker.stdout and worker.stdout.read(2000),
        )
    assert retrieve(question="where can visitors park?").hits[0].path == "policies/parking.md"


def test_two_rapid_edits_end_with_the_index_matching_the_second(
    transactional_db, local_embedder, worker
) -> None:
    embedding_model_register(embedder=local_embedder)
    document = Document.objects.create(
        path="policies/lunch.md", title="Lunch", body="# Lunch\n\nLunch is served at noon."
    )
    document.body = "# Lunch\n\nLunch is served at one o'clock in the atrium."
    document.save()

    until(
        lambda: DocumentIndexState.objects.filter(
            document=document, status="indexed", indexed_hash=document.content_hash
        ).exists(),
        seconds=90,
        why=lambda: worker.stdout and worker.stdout.read(2000),
    )

    texts = list(Chunk.objects.filter(document=document).values_list("text", flat=True))
    assert texts and all("one o'clock" in text for text in texts)
    assert not any("noon" in text for text in texts)


@pytest.mark.django_db
def test_in_eager_mode_a_save_is_indexed_in_the_saving_process(
    active_model, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks
) -> None:
    # given Celery told to run tasks where they are sent (CELERY_TASK_ALWAYS_EAGER)
    from celery import current_app

    monkeypatch.setitem(current_app.conf, "task_always_eager", True)

    # when a document is saved and the save commits
    with django_capture_on_commit_callbacks(execute=True):
        document = _new_document()

    # then its task ran here and then: no broker, no worker
    state = DocumentIndexState.objects.get(document=document)
    assert state.status == DocumentIndexState.Status.INDEXED
    assert "ten business days" in Chunk.objects.get(document=document).text
