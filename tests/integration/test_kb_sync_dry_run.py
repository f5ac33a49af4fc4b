"""`kb_sync --dry-run`: what a documentation folder would become, nothing written (issue 15)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from kb.models import Chunk, Document
from tests.conftest import CountingEmbedder

pytestmark = pytest.mark.django_db


@pytest.fixture
def hugo_folder(tmp_path: Path) -> Path:
    root = tmp_path / "content"
    (root / "admin").mkdir(parents=True)
    (root / "admin" / "proxy.md").write_text(
        "---\ntitle: Proxy settings\ndraft: true\nmenu:\n\tdocs:\n\t\tweight: 2\n---\n"
        "## Setting a proxy {#proxy}\n\n{{< hint info >}}\nSet HTTPS_PROXY.\n{{< /hint >}}\n\n"
        '{{% include "parts/restart.md" %}}\n'
    )
    (root / "_index.md").write_text('+++\ntitle = "Agent docs"\n+++\nWelcome.\n')
    return root


def test_dry_run_prints_what_each_file_would_become_and_writes_nothing(
    hugo_folder: Path,
    counting_embedder: CountingEmbedder,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # given
    monkeypatch.setattr("kb.management.commands.kb_sync.active_embedder", lambda: counting_embedder)

    # when
    call_command("kb_sync", str(hugo_folder), "--dry-run", "--no-progress")

    # then
    out = capsys.readouterr().out
    assert "_index.md: 'Agent docs' published, public, 1 chunk(s)" in out
    assert "admin/proxy.md: 'Proxy settings' draft, public, 1 chunk(s)" in out
    assert "  section: Setting a proxy\n" in out
    assert 'admin/proxy.md: line 14: {{% include "parts/restart.md" %}} not resolved' in out
    assert "front matter keys kept as metadata, not used: menu (1 file)" in out
    assert "dry run: 2 file(s) would load, 0 rejected, 2 warning(s); nothing was written" in out
    assert (Document.objects.count(), Chunk.objects.count()) == (0, 0)
    assert counting_embedder.embedded_texts == []


def test_dry_run_names_a_rejected_file_and_fails(
    hugo_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (hugo_folder / "broken.md").write_text('+++\ntitle = "Broken\n+++\n')

    with pytest.raises(CommandError, match="1 file"):
        call_command("kb_sync", str(hugo_folder), "--dry-run")

    out = capsys.readouterr().out
    assert "rejected: broken.md:2: front matter: invalid TOML" in out
    assert "2 file(s) would load, 1 rejected" in out
    assert Document.objects.count() == 0
