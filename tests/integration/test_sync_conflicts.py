"""A folder sync never undoes people's work: it changes a document only where its file changed
since the last sync and no one changed the database copy since; everything else is a conflict,
reported and left alone unless ``--overwrite``. Real PostgreSQL and the real local embedder."""

from __future__ import annotations

import datetime
import io
import shutil
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import OutputWrapper

from config.management.commands.demo import demo_corpus_sync
from kb.actors import SYSTEM
from kb.embedders import Embedder
from kb.models import Document
from kb.services import document_retire, document_save
from kb.services.sync import corpus_sync, documents_import
from kb.services.sync.importing import folder_key
from kb.services.sync.provenance import pages_missing
from tests.conftest import CORPUS_DIR, CachedEmbedder

pytestmark = pytest.mark.django_db

# A few pages of the sample help center: two policies to retire, one to edit, one left alone.
PAGES = (
    "policies/cancellation.md",
    "policies/refunds-2023.md",
    "billing/currencies.md",
    "webhooks/retries.md",
)
IMPORTED = "guides/parking.md"


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    for page in PAGES:
        (root / page).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(CORPUS_DIR / page, root / page)
    return root


def _doc(path: str) -> Document:
    return Document.objects.select_related("superseded_by").get(path=path)


def _append(root: Path, path: str, text: str) -> None:
    page = root / path
    page.write_text(page.read_text() + f"\n{text}\n")


def _edit(path: str, *, actor: User, text: str) -> None:
    """An edit as the admin form saves it (``DocumentAdmin.save_model``)."""
    document = _doc(path)
    document.body += f"\n{text}\n"
    document_save(document=document, actor=actor)


def _move_in_admin(path: str, to: str, *, actor: User) -> Document:
    moved = _doc(path)
    moved.path = to
    document_save(document=moved, actor=actor)
    return moved


def _import(path: str, *, actor: User, embedder: Embedder) -> None:
    """An upload in admin: saved here, indexed in the background."""
    report = documents_import(
        sources=[(path, lambda: b"# Parking\n\nVisitors park free in bay C.\n")],
        embedder=embedder,
        origin="parking.md",
        actor=actor,
        index_inline=False,
        all_or_nothing=True,
    )
    assert report.queued == [path]


def _demo_sync(root: Path) -> None:
    demo_corpus_sync(corpus=str(root), stdout=OutputWrapper(io.StringIO()))


def test_restart_keeps_every_admin_change_and_reports_each_conflict(
    corpus: Path,
    writer: User,
    steward: User,
    local_embedder: Embedder,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # given the demo's first start, which loads the folder into the empty database
    _demo_sync(corpus)
    assert Document.objects.count() == len(PAGES)
    # and a steward who retires two pages, imports one and a writer who edits one in admin
    refunds_2023 = _doc("policies/refunds-2023.md")
    document_retire(document=_doc("policies/cancellation.md"), actor=steward)
    document_retire(document=refunds_2023, actor=steward, successor=_doc("webhooks/retries.md"))
    _import(IMPORTED, actor=steward, embedder=local_embedder)
    _edit("billing/currencies.md", actor=writer, text="Prices in CHF are rounded to 0.05.")
    capsys.readouterr()

    def every_admin_change_is_kept() -> None:
        assert _doc("policies/cancellation.md").status == Document.Status.RETIRED
        retired = _doc("policies/refunds-2023.md")
        assert retired.status == Document.Status.RETIRED
        assert retired.superseded_by is not None
        assert retired.superseded_by.path == "webhooks/retries.md"
        assert Document.objects.filter(path=IMPORTED).exists()
        assert "rounded to 0.05" in _doc("billing/currencies.md").body

    # when the demo restarts with the folder unchanged, then nothing of it is undone
    _demo_sync(corpus)
    every_admin_change_is_kept()
    restart = capsys.readouterr()
    assert "0 changed, 0 metadata-only, 4 unchanged, 0 removed" in restart.out
    assert "conflict" not in restart.err

    # when the files of those pages change too, then the admin's copies are still kept and each
    # one is reported with who changed it
    for page in ("policies/cancellation.md", "policies/refunds-2023.md", "billing/currencies.md"):
        _append(corpus, page, "A line added to the file.")
    _demo_sync(corpus)
    every_admin_change_is_kept()
    err = capsys.readouterr().err
    conflicts = [line for line in err.splitlines() if line.startswith("conflict")]
    assert len(conflicts) == 3
    for page, who in (
        ("policies/cancellation.md", "steward"),
        ("policies/refunds-2023.md", "steward"),
        ("billing/currencies.md", "writer"),
    ):
        assert any(page in line and f"changed by {who} on " in line for line in conflicts), err
    assert "--overwrite" in err


def test_file_change_is_applied_when_the_database_copy_is_untouched(
    corpus: Path, cached_embedder: CachedEmbedder
) -> None:
    # given a synced folder
    corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM)
    # when a file's text and its status change, and it is synced again
    page = corpus / "webhooks/retries.md"
    page.write_text(
        "---\nstatus: retired\n---\n" + page.read_text() + "\nRetries stop after 3 days.\n"
    )
    report = corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM)

    # then both are applied: no one had changed the database copy since the last sync
    assert report.indexed == ["webhooks/retries.md"]
    assert report.conflicts == []
    retries = _doc("webhooks/retries.md")
    assert "Retries stop after 3 days." in retries.body
    assert retries.status == Document.Status.RETIRED

    # and a later edit of only the date is applied as metadata
    page.write_text(
        page.read_text().replace(
            "---\nstatus: retired\n", "---\nstatus: retired\nupdated: 2027-01-02\n"
        )
    )
    again = corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM)
    assert again.updated == ["webhooks/retries.md"] and again.conflicts == []
    assert str(_doc("webhooks/retries.md").updated_on) == "2027-01-02"


