"""Embedding model versions: build in the background, switch atomically, never serve a mix."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone

from kb.actors import SYSTEM
from kb.chunking import chunker, structure
from kb.embedders import EmbeddingError, embedder_for
from kb.models import Chunk, Document, DocumentIndexState, EmbeddingModel
from kb.services import (
    EmbeddingModelError,
    embedding_model_activate,
    embedding_model_add,
    embedding_model_build,
    embedding_model_coverage,
    embedding_model_drop,
    hnsw_index_exists,
    index_sweep,
)
from kb.services import model_builds as lifecycle
from kb.services.sync import corpus_sync
from kb.tasks import document_index_task
from search.services import retrieve
from tests.support.celery_worker import worker_process
from tests.support.polling import until
from tests.support.searching import searching
from tests.support.voyage_stub import VoyageStub

LOCAL = "local/all-MiniLM-L6-v2"
VOYAGE = "voyage/voyage-3.5"
API_KEY = "test-voyage-key"

PAGES = {
    "refunds.md": "# Refunds\n\nAnnual plans get a prorated refund within 60 days.\n",
    "limits.md": "# Rate limits\n\nToo many requests return HTTP 429 with Retry-After.\n",
    "trial.md": "# Free trial\n\nThe trial lasts 14 days and needs no credit card.\n",
}


@pytest.fixture
def voyage(settings) -> Iterator[VoyageStub]:
    with VoyageStub(api_key=API_KEY) as stub:
        settings.VOYAGE_API_KEY = API_KEY
        settings.VOYAGE_BASE_URL = stub.base_url
        settings.VOYAGE_TOTAL_TIMEOUT = 5.0
        embedder_for.cache_clear()
        yield stub
    embedder_for.cache_clear()


@pytest.fixture
def corpus(tmp_path: Path, cached_embedder) -> Path:
    for name, text in PAGES.items():
        (tmp_path / name).write_text(text)
    corpus_sync(directory=tmp_path, embedder=cached_embedder, actor=SYSTEM)
    return tmp_path


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Build tasks handed to the broker, without a broker."""
    sent: list[int] = []
    monkeypatch.setattr(lifecycle, "_enqueue_build", sent.append)
    return sent


def _models_of(result) -> set[str]:
    chunk_ids = [hit.chunk_id for hit in result.hits]
    return set(
        Chunk.objects.filter(pk__in=chunk_ids).values_list("embedding_model__key", flat=True)
    )


@pytest.mark.django_db
def test_a_new_model_builds_while_search_keeps_using_the_active_one(
    corpus, voyage, builds, django_capture_on_commit_callbacks
) -> None:
    # given
    with django_capture_on_commit_callbacks(execute=True):
        model = embedding_model_add(embedder=embedder_for(VOYAGE))

    # then: it is building, every document waits for it, and its build was sent
    assert model.state == EmbeddingModel.State.BUILDING
    assert builds == [model.pk]
    assert embedding_model_coverage(model=model).pending == len(PAGES)
    assert hnsw_index_exists(model)
    result = retrieve(question="how long is the trial?")
    assert result.embedding_model == LOCAL and _models_of(result) == {LOCAL}

    # when the build runs
    report = embedding_model_build(model_id=model.pk)

    # then search still uses the active model until the switch
    assert report.indexed == len(PAGES) and embedding_model_coverage(model=model).complete
    assert retrieve(question="how long is the trial?").embedding_model == LOCAL
    voyage_requests = [r for r in voyage.requests if r.path.endswith("/embeddings")]
    assert {r.body["input_type"] for r in voyage_requests} == {"document"}


@pytest.mark.django_db
def test_activation_is_refused_until_every_document_is_covered(corpus, voyage, builds) -> None:
    model = embedding_model_add(embedder=embedder_for(VOYAGE))

    with pytest.raises(EmbeddingModelError, match=r"not ready: 0/3 documents"):
        embedding_model_activate(model=model)

    assert EmbeddingModel.objects.active().get().key == LOCAL


@pytest.mark.django_db
def test_switching_retires_the_old_model_and_keeps_its_chunks_until_dropped(
    corpus, voyage, builds
) -> None:
    # given a fully built second model
    model = embedding_model_add(embedder=embedder_for(VOYAGE))
    embedding_model_build(model_id=model.pk)
    old = EmbeddingModel.objects.get(key=LOCAL)
    old_chunks = old.chunks.count()

    # when
    embedding_model_activate(model=model)

    # then search uses the new model with query-side encoding, and the old one only retires
    result = retrieve(question="how long is the trial?")
    assert result.embedding_model == VOYAGE and _models_of(result) == {VOYAGE}
    assert voyage.requests[-1].body["input_type"] == "query"
    old.refresh_from_db()
    assert old.state == EmbeddingModel.State.RETIRED and old.chunks.count() == old_chunks

    # and dropping it deletes its chunks, its states and its HNSW index
    assert embedding_model_drop(model=old) == old_chunks
    assert not EmbeddingModel.objects.filter(key=LOCAL).exists()
    assert not Chunk.objects.exclude(embedding_model=model).exists()
    assert not hnsw_index_exists(old)


