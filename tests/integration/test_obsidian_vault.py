"""An Obsidian vault synced as Obsidian renders it (issue 29): tests/data/obsidian-vault."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from django.core.management import call_command

from kb.actors import SYSTEM
from kb.models import Chunk, Document
from kb.rendering import document_render
from kb.services.sync import corpus_sync
from tests.conftest import CountingEmbedder

pytestmark = pytest.mark.django_db

VAULT = Path(__file__).resolve().parents[1] / "data" / "obsidian-vault"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return Path(shutil.copytree(VAULT, tmp_path / "vault"))


def test_a_dry_run_of_the_vault_leaves_no_markup(
    vault: Path,
    counting_embedder: CountingEmbedder,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr("kb.management.commands.kb_sync.active_embedder", lambda: counting_embedder)

    call_command("kb_sync", str(vault), "--dry-run", "--fail-on-markup")

    out = capsys.readouterr().out
    assert "read as an Obsidian vault" in out
    assert "markup left in 0 heading path(s) and 0 embedded text(s)" in out
    assert "dry run: 3 file(s) would load, 0 rejected" in out  # the template is not a page


def test_a_vault_copied_without_its_settings_folder_is_still_read_as_a_vault(
    vault: Path,
    counting_embedder: CountingEmbedder,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # given: the notes alone, as a copy that leaves out hidden folders makes them (and without
    # the settings that name it, the templates folder would be pages: it goes too)
    shutil.rmtree(vault / ".obsidian")
    shutil.rmtree(vault / "Templates")
    monkeypatch.setattr("kb.management.commands.kb_sync.active_embedder", lambda: counting_embedder)

    # when
    call_command("kb_sync", str(vault), "--dry-run", "--fail-on-markup")

    # then: its wiki links tell it apart
    out = capsys.readouterr().out
    assert "read as an Obsidian vault" in out
    assert "markup left in 0 heading path(s) and 0 embedded text(s)" in out


def test_the_same_folder_read_as_a_site_reports_what_it_left(
    vault: Path,
    counting_embedder: CountingEmbedder,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr("kb.management.commands.kb_sync.active_embedder", lambda: counting_embedder)

    with pytest.raises(Exception, match="markup left"):
        call_command("kb_sync", str(vault), "--dry-run", "--fail-on-markup", "--markup", "sites")

    out = capsys.readouterr().out
    # callouts, footnotes and highlights are read in every folder; the rest needs the vault
    for kind in ("wiki link", "embed", "block id", "Obsidian comment"):
        assert f"markup left, {kind}:" in out


def test_a_synced_vault_links_aliases_and_embeds_as_obsidian_shows_them(
    vault: Path, counting_embedder: CountingEmbedder
) -> None:
    # when
    report = corpus_sync(directory=vault, embedder=counting_embedder, actor=SYSTEM)

    # then
    assert report.failed == []
    assert sorted(Document.objects.values_list("path", flat=True)) == [
        "Billing/Refunds.md",
        "Setup/Install.md",
        "Welcome.md",
    ]
    install = Document.objects.get(path="Setup/Install.md")
    paths = set(Document.objects.values_list("path", flat=True))
    html = document_render(body=install.body, path=install.path, existing=paths.intersection).html
    assert 'href="/docs/Billing/Refunds.md#eligibility"' in html  # [[Refunds#Eligibility|...]]
    assert (
        'href="/docs/Billing/Refunds.md" rel="noopener noreferrer">Money back</a>' in html
    )  # an alias
    assert "<strong>Before you start</strong>" in html and "[!tip]" not in html
    welcome = Chunk.objects.filter(document__path="Welcome.md").values_list("text", flat=True)
    assert any("Refunds are paid within 30 days" in text for text in welcome)  # the embed
    refunds = Document.objects.get(path="Billing/Refunds.md")
    assert "<mark>30 days</mark>" in document_render(body=refunds.body).html
    assert "Check this with finance" not in refunds.body


def test_a_note_with_windows_line_ends_is_translated_too(
    vault: Path, counting_embedder: CountingEmbedder
) -> None:
    # given
    note = vault / "Welcome.md"
    note.write_bytes(note.read_bytes().replace(b"\n", b"\r\n") + b"A block. ^blk\r\n")

    # when
    corpus_sync(directory=vault, embedder=counting_embedder, actor=SYSTEM)

    # then: translated once, nothing of it written twice
    body = Document.objects.get(path="Welcome.md").body
    assert "[Install](/Setup/Install.md)" in body and "^blk" not in body
    assert body.startswith("# Welcome\n\nStart with [Install](/Setup/Install.md)")
    assert body.count("# Welcome") == 1


def test_a_note_with_front_matter_and_windows_line_ends_keeps_its_text_whole(
    vault: Path, counting_embedder: CountingEmbedder
) -> None:
    # given
    (vault / "Setup" / "Keys.md").write_bytes(
        b"---\r\ntitle: Keys\r\n---\r\nSee [[Install]] first.\r\nThen go on.\r\n"
    )

    # when
    corpus_sync(directory=vault, embedder=counting_embedder, actor=SYSTEM)

    # then
    document = Document.objects.get(path="Setup/Keys.md")
    assert document.title == "Keys"
    assert document.body.startswith("See [Install](/Setup/Install.md) first.")
    assert "SeeSee" not in document.body