def test_overwrite_takes_the_file_but_never_unretires_what_the_file_did_not_change(
    corpus: Path, cached_embedder: CachedEmbedder, writer: User, steward: User
) -> None:
    # given a synced folder, one page edited by a writer and one retired by a steward since,
    # and both files changed
    corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM)
    _edit("billing/currencies.md", actor=writer, text="Edited in admin.")
    document_retire(document=_doc("policies/cancellation.md"), actor=steward)
    _append(corpus, "billing/currencies.md", "Edited in the file.")
    _append(corpus, "policies/cancellation.md", "Edited in the file.")

    # when the sync is run without --overwrite, both are conflicts and kept
    kept = corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM)
    assert sorted(c.path for c in kept.conflicts) == [
        "billing/currencies.md",
        "policies/cancellation.md",
    ]
    assert "Edited in admin." in _doc("billing/currencies.md").body

    # when it is run with --overwrite, the files' texts replace the database copies, and the
    # report says whose changes it replaced
    report = corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM, overwrite=True)
    replaced = {c.path: (c.changed_by, c.replaced) for c in report.overwritten}
    assert replaced == {
        "billing/currencies.md": ("writer", ("body",)),
        # the retirement is kept (see below): only the text is replaced
        "policies/cancellation.md": ("steward", ("body",)),
    }
    currencies = _doc("billing/currencies.md").body
    assert "Edited in the file." in currencies and "Edited in admin." not in currencies
    # but the file did not change the retired page's status, so it stays retired
    cancellation = _doc("policies/cancellation.md")
    assert "Edited in the file." in cancellation.body
    assert cancellation.status == Document.Status.RETIRED

    # and the next sync finds nothing to do
    after = corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM)
    assert (after.indexed, after.updated, after.conflicts) == ([], [], [])


def test_kb_sync_overwrite_says_whose_change_it_replaced_and_what(
    corpus: Path, writer: User, capsys: pytest.CaptureFixture[str]
) -> None:
    # given the demo's folder, a page a writer then gave a category in admin, its file changed
    _demo_sync(corpus)
    currencies = _doc("billing/currencies.md")
    currencies.category = "pricing"
    document_save(document=currencies, actor=writer)
    _append(corpus, "billing/currencies.md", "Edited in the file.")
    capsys.readouterr()

    # when the folder is synced with --overwrite
    call_command("kb_sync", str(corpus), "--overwrite", "--no-progress")

    # then the file's version is taken, and the command names whose change it replaced and what
    err = capsys.readouterr().err
    (line,) = [line for line in err.splitlines() if line.startswith("overwritten")]
    assert line.startswith("overwritten with the file: billing/currencies.md: ")
    assert "last changed by writer on " in line and line.endswith("replaced its body, category")
    assert _doc("billing/currencies.md").category == ""


def test_a_successor_changes_through_a_sync_only_where_the_file_changed_it(
    corpus: Path, cached_embedder: CachedEmbedder, steward: User
) -> None:
    # given a synced folder and a page a steward retired in favour of another since
    corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM)
    document_retire(
        document=_doc("policies/refunds-2023.md"),
        actor=steward,
        successor=_doc("webhooks/retries.md"),
    )

    # when its file's text changes (naming no successor, as before) and the file is taken
    _append(corpus, "policies/refunds-2023.md", "Edited in the file.")
    report = corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM, overwrite=True)

    # then the file's text is applied, and the steward's successor and status are kept
    assert [c.path for c in report.overwritten] == ["policies/refunds-2023.md"]
    refunds_2023 = _doc("policies/refunds-2023.md")
    assert "Edited in the file." in refunds_2023.body
    assert refunds_2023.status == Document.Status.RETIRED
    assert refunds_2023.superseded_by is not None
    assert refunds_2023.superseded_by.path == "webhooks/retries.md"

    # and when the file itself names another successor, that is applied
    page = corpus / "policies/refunds-2023.md"
    page.write_text(
        page.read_text().replace("---\n", "---\nsuperseded_by: policies/cancellation.md\n", 1)
    )
    again = corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM)
    assert again.conflicts == []
    refunds_2023 = _doc("policies/refunds-2023.md")
    assert refunds_2023.superseded_by is not None
    assert refunds_2023.superseded_by.path == "policies/cancellation.md"
    assert refunds_2023.status == Document.Status.RETIRED