@pytest.mark.django_db
def test_the_active_model_cannot_be_dropped(corpus) -> None:
    with pytest.raises(EmbeddingModelError, match="is the active model"):
        embedding_model_drop(model=EmbeddingModel.objects.get(key=LOCAL))
    assert Chunk.objects.exists()


@pytest.mark.django_db
def test_an_edit_during_a_build_is_indexed_into_both_models(corpus, voyage, builds) -> None:
    # given a model being built
    model = embedding_model_add(embedder=embedder_for(VOYAGE))
    embedding_model_build(model_id=model.pk)

    # when a writer edits a page, and its task runs
    document = Document.objects.get(path="trial.md")
    document.body = "# Free trial\n\nThe trial now lasts 30 days.\n"
    document.save()
    states = DocumentIndexState.objects.filter(document=document)
    assert set(states.values_list("status", flat=True)) == {"pending"}
    document_index_task(document.pk)

    # then both models hold the new text
    for key in (LOCAL, VOYAGE):
        texts = Chunk.objects.filter(document=document, embedding_model__key=key)
        assert [c.text for c in texts] == ["The trial now lasts 30 days."], key
    assert embedding_model_coverage(model=model).complete


@pytest.mark.django_db
def test_a_build_is_idempotent_and_resumes_where_it_stopped(corpus, voyage, builds) -> None:
    model = embedding_model_add(embedder=embedder_for(VOYAGE))
    first = embedding_model_build(model_id=model.pk, batch_documents=1)
    requests = len(voyage.requests)

    again = embedding_model_build(model_id=model.pk)

    assert first.indexed == 3 and again.indexed == 0
    assert len(voyage.requests) == requests


@pytest.mark.django_db
def test_a_running_build_keeps_the_sweep_off_the_documents_it_will_reach(
    corpus, voyage, builds, monkeypatch
) -> None:
    # given a model being built whose pending rows are old enough for the sweep to resend
    model = embedding_model_add(embedder=embedder_for(VOYAGE))
    DocumentIndexState.objects.filter(embedding_model=model).update(
        updated_at=timezone.now() - timedelta(hours=1)
    )
    sent: list[int] = []
    monkeypatch.setattr(
        "kb.services.index_queue.index_enqueue",
        lambda *, document_ids, bulk=False: sent.extend(document_ids) or len(document_ids),
    )

    # when the sweep runs after each batch of the build
    swept: list[int] = []
    report = embedding_model_build(
        model_id=model.pk,
        batch_documents=1,
        progress=lambda done, total: swept.append(index_sweep()),
    )

    # then it resent nothing: the build did every document once
    assert report.indexed == len(PAGES)
    assert swept == [0] * len(PAGES) and sent == []


@pytest.mark.django_db
def test_a_failing_provider_leaves_the_build_pending_and_search_untouched(
    corpus, voyage, builds
) -> None:
    model = embedding_model_add(embedder=embedder_for(VOYAGE))
    voyage.fail_next(status=500, times=10)

    with pytest.raises(EmbeddingError, match="Voyage embed failed"):
        embedding_model_build(model_id=model.pk)

    assert embedding_model_coverage(model=model).pending == len(PAGES)
    assert retrieve(question="trial length").embedding_model == LOCAL


@pytest.mark.django_db
def test_kb_models_command_lists_adds_activates_and_drops(corpus, voyage, builds) -> None:
    out = StringIO()
    call_command("kb_models", "add", VOYAGE, "--wait", "--no-progress", stdout=out)
    assert "3 documents indexed" in out.getvalue()

    call_command("kb_models", "activate", VOYAGE, stdout=out)
    call_command("kb_models", "list", stdout=(listing := StringIO()))
    lines = listing.getvalue().splitlines()
    assert any(line.startswith(VOYAGE) and " active " in line and "3/3" in line for line in lines)
    assert any(line.startswith(LOCAL) and " retired " in line for line in lines)

    with pytest.raises(CommandError, match="run again with --yes"):
        call_command("kb_models", "drop", LOCAL)
    assert EmbeddingModel.objects.filter(key=LOCAL).exists()
    call_command("kb_models", "drop", LOCAL, "--yes", stdout=out)
    assert not EmbeddingModel.objects.filter(key=LOCAL).exists()

    with pytest.raises(CommandError, match="no embedding model 'voyage/nope'"):
        call_command("kb_models", "activate", "voyage/nope")
    with pytest.raises(CommandError, match="no embedder for model"):
        call_command("kb_models", "add", "openai/text-embedding-3-small")


