"""Who may do what in admin: doc writers edit, policy stewards also retire and restore."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from django.contrib.admin.sites import site
from django.contrib.auth.models import Group, User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client, RequestFactory

from kb.actors import SYSTEM
from kb.admin.documents import DocumentAdmin
from kb.models import Chunk, Document
from kb.services import embedding_model_register
from kb.services import index_queue as indexing_services
from kb.services.sync import corpus_sync
from search.services import retrieve
from tests.conftest import signed_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def indexed(tmp_path: Path, cached_embedder) -> Document:
    (tmp_path / "parking.md").write_text("# Parking\n\nVisitors park free in bay C.\n")
    corpus_sync(directory=tmp_path, embedder=cached_embedder, actor=SYSTEM)
    return Document.objects.get(path="parking.md")


def _action(client: Client, action: str, document: Document):
    return client.post(
        "/admin/kb/document/",
        {"action": action, "_selected_action": [document.pk]},
        follow=True,
    )


def test_groups_are_created_by_migration_with_their_permissions() -> None:
    writers = set(
        Group.objects.get(name="Doc writers").permissions.values_list("codename", flat=True)
    )
    stewards = set(
        Group.objects.get(name="Policy stewards").permissions.values_list("codename", flat=True)
    )

    assert {"add_document", "change_document"} <= writers
    assert "retire_document" not in writers and "manage_embedding_models" not in writers
    assert {"retire_document", "manage_embedding_models"} <= stewards


def test_anonymous_users_cannot_reach_admin_or_debug() -> None:
    client = Client()

    assert client.get("/admin/kb/document/").status_code == 302
    assert client.get("/debug/search?q=refund").status_code == 404


def test_doc_writer_is_not_offered_retire_and_cannot_use_it(writer: User, indexed) -> None:
    client = signed_in(writer)

    page = client.get("/admin/kb/document/")
    assert page.status_code == 200
    assert "retire_documents" not in page.content.decode()

    _action(client, "retire_documents", indexed)
    indexed.refresh_from_db()
    assert indexed.status == Document.Status.PUBLISHED


def test_doc_writer_form_offers_no_retired_status_nor_successor(writer: User) -> None:
    request = RequestFactory().get("/admin/kb/document/add/")
    request.user = writer
    model_admin = DocumentAdmin(Document, site)

    form = model_admin.get_form(request)

    assert "retired" not in dict(form.base_fields["status"].choices)
    assert "superseded_by" in model_admin.get_readonly_fields(request)


def test_doc_writer_cannot_manage_embedding_models(writer: User) -> None:
    assert signed_in(writer).get("/admin/kb/embeddingmodel/add/").status_code == 403


def test_steward_retire_hides_the_document_at_once_and_restore_brings_it_back(
    steward: User, indexed
) -> None:
    client = signed_in(steward)
    assert "retire_documents" in client.get("/admin/kb/document/").content.decode()
    question = "where can visitors park?"
    assert retrieve(question=question).hits[0].path == "parking.md"

    _action(client, "retire_documents", indexed)
    assert "parking.md" not in [hit.path for hit in retrieve(question=question).hits]

    _action(client, "restore_documents", indexed)
    assert retrieve(question=question).hits[0].path == "parking.md"
    indexed.refresh_from_db()
    assert (indexed.status, indexed.superseded_by) == ("published", None)


def test_history_shows_what_changed_and_offers_a_revert(steward: User, indexed) -> None:
    indexed.body = indexed.body.replace("bay C", "bay D")
    indexed.save()
    client = signed_in(steward)

    history = client.get(f"/admin/kb/document/{indexed.pk}/history/").content.decode()
    first = indexed.history.earliest()
    revert = client.get(f"/admin/kb/document/{indexed.pk}/history/{first.history_id}/")

    assert "bay C" in history and "bay D" in history  # the changed field, before and after
    assert revert.status_code == 200 and "Revert" in revert.content.decode()


def test_saving_an_untouched_page_from_a_browser_does_not_re_embed_it(
    steward: User, indexed: Document
) -> None:
    # given the edit form as a browser submits it: CRLF line endings, a trailing newline
    document = Document.objects.get(pk=indexed.pk)
    hash_before = document.content_hash
    form = {
        "path": document.path,
        "title": document.title,
        "category": document.category,
        "audience": document.audience,
        "status": document.status,
        "body": document.body.replace("\n", "\r\n"),
        "updated_on": "",
        "review_by": "",
        # the read-only index state inline's management form
        "index_states-TOTAL_FORMS": "1",
        "index_states-INITIAL_FORMS": "1",
        "test_questions-TOTAL_FORMS": "0",
        "test_questions-INITIAL_FORMS": "0",
        "index_states-0-id": str(document.index_states.get().pk),
        "index_states-0-document": str(document.pk),
    }

    # when it is saved with no edit
    response = signed_in(steward).post(f"/admin/kb/document/{document.pk}/change/", form)

    # then the body, its hash and its index state are as they were
    assert response.status_code == 302, response.context["adminform"].form.errors
    document.refresh_from_db()
    assert document.content_hash == hash_before
    assert document.body.endswith("\n") and "\r" not in document.body
    assert document.index_states.get().status == "indexed"


def test_steward_retires_from_the_edit_page_naming_a_successor(
    steward: User, indexed: Document
) -> None:
    # given a newer page that replaces the parking page
    successor = Document.objects.create(
        path="parking-2027.md", title="Parking", body="# Parking\n\nVisitors park in bay E.\n"
    )
    client = signed_in(steward)
    change_page = client.get(f"/admin/kb/document/{indexed.pk}/change/").content.decode()
    retire_url = f"/admin/kb/document/{indexed.pk}/retire/"
    assert retire_url in change_page and "Retire…" in change_page

    # when the steward retires it with that successor
    response = client.post(retire_url, {"successor": successor.pk}, follow=True)

    # then it is retired at once, pointing to its successor, and the button now restores
    assert "Retired parking.md, superseded by parking-2027.md" in response.content.decode()
    indexed.refresh_from_db()
    assert (indexed.status, indexed.superseded_by) == ("retired", successor)
    assert "parking.md" not in [
        hit.path for hit in retrieve(question="where can visitors park?").hits
    ]
    assert "Restore…" in client.get(f"/admin/kb/document/{indexed.pk}/change/").content.decode()

    client.post(retire_url, {"restore": "1"})
    indexed.refresh_from_db()
    assert (indexed.status, indexed.superseded_by) == ("published", None)


def test_a_page_cannot_be_its_own_successor_nor_a_retired_one(
    steward: User, indexed: Document
) -> None:
    page = signed_in(steward).get(f"/admin/kb/document/{indexed.pk}/retire/").content.decode()
    assert f'value="{indexed.pk}"' not in page  # not offered as its own successor

    response = signed_in(steward).post(
        f"/admin/kb/document/{indexed.pk}/retire/", {"successor": indexed.pk}
    )
    assert "Select a valid choice" in response.content.decode()
    indexed.refresh_from_db()
    assert indexed.status == "published"


def test_doc_writer_has_no_retire_button_and_cannot_retire(writer: User, indexed) -> None:
    client = signed_in(writer)
    assert "/retire/" not in client.get(f"/admin/kb/document/{indexed.pk}/change/").content.decode()
    assert client.post(f"/admin/kb/document/{indexed.pk}/retire/", {}).status_code == 403
    indexed.refresh_from_db()
    assert indexed.status == "published"


# --- retiring, restoring and successors are a steward's, on every path ------------------------

PARKING_V1 = "# Parking\n\nVisitors park free in bay C.\n"


@pytest.fixture
def retired_page() -> Document:
    """A page a steward retired in favour of a newer one; history: published, then retired."""
    successor = Document.objects.create(
        path="parking-2027.md", title="Parking", body="# Parking\n\nVisitors park in bay E.\n"
    )
    page = Document.objects.create(path="parking.md", title="Parking", body=PARKING_V1)
    page.status, page.superseded_by = Document.Status.RETIRED, successor
    page.save()
    return page


@pytest.fixture
def published_page() -> Document:
    """A current page with a retired version in its history (retired, then restored)."""
    page = Document.objects.create(path="parking.md", title="Parking", body=PARKING_V1)
    page.status = Document.Status.RETIRED
    page.save()
    page.status = Document.Status.PUBLISHED
    page.save()
    Document.objects.create(
        path="parking-2027.md", title="Parking", body="# Parking\n\nVisitors park in bay E.\n"
    )
    return page


@pytest.fixture
def no_background_indexing(local_embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    embedding_model_register(embedder=local_embedder)
    monkeypatch.setattr(indexing_services, "index_enqueue", lambda *, document_ids, bulk=False: 0)


def _zip(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def _upload(client: Client, name: str, text: str, *, as_zip: bool):
    data = _zip({name: text}) if as_zip else text.encode()
    upload = SimpleUploadedFile(f"{name}.zip" if as_zip else name, data)
    return client.post("/admin/kb/document/import/", {"file": upload, "target": "/"}, follow=True)


def _lifecycle(document: Document) -> tuple[str, str | None]:
    document.refresh_from_db()
    return document.status, document.superseded_by and document.superseded_by.path


@pytest.mark.parametrize("as_zip", [False, True], ids=["markdown", "zip"])
def test_doc_writer_import_cannot_republish_a_retired_page(
    writer: User, retired_page: Document, no_background_indexing, as_zip: bool
) -> None:
    # when a writer uploads the retired page marked published, with no successor
    page = _upload(
        signed_in(writer), "parking.md", "---\nstatus: published\n---\n" + PARKING_V1, as_zip=as_zip
    ).content.decode()

    # then the file is refused with the reason and the page stays retired, successor and all
    assert _lifecycle(retired_page) == ("retired", "parking-2027.md")
    assert "only a policy steward may restore a retired page" in page
    assert "Nothing was imported: 1 problem(s) to fix first." in page


@pytest.mark.parametrize("as_zip", [False, True], ids=["markdown", "zip"])
def test_doc_writer_import_cannot_retire_a_page_nor_name_its_successor(
    writer: User, published_page: Document, no_background_indexing, as_zip: bool
) -> None:
    retiring = "---\nstatus: retired\nsuperseded_by: parking-2027.md\n---\n" + PARKING_V1
    superseding = "---\nsuperseded_by: parking-2027.md\n---\n" + PARKING_V1

    first = _upload(signed_in(writer), "parking.md", retiring, as_zip=as_zip).content.decode()
    second = _upload(signed_in(writer), "parking.md", superseding, as_zip=as_zip).content.decode()

    assert _lifecycle(published_page) == ("published", None)
    assert "only a policy steward may retire a page" in first
    assert "only a policy steward may change the page that supersedes it" in second


def test_doc_writer_import_of_a_new_retired_page_is_refused(
    writer: User, no_background_indexing
) -> None:
    page = _upload(
        signed_in(writer), "old.md", "---\nstatus: retired\n---\n# Old\n\nGone.\n", as_zip=False
    ).content.decode()

    assert not Document.objects.filter(path="old.md").exists()
    assert "only a policy steward may retire a page" in page


def test_steward_import_may_restore_and_edit_a_retired_page(
    steward: User, retired_page: Document, no_background_indexing
) -> None:
    text = "---\nstatus: published\n---\n# Parking\n\nVisitors park free in bay D.\n"

    page = _upload(signed_in(steward), "parking.md", text, as_zip=True).content.decode()

    assert "Skipped" not in page
    assert _lifecycle(retired_page) == ("published", None)
    assert "bay D" in retired_page.body


def test_kb_sync_run_for_a_doc_writer_cannot_republish_a_retired_page(
    tmp_path: Path, writer: User, retired_page: Document, local_embedder
) -> None:
    (tmp_path / "parking.md").write_text(PARKING_V1)  # no front matter: "published"
    (tmp_path / "parking-2027.md").write_text("# Parking\n\nVisitors park in bay E.\n")

    # The page was made in admin, not by this folder: a sync leaves it alone as a conflict...
    call_command("kb_sync", str(tmp_path), "--user", "writer", "--no-progress")
    assert _lifecycle(retired_page) == ("retired", "parking-2027.md")

    # ...and --overwrite, which would take the file's "published", is refused for a writer.
    with pytest.raises(CommandError, match=r"1 file\(s\) skipped"):
        call_command("kb_sync", str(tmp_path), "--user", "writer", "--overwrite", "--no-progress")

    assert _lifecycle(retired_page) == ("retired", "parking-2027.md")


def _revert(client: Client, document: Document, version, **changes: str):
    """POST the history revert form as the browser would: the version's values, edited."""
    form = {
        "path": version.path,
        "title": version.title,
        "category": version.category,
        "audience": version.audience,
        "status": version.status,
        "body": version.body,
        "updated_on": "",
        "review_by": "",
        **changes,
    }
    url = f"/admin/kb/document/{document.pk}/history/{version.history_id}/"
    return client.post(url, form)