def test_prune_leaves_admin_and_import_created_documents(
    corpus: Path, tmp_path: Path, cached_embedder: CachedEmbedder, writer: User
) -> None:
    # given a synced folder, a page made in admin, an imported page and another folder's page
    corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM)
    Document.objects.create(path="admin-made.md", title="Admin", body="# Admin\n\nMade here.\n")
    _import(IMPORTED, actor=writer, embedder=cached_embedder)
    other = tmp_path / "other"
    other.mkdir()
    (other / "other.md").write_text("# Other\n\nFrom another folder.\n")
    corpus_sync(directory=other, embedder=cached_embedder, actor=SYSTEM)
    # and two of the folder's files deleted, one of whose pages was edited in admin since
    _edit("billing/currencies.md", actor=writer, text="Edited in admin.")
    (corpus / "billing/currencies.md").unlink()
    (corpus / "webhooks/retries.md").unlink()

    # when the folder is synced
    report = corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM)

    # then only its unedited page whose file is gone is removed; the edited one is reported
    assert report.removed == ["webhooks/retries.md"]
    assert [c.path for c in report.conflicts] == ["billing/currencies.md"]
    assert set(Document.objects.values_list("path", flat=True)) == {
        "admin-made.md",
        IMPORTED,
        "other.md",
        "billing/currencies.md",
        "policies/cancellation.md",
        "policies/refunds-2023.md",
    }
    origins = dict(Document.objects.values_list("path", "origin"))
    assert (origins["admin-made.md"], origins[IMPORTED], origins["other.md"]) == (
        "admin",
        "import",
        "folder",
    )


def test_a_page_from_before_provenance_is_adopted_only_while_it_matches_its_file(
    corpus: Path, cached_embedder: CachedEmbedder
) -> None:
    # given a database synced before provenance was recorded, one page since edited
    corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM)
    Document.objects.update(origin=Document.Origin.UNKNOWN, sync_folder="", synced_row_hash="")
    Document.objects.filter(path="billing/currencies.md").update(category="edited")

    # when the folder is synced, the matching pages are adopted and the edited one is kept
    report = corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM)
    assert [c.path for c in report.conflicts] == ["billing/currencies.md"]
    assert _doc("billing/currencies.md").category == "edited"
    adopted = _doc("webhooks/retries.md")
    assert adopted.origin == Document.Origin.FOLDER

    # then an adopted page follows its file again
    _append(corpus, "webhooks/retries.md", "Retries stop after 3 days.")
    again = corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM)
    assert again.indexed == ["webhooks/retries.md"]


def test_the_same_change_in_the_file_and_in_admin_is_no_conflict(
    corpus: Path, cached_embedder: CachedEmbedder, writer: User
) -> None:
    # given a synced page edited in admin, and its file then given the same text
    corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM)
    document = _doc("webhooks/retries.md")
    document.body += "\nRetries stop after 3 days.\n"
    document.updated_on = datetime.date(2027, 1, 2)
    document_save(document=document, actor=writer)
    page = corpus / "webhooks/retries.md"
    page.write_text(
        "---\nupdated: 2027-01-02\n---\n" + page.read_text() + "\nRetries stop after 3 days.\n"
    )

    # when the folder is synced, there is nothing to resolve and nothing to write
    report = corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM)
    assert (report.conflicts, report.indexed, report.updated) == ([], [], [])

    # and the page follows its file again from here
    _append(corpus, "webhooks/retries.md", "A second line.")
    again = corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM)
    assert again.indexed == ["webhooks/retries.md"]


def test_a_folder_inside_the_project_is_recorded_relative_to_it(tmp_path: Path) -> None:
    # the demo's corpus/ moves with a moved clone (its database too), so it is not absolute
    assert folder_key(settings.BASE_DIR / "corpus") == "corpus"
    assert folder_key(settings.BASE_DIR / "corpus" / ".." / "corpus") == "corpus"
    # a folder elsewhere can only be named by its absolute path
    assert folder_key(tmp_path) == str(tmp_path.resolve())