def test_a_model_switch_never_returns_chunks_of_two_models_in_one_search(
    transactional_db, corpus, voyage
) -> None:
    """A real worker builds the new model from the real broker while searches run, then the
    switch happens under them: every search sees exactly one model, the one it reports."""

    def search() -> tuple[str, set[str]]:
        result = retrieve(question="how long does the free trial last?", limit=5)
        return result.embedding_model, _models_of(result)

    extra_env = {"VOYAGE_API_KEY": API_KEY, "VOYAGE_BASE_URL": voyage.base_url}
    with worker_process(extra_env) as worker, searching(search) as searches:
        model = embedding_model_add(embedder=embedder_for(VOYAGE))
        until(
            lambda: embedding_model_coverage(model=model).complete,
            seconds=90,
            why=lambda: worker.stdout and worker.stdout.read(2000),
        )
        embedding_model_activate(model=model)
        searched = len(searches.results)

        def new_model_searched() -> bool:
            assert not searches.errors, searches.errors
            reported = [model_key for model_key, _ in searches.results[searched:]]
            return reported.count(VOYAGE) >= 2

        until(new_model_searched, seconds=90, why="no search used the new model after the switch")

    assert not searches.errors, searches.errors
    seen = searches.results
    served = [reported for reported, _ in seen]
    assert LOCAL in served and VOYAGE in served
    assert served.index(VOYAGE) > served.index(LOCAL)
    assert all(models == {reported} for reported, models in seen), seen[:5]


@pytest.mark.django_db
def test_kb_reindex_redoes_what_is_not_current_or_everything(
    corpus, counting_embedder, monkeypatch
):
    # given one document whose chunks were lost track of
    monkeypatch.setattr("kb.services.model_builds.embedder_for", lambda key: counting_embedder)
    DocumentIndexState.objects.filter(document__path="trial.md").update(status="failed")

    # when
    call_command("kb_reindex", "--no-progress", stdout=(out := StringIO()))

    # then only it was re-indexed; --all re-indexes every document. Their texts are unchanged,
    # so every vector is reused rather than embedded again
    assert "1 documents indexed" in out.getvalue()
    call_command("kb_reindex", "--all", "--no-progress", stdout=(everything := StringIO()))
    assert f"{len(PAGES)} documents indexed" in everything.getvalue()
    assert counting_embedder.embedded_texts == []
    assert set(DocumentIndexState.objects.values_list("status", flat=True)) == {"indexed"}


@pytest.mark.django_db
def test_after_an_upgrade_that_reads_pages_anew_kb_reindex_embeds_only_what_reads_differently(
    tmp_path: Path, cached_embedder, counting_embedder, monkeypatch
):
    # given pages indexed by chunker version 24, which read indented code as prose
    pages = {
        **PAGES,
        "install.md": "# Install\n\nRun these:\n\n    pip install acme\n    acme init\n\n"
        "Then open the dashboard to finish setting up your workspace.\n",
    }
    for name, text in pages.items():
        (tmp_path / name).write_text(text)
    reading = structure.scan_lines
    with monkeypatch.context() as version_24:
        version_24.setattr(structure, "scan_lines", lambda text, **options: reading(text))
        corpus_sync(directory=tmp_path, embedder=cached_embedder, actor=SYSTEM)
    DocumentIndexState.objects.update(chunker_version="24")
    old_texts = set(Chunk.objects.values_list("text", flat=True))
    assert any("\n    pip install acme\n    acme init" in text for text in old_texts)
    model = EmbeddingModel.objects.get(key=LOCAL)

    # then after the upgrade every page is pending, and search serves the old chunks meanwhile
    assert embedding_model_coverage(model=model).indexed == 0
    assert retrieve(question="pip install acme", limit=1).hits[0].path == "install.md"

    # when
    monkeypatch.setattr("kb.services.model_builds.embedder_for", lambda key: counting_embedder)
    call_command("kb_reindex", "--no-progress", stdout=(out := StringIO()))

    # then every page is read anew, and only the text that reads differently is embedded
    assert f"{len(pages)} documents indexed" in out.getvalue()
    assert embedding_model_coverage(model=model).complete
    new_texts = set(Chunk.objects.values_list("text", flat=True))
    changed = new_texts - old_texts
    assert [text for text in changed if "```\npip install acme\nacme init\n```" in text] == list(
        changed
    )
    assert len(counting_embedder.embedded_texts) == len(changed) == 1