def test_doc_writer_history_revert_cannot_republish_a_retired_page(
    writer: User, retired_page: Document
) -> None:
    published = retired_page.history.earliest()
    client = signed_in(writer)
    offered = client.get(f"/admin/kb/document/{retired_page.pk}/history/{published.history_id}/")
    assert offered.status_code == 200
    assert dict(offered.context["adminform"].form.fields["status"].choices) == {
        "retired": "Retired"
    }

    response = _revert(client, retired_page, published)

    assert response.status_code == 200  # the form again, with the error
    assert _lifecycle(retired_page) == ("retired", "parking-2027.md")


def test_doc_writer_history_revert_cannot_retire_a_published_page(
    writer: User, published_page: Document
) -> None:
    retired_version = published_page.history.filter(status="retired").get()

    response = _revert(signed_in(writer), published_page, retired_version)

    assert response.status_code == 200
    assert _lifecycle(published_page) == ("published", None)


def test_doc_writer_history_revert_of_a_retired_page_brings_back_text_not_status(
    writer: User, retired_page: Document
) -> None:
    # given the retired page's text was edited after it was retired
    retired_page.body = PARKING_V1.replace("bay C", "bay X")
    retired_page.save()
    first = retired_page.history.earliest()  # published, bay C, no successor

    # when a writer reverts to the first version's text, as the form now offers it
    response = _revert(signed_in(writer), retired_page, first, status="retired")

    # then the old text is back and the page is still retired with its successor
    assert response.status_code == 302
    assert _lifecycle(retired_page) == ("retired", "parking-2027.md")
    assert "bay C" in retired_page.body


