"""One rule for a document path on every way in: the admin form, an upload, a zip entry, a folder
sync and the CLI (issue 26, item 8: a newline in a zip entry's name made /docs/ a 500 for every
visitor; ESC was accepted too)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from kb.actors import SYSTEM
from kb.embedders.hashing import HashingEmbedder
from kb.models import Document
from kb.services import embedding_model_register
from kb.services.sync import corpus_sync

pytestmark = pytest.mark.django_db

BAD_PATHS = ["rt/new\nline.md", "rt/esc\x1b[2J.md", "rt/\u202eevil.md"]


@pytest.fixture
def embedder() -> HashingEmbedder:
    embedder = HashingEmbedder()
    embedding_model_register(embedder=embedder)
    return embedder


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


@pytest.mark.parametrize("path", BAD_PATHS)
def test_a_zip_entry_with_a_control_character_is_refused_and_the_index_still_serves(
    steward_client: Client, embedder: HashingEmbedder, path: str
) -> None:
    archive = _zip({path: b"# New\n\nText.\n", "rt/fine.md": b"# Fine\n\nText.\n"})

    page = steward_client.post(
        "/admin/kb/document/import/",
        {"file": SimpleUploadedFile("docs.zip", archive), "target": "/"},
        follow=True,
    )

    assert page.status_code == 200
    assert "invalid document path: the path contains U+" in page.content.decode()
    assert not Document.objects.exists()  # an upload is all or nothing
    assert Client().get("/docs/").status_code == 200


def test_a_single_upload_to_a_path_with_a_newline_is_refused(
    steward_client: Client, embedder: HashingEmbedder
) -> None:
    page = steward_client.post(
        "/admin/kb/document/import/",
        {"file": SimpleUploadedFile("p.md", b"# P\n"), "target": "rt/p\n.md"},
        follow=True,
    )

    assert "U+000A, a control character" in page.content.decode()
    assert not Document.objects.exists()


@pytest.mark.parametrize("path", [*BAD_PATHS, "rt/notes.txt", "../escape.md"])
def test_the_admin_form_refuses_the_same_paths(steward_client: Client, path: str) -> None:
    response = steward_client.post(
        "/admin/kb/document/add/",
        {
            "path": path,
            "title": "New",
            "category": "",
            "audience": "public",
            "status": "published",
            "body": "# New\n\nText.\n",
            "updated_on": "",
            "review_by": "",
            "index_states-TOTAL_FORMS": "0",
            "index_states-INITIAL_FORMS": "0",
            "test_questions-TOTAL_FORMS": "0",
            "test_questions-INITIAL_FORMS": "0",
        },
    )

    assert response.status_code == 200  # the form again, not a redirect
    assert "invalid document path" in str(response.context["adminform"].form.errors["path"])
    assert not Document.objects.exists()


def test_a_file_named_with_escape_in_a_synced_folder_is_reported_and_the_rest_sync(
    tmp_path: Path, embedder: HashingEmbedder
) -> None:
    (tmp_path / "esc\x1b[2J.md").write_text("# Esc\n\nText.\n")
    (tmp_path / "fine.md").write_text("# Fine\n\nText.\n")

    report = corpus_sync(directory=tmp_path, embedder=embedder, actor=SYSTEM)

    assert [failure.path for failure in report.failed] == ["esc\x1b[2J.md"]
    assert "\x1b" not in report.failed[0].message  # printed escaped, not to the terminal
    assert list(Document.objects.values_list("path", flat=True)) == ["fine.md"]


def test_kb_sync_prints_the_refused_path_escaped(
    tmp_path: Path, embedder: HashingEmbedder, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setattr("kb.management.commands.kb_sync.active_embedder", lambda: embedder)
    (tmp_path / "new\nline.md").write_text("# New\n\nText.\n")
    (tmp_path / "fine.md").write_text("# Fine\n\nText.\n")

    with pytest.raises(CommandError, match="1 file"):
        call_command("kb_sync", str(tmp_path), "--no-progress")

    errors = capsys.readouterr().err
    assert "failed: new\\nline.md: invalid document path" in errors
    assert Document.objects.filter(path="fine.md").exists()