@pytest.mark.django_db
def test_kb_sync_during_a_build_leaves_the_new_model_a_request(
    corpus: Path, voyage, builds, local_embedder, django_capture_on_commit_callbacks, monkeypatch
) -> None:
    # given a model being built, fully covered
    model = embedding_model_add(embedder=embedder_for(VOYAGE))
    embedding_model_build(model_id=model.pk)
    sent: list[int] = []
    monkeypatch.setattr(
        "kb.services.index_queue.index_enqueue",
        lambda *, document_ids, bulk=False: sent.extend(document_ids),
    )

    # when kb_sync indexes an edited page into the active model itself
    (corpus / "trial.md").write_text("# Free trial\n\nThe trial now lasts 30 days.\n")
    with django_capture_on_commit_callbacks(execute=True):
        report = corpus_sync(directory=corpus, embedder=local_embedder, actor=SYSTEM)

    # then the page is current in the active model and pending (and sent) for the new one
    trial = Document.objects.get(path="trial.md")
    assert report.indexed == ["trial.md"]
    states = {s.embedding_model.key: s.status for s in trial.index_states.all()}
    assert states == {LOCAL: "indexed", VOYAGE: "pending"}
    assert sent == [trial.pk]
    assert not embedding_model_coverage(model=model).complete


def test_a_new_models_index_is_built_concurrently_and_a_broken_one_rebuilt(
    transactional_db, corpus, voyage, monkeypatch
) -> None:
    monkeypatch.setattr(lifecycle, "_enqueue_build", lambda model_id: None)
    statements: list[str] = []

    def record(execute, sql, params, many, context):
        statements.append(sql)
        return execute(sql, params, many, context)

    # when a model is added on a live database (no transaction open)
    with connection.execute_wrapper(record):
        model = embedding_model_add(embedder=embedder_for(VOYAGE))

    # then its index was built without blocking writes to kb_chunk
    assert any(
        s.startswith(f"CREATE INDEX CONCURRENTLY {model.hnsw_index_name}") for s in statements
    )
    assert hnsw_index_exists(model)

    # and an index left invalid by an interrupted build is dropped and built again
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE pg_index SET indisvalid = false WHERE indexrelid = %s::regclass",
            [model.hnsw_index_name],
        )
    assert not hnsw_index_exists(model)
    embedding_model_add(embedder=embedder_for(VOYAGE))
    assert hnsw_index_exists(model)


@pytest.mark.django_db
def test_a_model_whose_embedder_cannot_be_built_is_failed_not_resent_for_ever(
    corpus, voyage, builds, settings
) -> None:
    # given a model being built, then its key removed from the configuration
    model = embedding_model_add(embedder=embedder_for(VOYAGE))
    embedding_model_build(model_id=model.pk)
    settings.VOYAGE_API_KEY = ""
    embedder_for.cache_clear()
    document = Document.objects.get(path="trial.md")
    document.body = "# Free trial\n\nThe trial now lasts 30 days.\n"
    document.save()

    # when its indexing task runs
    outcome = document_index_task(document.pk)

    # then the active model is indexed, and the other is failed with the reason, one attempt
    assert outcome == "indexed,failed"
    state = DocumentIndexState.objects.get(document=document, embedding_model=model)
    assert state.status == "failed" and state.attempts == 1
    assert "voyage/voyage-3.5 needs VOYAGE_API_KEY" in state.error


def _chunker_raises(monkeypatch: pytest.MonkeyPatch, error: Exception) -> None:
    def chunk(self, sections):
        raise error

    monkeypatch.setattr(chunker._Chunker, "chunk", chunk)


@pytest.mark.django_db
def test_a_build_records_an_unchunkable_document_and_goes_on(corpus, monkeypatch) -> None:
    # given a document that is not current and that the chunker cannot fit
    model = EmbeddingModel.objects.get(key=LOCAL)
    DocumentIndexState.objects.filter(document__path="trial.md").update(status="pending")
    _chunker_raises(monkeypatch, chunker.ChunkingError("the title leaves no room for text"))

    # when the model is built
    report = embedding_model_build(model_id=model.pk)

    # then the build finishes with it recorded as unchunkable
    assert report.failed == ["trial.md"]
    state = DocumentIndexState.objects.get(document__path="trial.md", embedding_model=model)
    assert state.status == "failed" and state.error.startswith("cannot be chunked: ")


@pytest.mark.django_db
def test_a_chunker_bug_stops_a_build_instead_of_passing_for_an_unchunkable_document(
    corpus, monkeypatch
) -> None:
    # given a document that is not current, and a chunker with a bug that raises ValueError
    model = EmbeddingModel.objects.get(key=LOCAL)
    DocumentIndexState.objects.filter(document__path="trial.md").update(status="pending")
    _chunker_raises(monkeypatch, ValueError("list index out of range"))

    # when the model is built, then the error surfaces and is recorded as what it is
    with pytest.raises(ValueError, match="list index out of range"):
        embedding_model_build(model_id=model.pk)
    state = DocumentIndexState.objects.get(document__path="trial.md", embedding_model=model)
    assert state.status == "failed" and "list index out of range" in state.error
    assert "cannot be chunked" not in state.error
