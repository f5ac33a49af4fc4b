"""kb_sync against real PostgreSQL + pgvector and the real local embedder."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from kb.actors import SYSTEM
from kb.chunking import chunker, embedding_text
from kb.embedders import EmbeddingError
from kb.embedders.hashing import HashingEmbedder
from kb.models import Chunk, Document, DocumentIndexState, EmbeddingModel
from kb.services.sync import SyncRefused, corpus_sync
from tests.conftest import CORPUS_DIR, CountingEmbedder
from tests.support.index_recounts import (
    page_vectors_match_a_recount,
    statistics_match_a_recount,
)

pytestmark = pytest.mark.django_db


def _page(title: str, text: str, **front: str) -> str:
    fields = "".join(f"{key}: {value}\n" for key, value in {"title": title, **front}.items())
    return f"---\n{fields}---\n# {title}\n\n{text}\n"


@pytest.fixture
def small_corpus(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    (root / "policies").mkdir(parents=True)
    (root / "policies" / "refunds.md").write_text(
        _page("Refund Policy", "Monthly plans are refundable within 30 days.", updated="2026-09-14")
    )
    (root / "policies" / "old-refunds.md").write_text(
        _page(
            "Old Refund Policy",
            "Refunds were possible within 14 days.",
            status="retired",
            superseded_by="policies/refunds.md",
        )
    )
    (root / "webhooks.md").write_text("# Webhooks\n\nThe invoice.paid event fires on payment.\n")
    return root


# Four pages of the sample help center prove what the whole corpus would, at a tenth of the
# embedding time: a long multi-section page (edited below), one with no front matter, and the
# page deleted below. The corpus as a whole is parsed and checked by the unit tests.
LIFECYCLE_PAGES = (
    "policies/refunds.md",
    "policies/refunds-2023.md",
    "policies/cancellation.md",
    "billing/currencies.md",
)


def test_full_corpus_lifecycle(tmp_path: Path, counting_embedder: CountingEmbedder) -> None:
    # given a copy of part of the sample help center
    corpus = tmp_path / "corpus"
    for page in LIFECYCLE_PAGES:
        (corpus / page).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(CORPUS_DIR / page, corpus / page)
    files = sorted(p.relative_to(corpus).as_posix() for p in corpus.rglob("*.md"))

    # when it is synced the first time, every document is chunked and embedded
    first = corpus_sync(directory=corpus, embedder=counting_embedder, actor=SYSTEM)
    assert first.failed == []
    assert sorted(first.indexed) == files
    assert Document.objects.count() == len(files)
    assert Chunk.objects.count() == first.chunks == len(counting_embedder.embedded_texts)

    # when it is synced again unchanged, nothing is embedded or written
    counting_embedder.embedded_texts.clear()
    again = corpus_sync(directory=corpus, embedder=counting_embedder, actor=SYSTEM)
    assert counting_embedder.embedded_texts == []
    assert (again.indexed, again.updated, again.removed, again.unchanged) == (
        [],
        [],
        [],
        len(files),
    )

    # when one file is edited, only that file is re-embedded
    refunds = corpus / "policies" / "refunds.md"
    untouched_ids = set(
        Chunk.objects.exclude(document__path="policies/refunds.md").values_list("id", flat=True)
    )
    refunds.write_text(refunds.read_text() + "\n## Gift cards\n\nGift cards are never refunded.\n")
    edited = corpus_sync(directory=corpus, embedder=counting_embedder, actor=SYSTEM)
    assert edited.indexed == ["policies/refunds.md"]
    refund_chunks = Chunk.objects.filter(document__path="policies/refunds.md")
    # only the new section is embedded; the page's other sections reuse their vectors
    assert counting_embedder.embedded_texts == [
        "Refund Policy > Gift cards\n\nGift cards are never refunded."
    ]
    assert refund_chunks.count() == edited.chunks == edited.reused + 1
    assert any("Gift cards are never refunded." in chunk.text for chunk in refund_chunks)
    assert untouched_ids <= set(Chunk.objects.values_list("id", flat=True))

    # when one file is deleted, its document and chunks are gone
    (corpus / "policies" / "refunds-2023.md").unlink()
    deleted = corpus_sync(directory=corpus, embedder=counting_embedder, actor=SYSTEM)
    assert deleted.removed == ["policies/refunds-2023.md"]
    assert not Document.objects.filter(path="policies/refunds-2023.md").exists()
    assert not Chunk.objects.filter(document__path="policies/refunds-2023.md").exists()

    # when the folder is emptied, the sync refuses and the index keeps everything
    for path in corpus.rglob("*.md"):
        path.unlink()
    count = Document.objects.count()
    with pytest.raises(SyncRefused, match="allow-prune-all"):
        corpus_sync(directory=corpus, embedder=counting_embedder, actor=SYSTEM)
    assert Document.objects.count() == count


def test_chunks_carry_vectors_of_the_embedded_text(
    small_corpus: Path, counting_embedder: CountingEmbedder
) -> None:
    corpus_sync(directory=small_corpus, embedder=counting_embedder, actor=SYSTEM)

    chunk = Chunk.objects.get(document__path="webhooks.md")
    expected = counting_embedder.embed_documents(
        [embedding_text("Webhooks", chunk.heading_path, chunk.text)]
    )[0]
    assert np.allclose(np.asarray(chunk.embedding), expected, atol=1e-5)
    assert chunk.token_count == counting_embedder.count_tokens(
        embedding_text("Webhooks", chunk.heading_path, chunk.text)
    )
    body = Document.objects.get(path="webhooks.md").body
    assert "invoice.paid" in body[chunk.char_start : chunk.char_end]


def test_front_matter_becomes_document_fields(
    small_corpus: Path, counting_embedder: CountingEmbedder
) -> None:
    corpus_sync(directory=small_corpus, embedder=counting_embedder, actor=SYSTEM)

    old = Document.objects.get(path="policies/old-refunds.md")
    assert old.status == Document.Status.RETIRED
    assert old.superseded_by == Document.objects.get(path="policies/refunds.md")
    assert str(Document.objects.get(path="policies/refunds.md").updated_on) == "2026-09-14"
    no_front_matter = Document.objects.get(path="webhooks.md")
    assert (no_front_matter.title, no_front_matter.status) == ("Webhooks", "published")


def test_metadata_change_updates_the_row_without_embedding(
    small_corpus: Path, counting_embedder: CountingEmbedder
) -> None:
    corpus_sync(directory=small_corpus, embedder=counting_embedder, actor=SYSTEM)
    counting_embedder.embedded_texts.clear()
    page = small_corpus / "policies" / "refunds.md"
    page.write_text(page.read_text().replace("updated: 2026-09-14", "updated: 2026-10-01"))

    report = corpus_sync(directory=small_corpus, embedder=counting_embedder, actor=SYSTEM)

    assert report.updated == ["policies/refunds.md"]
    assert counting_embedder.embedded_texts == []
    assert str(Document.objects.get(path="policies/refunds.md").updated_on) == "2026-10-01"


def test_tool_keys_are_kept_on_the_document_and_a_change_to_them_is_metadata_only(
    small_corpus: Path, counting_embedder: CountingEmbedder
) -> None:
    # given a Hugo page with keys that have no field here
    page = small_corpus / "guides" / "install.md"
    page.parent.mkdir()
    page.write_text(
        '+++\ntitle = "Install"\nweight = 20\ntags = ["setup"]\naliases = ["/old/install/"]\n'
        "toc = true\n+++\n# Install\n\nRun the installer.\n"
    )
    corpus_sync(directory=small_corpus, embedder=counting_embedder, actor=SYSTEM)
    document = Document.objects.get(path="guides/install.md")
    assert document.metadata == {
        "weight": 20,
        "tags": ["setup"],
        "aliases": ["/old/install/"],
        "toc": True,
    }
    assert document.aliases == ["old/install"]

    # when only a kept key changes
    counting_embedder.embedded_texts.clear()
    page.write_text(page.read_text().replace("weight = 20", "weight = 30"))
    report = corpus_sync(directory=small_corpus, embedder=counting_embedder, actor=SYSTEM)

    # then it is a metadata-only update: stored, nothing embedded, and the next sync is a no-op
    assert report.updated == ["guides/install.md"] and report.indexed == []
    assert counting_embedder.embedded_texts == []
    assert Document.objects.get(path="guides/install.md").metadata["weight"] == 30
    again = corpus_sync(directory=small_corpus, embedder=counting_embedder, actor=SYSTEM)
    assert again.updated == [] and again.indexed == []


def test_unparseable_file_is_reported_and_its_indexed_copy_kept(
    small_corpus: Path, counting_embedder: CountingEmbedder
) -> None:
    corpus_sync(directory=small_corpus, embedder=counting_embedder, actor=SYSTEM)
    before = list(
        Chunk.objects.filter(document__path="policies/refunds.md").values_list("text", flat=True)
    )
    (small_corpus / "policies" / "refunds.md").write_text("---\ntitle: [unclosed\n---\n# Body\n")
    (small_corpus / "binary.md").write_bytes(b"\x00\x01\x02PNG")

    report = corpus_sync(directory=small_corpus, embedder=counting_embedder, actor=SYSTEM)

    failed = {failure.path: failure.message for failure in report.failed}
    assert set(failed) == {"policies/refunds.md", "binary.md"}
    assert "policies/refunds.md:2" in failed["policies/refunds.md"]
    assert report.removed == []
    after = Chunk.objects.filter(document__path="policies/refunds.md").values_list(
        "text", flat=True
    )
    assert list(after) == before


def _chunker_fails_on(monkeypatch: pytest.MonkeyPatch, title: str) -> None:
    """The chunker cannot fit the document titled ``title`` (as for a title that leaves no room
    for text in the model's window); every other document chunks as usual."""
    real_chunk = chunker._Chunker.chunk

    def chunk(self, sections):
        if self._title == title:
            raise chunker.ChunkingError("the title leaves no room for text")
        return real_chunk(self, sections)

    monkeypatch.setattr(chunker._Chunker, "chunk", chunk)


def test_unchunkable_file_is_reported_and_the_others_are_synced(
    small_corpus: Path, counting_embedder: CountingEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given a folder where one file cannot be chunked
    (small_corpus / "unchunkable.md").write_text(_page("Unchunkable", "Some text."))
    _chunker_fails_on(monkeypatch, "Unchunkable")

    # when it is synced
    report = corpus_sync(directory=small_corpus, embedder=counting_embedder, actor=SYSTEM)

    # then that file is reported failed with its path and reason, and the others are indexed
    assert [(failure.path, failure.message) for failure in report.failed] == [
        ("unchunkable.md", "unchunkable.md: cannot be chunked: the title leaves no room for text")
    ]
    assert sorted(report.indexed) == [
        "policies/old-refunds.md",
        "policies/refunds.md",
        "webhooks.md",
    ]
    assert not Document.objects.filter(path="unchunkable.md").exists()
    assert Chunk.objects.filter(document__path="webhooks.md").exists()


def test_kb_sync_command_reports_an_unchunkable_file_and_goes_on(
    small_corpus: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # given a folder where one file cannot be chunked
    (small_corpus / "unchunkable.md").write_text(_page("Unchunkable", "Some text."))
    _chunker_fails_on(monkeypatch, "Unchunkable")

    # when kb_sync runs, it fails on that file only, naming it, after syncing the others
    with pytest.raises(CommandError, match="1 file"):
        call_command("kb_sync", str(small_corpus), "--no-progress")
    captured = capsys.readouterr()
    assert "failed: unchunkable.md: cannot be chunked" in captured.err
    assert "3 changed" in captured.out and "1 failed" in captured.out


def test_embedder_failure_keeps_the_indexed_copy(
    small_corpus: Path, counting_embedder: CountingEmbedder
) -> None:
    corpus_sync(directory=small_corpus, embedder=counting_embedder, actor=SYSTEM)
    page = small_corpus / "webhooks.md"
    page.write_text(page.read_text() + "\nA second paragraph.\n")
    counting_embedder.failure = EmbeddingError("provider unavailable")

    report = corpus_sync(directory=small_corpus, embedder=counting_embedder, actor=SYSTEM)

    assert [failure.path for failure in report.failed] == ["webhooks.md"]
    assert "second paragraph" not in Document.objects.get(path="webhooks.md").body
    state = DocumentIndexState.objects.get(document__path="webhooks.md")
    assert state.status == DocumentIndexState.Status.INDEXED


def test_empty_folder_prunes_only_when_forced(
    small_corpus: Path, counting_embedder: CountingEmbedder
) -> None:
    corpus_sync(directory=small_corpus, embedder=counting_embedder, actor=SYSTEM)
    # Pruning removes only documents synced from the folder being synced: it is emptied here.
    for page in small_corpus.rglob("*.md"):
        page.unlink()

    with pytest.raises(SyncRefused):
        corpus_sync(directory=small_corpus, embedder=counting_embedder, actor=SYSTEM)
    report = corpus_sync(
        directory=small_corpus, embedder=counting_embedder, actor=SYSTEM, allow_prune_all=True
    )

    assert len(report.removed) == 3
    assert not Document.objects.exists() and not Chunk.objects.exists()


def test_missing_directory_is_refused(tmp_path: Path, counting_embedder: CountingEmbedder) -> None:
    with pytest.raises(SyncRefused, match="not a directory"):
        corpus_sync(directory=tmp_path / "nope", embedder=counting_embedder, actor=SYSTEM)


def test_first_registered_model_is_active_with_its_hnsw_index(
    small_corpus: Path, counting_embedder: CountingEmbedder
) -> None:
    from django.db import connection

    corpus_sync(directory=small_corpus, embedder=counting_embedder, actor=SYSTEM)

    model = EmbeddingModel.objects.get()
    assert (model.key, model.state, model.dimensions, model.max_input_tokens) == (
        "local/all-MiniLM-L6-v2",
        "active",
        384,
        256,
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = %s", [model.hnsw_index_name]
        )
        (definition,) = cursor.fetchone()
    assert "hnsw" in definition and "vector(384)" in definition
    assert f"embedding_model_id = {model.pk}" in definition


def test_kb_sync_command_prints_a_summary_and_fails_on_skipped_files(
    small_corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    call_command("kb_sync", str(small_corpus), "--no-progress")
    assert "3 changed" in capsys.readouterr().out

    (small_corpus / "bad.md").write_bytes(b"\xff\xfe not utf-8")
    with pytest.raises(CommandError, match="1 file"):
        call_command("kb_sync", str(small_corpus), "--no-progress")
    captured = capsys.readouterr()
    assert "bad.md" in captured.err and "0 changed" in captured.out


def test_a_file_without_a_date_gets_today_when_its_text_changes(
    small_corpus: Path, counting_embedder: CountingEmbedder
) -> None:
    # given a synced page whose file states no `updated:` date
    corpus_sync(directory=small_corpus, embedder=counting_embedder, actor=SYSTEM)
    assert Document.objects.get(path="webhooks.md").updated_on is None
    page = small_corpus / "webhooks.md"

    # when its text changes, the page is dated today (the newer page wins in answers)
    page.write_text(page.read_text() + "\nA second paragraph.\n")
    corpus_sync(directory=small_corpus, embedder=counting_embedder, actor=SYSTEM)
    assert Document.objects.get(path="webhooks.md").updated_on == timezone.localdate()

    # and a later change of only its metadata does not take the date back
    page.write_text("---\ncategory: api\n---\n" + page.read_text())
    report = corpus_sync(directory=small_corpus, embedder=counting_embedder, actor=SYSTEM)
    assert report.updated == ["webhooks.md"]
    assert Document.objects.get(path="webhooks.md").updated_on == timezone.localdate()

    # while a file that states its date keeps it, text change or not
    refunds = small_corpus / "policies" / "refunds.md"
    refunds.write_text(refunds.read_text() + "\nAnnual plans too.\n")
    corpus_sync(directory=small_corpus, embedder=counting_embedder, actor=SYSTEM)
    assert str(Document.objects.get(path="policies/refunds.md").updated_on) == "2026-09-14"


def test_an_empty_folder_never_touches_another_folders_documents(
    small_corpus: Path, tmp_path: Path, counting_embedder: CountingEmbedder
) -> None:
    # given an index synced from one folder
    corpus_sync(directory=small_corpus, embedder=counting_embedder, actor=SYSTEM)
    empty = tmp_path / "empty"
    empty.mkdir()

    # when an empty, never-synced folder is synced, even with --allow-prune-all
    report = corpus_sync(
        directory=empty, embedder=counting_embedder, actor=SYSTEM, allow_prune_all=True
    )

    # then nothing is removed: the documents came from the other folder
    assert report.removed == []
    assert Document.objects.count() == 3


# --- issue 26 ----------------------------------------------------------------------------------


@pytest.fixture
def hashing_embedder() -> HashingEmbedder:
    # Bookkeeping, not meaning, is under test: the hashing embedder keeps these tests fast.
    return HashingEmbedder()


def test_a_link_to_a_file_outside_the_folder_is_refused_and_named(
    tmp_path: Path, hashing_embedder: HashingEmbedder
) -> None:
    # given a secret outside the folder and a link to it inside, beside a link that stays inside
    secret = tmp_path / "secret.txt"
    secret.write_text("root:x:0:0:root:/root:/bin/bash\n")
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "passwd.md").symlink_to(secret)
    (folder / "real.md").write_text("# Real\n\nText.\n")
    (folder / "alias.md").symlink_to(folder / "real.md")

    # when it is synced
    report = corpus_sync(directory=folder, embedder=hashing_embedder, actor=SYSTEM)

    # then the outside link is reported, never stored, and the rest syncs
    assert [failure.path for failure in report.failed] == ["passwd.md"]
    assert "a link to a file outside the folder" in report.failed[0].message
    assert sorted(Document.objects.values_list("path", flat=True)) == ["alias.md", "real.md"]
    assert not Document.objects.filter(body__contains="root:x").exists()


def test_a_categories_file_linked_from_outside_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "labels.json"
    outside.write_text('{"api": "API"}')
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "categories.json").symlink_to(outside)

    with pytest.raises(CommandError, match="outside the folder; nothing was synced"):
        call_command("kb_sync", str(folder), "--no-progress")


def test_one_bad_file_is_reported_and_the_files_after_it_sync(
    tmp_path: Path, hashing_embedder: HashingEmbedder
) -> None:
    # issue 26 (12): a title past its column's limit stopped kb_sync for the whole folder
    (tmp_path / "a.md").write_text("# A\n\nText.\n")
    (tmp_path / "b-long.md").write_text(f"---\ntitle: {'T' * 5_000}\n---\nText.\n")
    (tmp_path / "c-set.md").write_text("---\nx: !!set {a, b}\n---\n# C\n\nText.\n")
    (tmp_path / "d.md").write_text("# D\n\nText.\n")

    report = corpus_sync(directory=tmp_path, embedder=hashing_embedder, actor=SYSTEM)

    assert sorted(failure.path for failure in report.failed) == ["b-long.md", "c-set.md"]
    assert sorted(Document.objects.values_list("path", flat=True)) == ["a.md", "d.md"]


def test_a_synced_internal_page_whose_file_drops_its_front_matter_stays_internal(
    tmp_path: Path, hashing_embedder: HashingEmbedder
) -> None:
    # issue 26 (2), for a folder: a file's silence never widens who may see a page
    page = tmp_path / "rt" / "p.md"
    page.parent.mkdir()
    page.write_text("---\naudience: internal\n---\n# X\n\nRX-4471\n")
    corpus_sync(directory=tmp_path, embedder=hashing_embedder, actor=SYSTEM)

    page.write_text("# X\n\nRX-4471 updated\n")
    report = corpus_sync(directory=tmp_path, embedder=hashing_embedder, actor=SYSTEM)

    document = Document.objects.get(path="rt/p.md")
    assert (document.audience, report.indexed) == ("internal", ["rt/p.md"])
    assert "kept rt/p.md internal: the file does not say audience:" in " ".join(report.warnings)


def _pages_of_two_sections(folder: Path, count: int, version: str) -> None:
    for number in range(count):
        (folder / f"p{number}.md").write_text(
            f"# Page {number}\n\n## Plans\n\nPlan {number} costs {version} euros.\n\n"
            f"## Seats\n\nSeat {number} is {version} of many.\n"
        )


def _statements(captured: CaptureQueriesContext, *fragments: str) -> list[str]:
    """The statements of ``captured`` that hold one of ``fragments``, in order."""
    return [
        query["sql"]
        for query in captured.captured_queries
        if any(fragment in query["sql"] for fragment in fragments)
    ]


def test_a_windows_pages_are_written_with_one_statement_for_their_chunks(
    tmp_path: Path, hashing_embedder: HashingEmbedder
) -> None:
    # given six pages of two sections each: one window of texts
    _pages_of_two_sections(tmp_path, 6, "ten")

    # when they are synced, and three of them edited and synced again
    with CaptureQueriesContext(connection) as statements:
        first = corpus_sync(directory=tmp_path, embedder=hashing_embedder, actor=SYSTEM)
        _pages_of_two_sections(tmp_path, 3, "twenty")
        second = corpus_sync(directory=tmp_path, embedder=hashing_embedder, actor=SYSTEM)
    inserts = _statements(statements, "INSERT INTO kb_chunk")

    # then each sync wrote its pages' chunks in one statement (the statement triggers that
    # keep the BM25 statistics and the page vectors ran once a sync), and every page is whole:
    # its chunks, its index state's count and the statistics all agree
    assert (len(first.indexed), len(second.indexed), len(inserts)) == (6, 3, 2)
    states = dict(DocumentIndexState.objects.values_list("document__path", "chunk_count"))
    chunks = {f"p{n}.md": Chunk.objects.filter(document__path=f"p{n}.md").count() for n in range(6)}
    assert states == chunks and set(chunks.values()) == {2}
    assert Chunk.objects.filter(text__contains="twenty").count() == 6
    assert not Chunk.objects.filter(document__path="p0.md", text__contains="ten").exists()
    statistics_match_a_recount()
    page_vectors_match_a_recount()


def test_a_refused_page_leaves_the_others_of_its_window_written(
    tmp_path: Path, hashing_embedder: HashingEmbedder, writer
) -> None:
    # given a retired page a doc writer's sync would republish, between two new pages
    Document.objects.create(path="b.md", title="B", body="# B\n\nOld text.\n", status="retired")
    (tmp_path / "a.md").write_text("# A\n\nText of a.\n")
    (tmp_path / "b.md").write_text("# B\n\nNew text.\n")
    (tmp_path / "c.md").write_text("# C\n\nText of c.\n")

    # when
    report = corpus_sync(
        directory=tmp_path, embedder=hashing_embedder, actor=writer, overwrite=True
    )

    # then the refusal is reported, the retired page is as it was and the others are indexed
    assert [failure.path for failure in report.failed] == ["b.md"]
    assert "only a policy steward" in report.failed[0].message
    assert sorted(report.indexed) == ["a.md", "c.md"]
    assert Document.objects.get(path="b.md").status == "retired"
    assert not Chunk.objects.filter(document__path="b.md").exists()
    assert sorted(Chunk.objects.values_list("document__path", flat=True)) == ["a.md", "c.md"]


def test_a_windows_pages_are_each_written_once_with_their_synced_hash(
    tmp_path: Path, hashing_embedder: HashingEmbedder
) -> None:
    # given six new pages and, once synced, three of them edited
    _pages_of_two_sections(tmp_path, 6, "ten")

    # when both are synced
    with CaptureQueriesContext(connection) as statements:
        corpus_sync(directory=tmp_path, embedder=hashing_embedder, actor=SYSTEM)
        _pages_of_two_sections(tmp_path, 3, "twenty")
        second = corpus_sync(directory=tmp_path, embedder=hashing_embedder, actor=SYSTEM)
    writes = _statements(statements, 'INSERT INTO "kb_document"', 'UPDATE "kb_document"')

    # then each page's row was written once a sync, the synced hash in the same write, and
    # that hash is the row's as saved: the rows count as untouched since the sync
    assert [sql.split(" ", 1)[0] for sql in writes] == ["INSERT"] * 6 + ["UPDATE"] * 3
    assert len(second.indexed) == 3
    for document in Document.objects.all():
        assert document.synced_row_hash == document.row_hash(), document.path


def test_a_sync_sends_the_test_questions_of_the_pages_it_indexed_after_one_lookup(
    tmp_path: Path,
    hashing_embedder: HashingEmbedder,
    django_capture_on_commit_callbacks,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from assistant import receivers
    from kb.models import TestQuestion

    # given six synced pages, two of which have test questions
    _pages_of_two_sections(tmp_path, 6, "ten")
    corpus_sync(directory=tmp_path, embedder=hashing_embedder, actor=SYSTEM)
    for path in ("p1.md", "p4.md"):
        TestQuestion.objects.create(
            document=Document.objects.get(path=path), question="What does it cost?", facts=["ten"]
        )
    sent: list[list[object]] = []
    monkeypatch.setattr(
        receivers.test_questions_run_task, "apply_async", lambda args: sent.append(args)
    )

    # when all six are edited and synced again (one window), and the write commits
    _pages_of_two_sections(tmp_path, 6, "twenty")
    with (
        CaptureQueriesContext(connection) as statements,
        django_capture_on_commit_callbacks(execute=True),
    ):
        report = corpus_sync(directory=tmp_path, embedder=hashing_embedder, actor=SYSTEM)
    lookups = _statements(statements, 'FROM "kb_testquestion"')

    # then the questions of the two pages are sent to be answered again, found in one query
    ids = dict(Document.objects.values_list("path", "id"))
    assert len(report.indexed) == 6
    assert sent == [[ids["p1.md"], "indexed", None], [ids["p4.md"], "indexed", None]]
    assert len(lookups) == 1
