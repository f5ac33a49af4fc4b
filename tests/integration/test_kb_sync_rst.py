"""kb_sync of a small Sphinx folder (`tests/data/sphinx_docs`): reStructuredText pages load,
chunk and render as Markdown pages do, against real PostgreSQL."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client

from kb.actors import SYSTEM
from kb.models import Chunk, Document
from kb.services.sync import corpus_sync
from tests.conftest import CountingEmbedder

pytestmark = pytest.mark.django_db

SPHINX_DOCS = Path(__file__).resolve().parents[1] / "data" / "sphinx_docs"
PAGES = ["billing.rst", "guide/install.rst", "index.rst"]


@pytest.fixture
def sphinx_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    shutil.copytree(SPHINX_DOCS, folder)
    (tmp_path / "outside.rst").write_text("Text from outside the folder.\n")
    return folder


def test_dry_run_loads_every_page_with_no_markup_left_and_reports_what_it_lost(
    sphinx_folder: Path,
    counting_embedder: CountingEmbedder,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # given
    monkeypatch.setattr("kb.management.commands.kb_sync.active_embedder", lambda: counting_embedder)

    # when
    call_command("kb_sync", str(sphinx_folder), "--dry-run", "--fail-on-markup", "--no-progress")

    # then
    out = capsys.readouterr().out
    assert "index.rst: 'Acme Help Desk' published, public, 1 chunk(s)" in out
    assert "billing.rst: 'Billing' published, public, 2 chunk(s)" in out
    assert "  section: Installing Acme > Troubleshooting\n" in out
    assert "warning: guide/_requirements.rst: included by guide/install.rst, read as part" in out
    assert (
        'guide/install.rst: line 34: unknown directive ".. acme-shell::": its content is read '
        "as code"
    ) in out
    assert "guide/install.rst: line 38: include ../../outside.rst: outside the folder" in out
    assert 'billing.rst: line 21: unknown role ":ticket:"' in out
    assert (
        "dry run: 3 file(s) would load, 0 rejected, 5 warning(s), markup left in 0 heading "
        "path(s) and 0 embedded text(s); nothing was written"
    ) in out
    assert Document.objects.count() == 0


def test_synced_pages_chunk_link_and_render_like_markdown_pages(
    sphinx_folder: Path, counting_embedder: CountingEmbedder, client: Client
) -> None:
    # when the folder is synced
    report = corpus_sync(directory=sphinx_folder, embedder=counting_embedder, actor=SYSTEM)

    # then every page is a document, with its field-list metadata and its sections as chunks
    assert report.failed == []
    assert sorted(report.indexed) == PAGES
    billing = Document.objects.get(path="billing.rst")
    assert (billing.title, billing.category) == ("Billing", "billing")
    paths = set(Chunk.objects.filter(document__path="guide/install.rst").values_list(
        "heading_path", flat=True
    ))  # fmt: skip
    assert paths == {
        "Installing Acme",
        "Installing Acme > Download",
        "Installing Acme > Troubleshooting",
    }
    texts = " ".join(Chunk.objects.values_list("text", flat=True))
    assert "Acme needs Python 3.10 or newer" in texts  # the include, inside the folder
    assert "outside the folder" not in texts and "graph TD" not in texts  # a diagram: a picture
    assert "```\n$ acme doctor --fix\n```" in texts  # an unknown directive's commands: code
    assert "Never share your API key." in texts and ":guilabel:" not in texts

    # and a :ref: on one page lands on the section of the other page's rendered /docs page
    home = client.get("/docs/index.rst")
    assert home.status_code == 200
    assert b'href="/docs/billing.rst#refunds"' in home.content
    assert b'href="/docs/guide/install.rst"' in home.content
    page = client.get("/docs/billing.rst")
    assert b'id="refunds"' in page.content
    assert b"We refund any payment within <strong>30 days</strong>." in page.content


def test_a_change_to_an_included_file_reindexes_the_page_that_includes_it(
    sphinx_folder: Path, counting_embedder: CountingEmbedder
) -> None:
    # given a synced folder
    corpus_sync(directory=sphinx_folder, embedder=counting_embedder, actor=SYSTEM)
    counting_embedder.embedded_texts.clear()

    # when nothing changes, nothing is embedded
    again = corpus_sync(directory=sphinx_folder, embedder=counting_embedder, actor=SYSTEM)
    assert (again.indexed, counting_embedder.embedded_texts) == ([], [])

    # when only the included file changes, the page that includes it is indexed again
    (sphinx_folder / "guide" / "_requirements.rst").write_text("Acme needs Python 3.12.\n")
    changed = corpus_sync(directory=sphinx_folder, embedder=counting_embedder, actor=SYSTEM)
    assert changed.indexed == ["guide/install.rst"]
    assert "Acme needs Python 3.12." in Document.objects.get(path="guide/install.rst").body