def test_a_page_renamed_in_admin_is_kept_and_not_synced_back_under_its_old_path(
    corpus: Path, cached_embedder: CachedEmbedder, writer: User
) -> None:
    # given a synced folder and a page a writer then moved to another path in admin
    corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM)
    moved = _move_in_admin(
        "billing/currencies.md", "billing/presentment-currencies.md", actor=writer
    )

    # when the folder is synced again, unchanged
    report = corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM)

    # then the moved page is neither pruned nor copied back to its old path: it is a conflict
    paths = set(Document.objects.values_list("path", flat=True))
    assert "billing/presentment-currencies.md" in paths
    assert "billing/currencies.md" not in paths
    assert report.removed == [] and report.indexed == []
    assert [(c.path, c.changed_by) for c in report.conflicts] == [
        ("billing/currencies.md", "writer")
    ]
    assert "billing/presentment-currencies.md" in report.conflicts[0].reason

    # and --overwrite takes the file's version: the page moves back to its file's path
    again = corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM, overwrite=True)
    assert [c.path for c in again.overwritten] == ["billing/currencies.md"]
    assert _doc("billing/currencies.md").pk == moved.pk
    assert not Document.objects.filter(path="billing/presentment-currencies.md").exists()
    after = corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM)
    assert (after.conflicts, after.removed, after.indexed, after.updated) == ([], [], [], [])


def test_a_page_deleted_in_admin_is_not_synced_back(
    corpus: Path, cached_embedder: CachedEmbedder, steward: User
) -> None:
    # given a synced folder and a page a steward then deleted in admin
    corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM)
    deleted = _doc("webhooks/retries.md")
    deleted._history_user = steward  # as the admin's delete view records it
    deleted.delete()

    # when the folder is synced again, then the page stays deleted and that is reported
    report = corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM)
    assert not Document.objects.filter(path="webhooks/retries.md").exists()
    assert [(c.path, c.changed_by) for c in report.conflicts] == [
        ("webhooks/retries.md", "steward")
    ]

    # and --overwrite brings it back from its file
    again = corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM, overwrite=True)
    assert [c.path for c in again.overwritten] == ["webhooks/retries.md"]
    assert Document.objects.filter(path="webhooks/retries.md").exists()


def test_a_page_pruned_with_its_file_comes_back_with_the_file(
    corpus: Path, cached_embedder: CachedEmbedder
) -> None:
    # given a synced folder whose file was deleted, and the sync that removed its page
    corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM)
    page = corpus / "webhooks/retries.md"
    text = page.read_text()
    page.unlink()
    assert corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM).removed == [
        "webhooks/retries.md"
    ]

    # when the file is put back, then its page is synced again: no person deleted it
    page.write_text(text)
    report = corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM)
    assert (report.indexed, report.conflicts) == (["webhooks/retries.md"], [])


def test_the_history_of_gone_pages_is_read_in_three_queries_however_many_are_gone(
    corpus: Path, cached_embedder: CachedEmbedder, steward: User, django_assert_num_queries
) -> None:
    # given every synced page gone: two deleted by a steward, the others by a sync's pruning
    corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM)
    for path in PAGES[:2]:
        deleted = _doc(path)
        deleted._history_user = steward
        deleted.delete()
    texts = {path: (corpus / path).read_text() for path in PAGES[2:]}
    for path in texts:
        (corpus / path).unlink()
    corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM)
    assert not Document.objects.exists()

    # when the files come back, the pages' history is read in three queries, not two per page
    for path, text in texts.items():
        (corpus / path).write_text(text)
    with django_assert_num_queries(3):
        missing = pages_missing(paths=set(PAGES), existing={}, folder=folder_key(corpus))

    # and only the steward's deletions are conflicts; the pruned pages come back
    assert sorted(missing) == sorted(PAGES[:2])
    assert all(m.conflict.changed_by == "steward" and m.moved is None for m in missing.values())
    report = corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM)
    assert sorted(report.indexed) == sorted(PAGES[2:])
    assert sorted(c.path for c in report.conflicts) == sorted(PAGES[:2])


def test_a_page_moved_in_admin_is_kept_when_its_file_is_deleted_too(
    corpus: Path, cached_embedder: CachedEmbedder, writer: User
) -> None:
    # given a synced page a writer moved in admin, and its file since deleted
    corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM)
    moved = _move_in_admin(
        "billing/currencies.md", "billing/presentment-currencies.md", actor=writer
    )
    (corpus / "billing/currencies.md").unlink()

    # when the folder is synced, then the moved page is kept: it was changed since
    report = corpus_sync(directory=corpus, embedder=cached_embedder, actor=SYSTEM)
    assert report.removed == []
    assert [c.path for c in report.conflicts] == ["billing/presentment-currencies.md"]
    assert Document.objects.filter(pk=moved.pk).exists()
