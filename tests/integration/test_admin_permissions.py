"""Who may do what in admin: doc writers edit, policy stewards also retire and restore."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.admin.sites import site
from django.contrib.auth.models import Group, User
from django.test import Client, RequestFactory

from kb.admin import DocumentAdmin
from kb.ingestion import corpus_sync
from kb.models import Document
from search.services import retrieve

pytestmark = pytest.mark.django_db


def _member(username: str, group: str) -> User:
    user = User.objects.create_user(username=username, password="pw-for-tests", is_staff=True)
    user.groups.add(Group.objects.get(name=group))
    return user


@pytest.fixture
def writer() -> User:
    return _member("writer", "Doc writers")


@pytest.fixture
def steward() -> User:
    return _member("steward", "Policy stewards")


@pytest.fixture
def indexed(tmp_path: Path, local_embedder) -> Document:
    (tmp_path / "parking.md").write_text("# Parking\n\nVisitors park free in bay C.\n")
    corpus_sync(directory=tmp_path, embedder=local_embedder)
    return Document.objects.get(path="parking.md")


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


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
    client = _client(writer)

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
    assert _client(writer).get("/admin/kb/embeddingmodel/add/").status_code == 403


def test_steward_retire_hides_the_document_at_once_and_restore_brings_it_back(
    steward: User, indexed
) -> None:
    client = _client(steward)
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
    client = _client(steward)

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
        "index_states-0-id": str(document.index_states.get().pk),
        "index_states-0-document": str(document.pk),
    }

    # when it is saved with no edit
    response = _client(steward).post(f"/admin/kb/document/{document.pk}/change/", form)

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
    client = _client(steward)
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
    page = _client(steward).get(f"/admin/kb/document/{indexed.pk}/retire/").content.decode()
    assert f'value="{indexed.pk}"' not in page  # not offered as its own successor

    response = _client(steward).post(
        f"/admin/kb/document/{indexed.pk}/retire/", {"successor": indexed.pk}
    )
    assert "Select a valid choice" in response.content.decode()
    indexed.refresh_from_db()
    assert indexed.status == "published"


def test_doc_writer_has_no_retire_button_and_cannot_retire(writer: User, indexed) -> None:
    client = _client(writer)
    assert "/retire/" not in client.get(f"/admin/kb/document/{indexed.pk}/change/").content.decode()
    assert client.post(f"/admin/kb/document/{indexed.pk}/retire/", {}).status_code == 403
    indexed.refresh_from_db()
    assert indexed.status == "published"
