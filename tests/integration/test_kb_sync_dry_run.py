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
    assert (
        "dry run: 2 file(s) would load, 0 rejected, 2 warning(s), markup left in 0 heading "
        "path(s) and 0 embedded text(s); nothing was written"
    ) in out
    assert "markup left:" not in out
    assert (Document.objects.count(), Chunk.objects.count()) == (0, 0)
    assert counting_embedder.embedded_texts == []


def test_dry_run_lists_each_files_earlier_addresses(
    hugo_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # given: Hugo aliases (absolute, and relative to the page's folder) and Jekyll redirect_from
    (hugo_folder / "admin" / "tls.md").write_text(
        '+++\ntitle = "TLS"\naliases = ["/old/certificates/", "certs"]\n+++\nText.\n'
    )
    (hugo_folder / "install.md").write_text(
        "---\ntitle: Install\nredirect_from: /2019/05/setup.html\n---\nText.\n"
    )

    # when
    call_command("kb_sync", str(hugo_folder), "--dry-run")

    # then: as the /docs/ addresses that will redirect; a page without any lists none
    out = capsys.readouterr().out
    assert (
        "admin/tls.md: 'TLS' published, public, 1 chunk(s)\n"
        "  aliases: /docs/old/certificates, /docs/admin/certs\n"
    ) in out
    assert "  aliases: /docs/2019/05/setup.html\n" in out
    assert out.count("aliases:") == 2
    assert Document.objects.count() == 0


def test_dry_run_loads_docusaurus_mdx_pages_like_markdown(
    hugo_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (hugo_folder / "keys.mdx").write_text(
        "---\ntitle: Keys\n---\nimport Tabs from '@theme/Tabs';\n\n## Rotating\n\nRotate.\n"
    )

    call_command("kb_sync", str(hugo_folder), "--dry-run")

    out = capsys.readouterr().out
    assert "keys.mdx: 'Keys' published, public, 1 chunk(s)\n  section: Rotating\n" in out
    assert "3 file(s) would load, 0 rejected" in out


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


def test_dry_run_names_markup_left_outside_code_and_fails_on_it_when_asked(
    hugo_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # given: marks no rule removes (an attribute block that does not end its heading is text to
    # Hugo and Pandoc, a ":::" inside a line is not a fence), and the same marks inside code
    (hugo_folder / "boxes.md").write_text(
        "---\ntitle: Boxes\n---\n## Install {#install} on Linux\n\n"
        "A box opens with ::: and its kind.\n\n"
        "```markdown\n:::tip\n## Install {#install}\n```\n\nWrite `:::tip` to open one.\n"
    )

    # when
    with pytest.raises(CommandError, match=r"markup left in 1 heading path\(s\) and 1 embedded"):
        call_command("kb_sync", str(hugo_folder), "--dry-run", "--fail-on-markup")

    # then: each line is named once; the code is not
    out = capsys.readouterr().out
    assert "boxes.md: 'Boxes' published, public, 1 chunk(s)\n" in out
    assert "  markup left: 'Boxes > Install {#install} on Linux'\n" in out
    assert "  markup left: 'A box opens with ::: and its kind.'\n" in out
    assert out.count("markup left: ") == 2
    assert "markup left in 1 heading path(s) and 1 embedded text(s); nothing was written" in out


def test_dry_run_reports_markup_left_without_failing_unless_asked(
    hugo_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (hugo_folder / "boxes.md").write_text("A box opens with ::: and its kind.\n")

    call_command("kb_sync", str(hugo_folder), "--dry-run")

    assert "  markup left: 'A box opens with ::: and its kind.'\n" in capsys.readouterr().out


def test_fail_on_markup_goes_with_dry_run(hugo_folder: Path) -> None:
    with pytest.raises(CommandError, match="--fail-on-markup goes with --dry-run"):
        call_command("kb_sync", str(hugo_folder), "--fail-on-markup")
    assert Document.objects.count() == 0


def test_dry_run_rejects_a_link_out_of_the_folder_without_printing_its_target(
    tmp_path: Path,
    counting_embedder: CountingEmbedder,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # issue 26 (1): the preview reads files as the sync does, so it must not show a secret either
    monkeypatch.setattr("kb.management.commands.kb_sync.active_embedder", lambda: counting_embedder)
    secret = tmp_path / "secret.md"
    secret.write_text("# Root\n\nroot:x:0:0:root:/root:/bin/bash\n")
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "passwd.md").symlink_to(secret)

    with pytest.raises(CommandError, match="1 file"):
        call_command("kb_sync", str(folder), "--dry-run", "--no-progress")

    out = capsys.readouterr().out
    assert "rejected: passwd.md: a link to a file outside the folder" in out
    assert "'Root'" not in out and "root:x" not in out