def test_steward_history_revert_may_restore_a_retired_page(
    steward: User, retired_page: Document
) -> None:
    response = _revert(signed_in(steward), retired_page, retired_page.history.earliest())

    assert response.status_code == 302
    assert _lifecycle(retired_page) == ("published", None)


def test_steward_deletes_a_document_and_its_chunks_from_the_delete_page(
    steward: User, indexed
) -> None:
    # given an indexed page (chunks exist) and a steward, who has delete_document, not delete_chunk
    assert Chunk.objects.filter(document=indexed).exists()
    client = signed_in(steward)
    delete_url = f"/admin/kb/document/{indexed.pk}/delete/"

    # when they open the delete page and confirm
    confirmation = client.get(delete_url)
    response = client.post(delete_url, {"post": "yes"})

    # then the page offered the deletion and the document is gone with its chunks
    assert confirmation.status_code == 200
    assert "would result in deleting related objects" not in confirmation.content.decode()
    assert response.status_code == 302
    assert not Document.objects.filter(pk=indexed.pk).exists()
    assert not Chunk.objects.filter(document_id=indexed.pk).exists()


def test_steward_deletes_documents_with_the_bulk_action(steward: User, indexed) -> None:
    client = signed_in(steward)

    response = client.post(
        "/admin/kb/document/",
        {"action": "delete_selected", "_selected_action": [indexed.pk], "post": "yes"},
    )

    assert response.status_code == 302
    assert not Document.objects.filter(pk=indexed.pk).exists()


def test_doc_writer_cannot_delete_a_document(writer: User, indexed) -> None:
    client = signed_in(writer)

    response = client.post(f"/admin/kb/document/{indexed.pk}/delete/", {"post": "yes"})

    assert response.status_code == 403
    assert Document.objects.filter(pk=indexed.pk).exists()


def test_no_one_but_a_superuser_deletes_single_chunks(steward: User, indexed) -> None:
    # A chunk is the index of its page: deleting one alone would leave the page half-indexed.
    chunk = Chunk.objects.filter(document=indexed).first()
    client = signed_in(steward)

    response = client.post(f"/admin/kb/chunk/{chunk.pk}/delete/", {"post": "yes"})

    assert response.status_code == 403
    assert Chunk.objects.filter(pk=chunk.pk).exists()
