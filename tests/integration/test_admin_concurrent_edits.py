"""Two people editing one page in admin: the second save, made from a form opened before the
first was saved, is a conflict shown with both versions, never a silent overwrite."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from kb.actors import SYSTEM
from kb.models import Document
from kb.services import DocumentEditConflict, document_save
from tests.conftest import signed_in

pytestmark = pytest.mark.django_db

PARAGRAPH = "Visitors with a blue badge park in bay A."


@pytest.fixture
def page() -> Document:
    return Document.objects.create(
        path="parking.md", title="Parking", body="# Parking\n\nVisitors park free in bay C.\n"
    )


def _open_form(client: Client, document: Document) -> dict[str, str]:
    """The change form's fields as the browser got them when the page was opened."""
    response = client.get(f"/admin/kb/document/{document.pk}/change/")
    assert response.status_code == 200
    form = response.context["adminform"].form
    data = {name: form[name].value() for name in form.fields}
    data = {name: "" if value is None else str(value) for name, value in data.items()}
    return {
        **data,
        "index_states-TOTAL_FORMS": "0",
        "index_states-INITIAL_FORMS": "0",
        "test_questions-TOTAL_FORMS": "0",
        "test_questions-INITIAL_FORMS": "0",
    }


def _save(client: Client, document: Document, data: dict[str, str]):
    return client.post(f"/admin/kb/document/{document.pk}/change/", data)


def test_a_save_from_a_stale_form_is_a_conflict_and_the_first_save_is_kept(
    writer: User, steward: User, page: Document
) -> None:
    # given a writer and a steward who opened the same page
    writer_client, steward_client = signed_in(writer), signed_in(steward)
    writers_form, stewards_form = _open_form(writer_client, page), _open_form(steward_client, page)

    # when the steward adds a paragraph and saves, then the writer saves a new title
    stewards_form["body"] += f"\n{PARAGRAPH}\n"
    assert _save(steward_client, page, stewards_form).status_code == 302
    response = _save(writer_client, page, {**writers_form, "title": "Parking and badges"})

    # then the writer's save is refused with both versions shown, and the paragraph is kept
    assert response.status_code == 200
    html = response.content.decode()
    assert "was saved by steward after you opened it" in html
    assert PARAGRAPH in html  # the saved version, beside the writer's
    assert "Parking and badges" in html
    page.refresh_from_db()
    assert PARAGRAPH in page.body
    assert page.title == "Parking"


def test_after_a_conflict_the_editor_saves_again_on_purpose(
    writer: User, steward: User, page: Document
) -> None:
    # given a writer whose title change met the steward's paragraph
    writer_client, steward_client = signed_in(writer), signed_in(steward)
    writers_form, stewards_form = _open_form(writer_client, page), _open_form(steward_client, page)
    stewards_form["body"] += f"\n{PARAGRAPH}\n"
    _save(steward_client, page, stewards_form)
    conflict = _save(writer_client, page, {**writers_form, "title": "Parking and badges"})

    # when they keep the steward's body and save the form they were shown again
    shown = conflict.context["adminform"].form
    again = {**writers_form, "title": "Parking and badges", "body": stewards_form["body"]}
    again["base_row_hash"] = shown["base_row_hash"].value()
    response = _save(writer_client, page, again)

    # then both changes are in the page
    assert response.status_code == 302
    page.refresh_from_db()
    assert page.title == "Parking and badges" and PARAGRAPH in page.body


def test_the_service_refuses_a_save_made_on_an_older_version(page: Document) -> None:
    # given the row hash of the page as an editor loaded it, and a save made since
    loaded = page.row_hash()
    other = Document.objects.get(pk=page.pk)
    other.body += f"\n{PARAGRAPH}\n"
    document_save(document=other, actor=SYSTEM)

    # when a save made on the loaded version arrives
    stale = Document.objects.get(pk=page.pk)
    stale.title, stale.body = "Parking and badges", "# Parking\n\nVisitors park free in bay C.\n"
    with pytest.raises(DocumentEditConflict):
        document_save(document=stale, actor=SYSTEM, expected_row_hash=loaded)

    # then the first save stands
    page.refresh_from_db()
    assert PARAGRAPH in page.body and page.title == "Parking"


def test_an_edit_on_the_current_version_saves(writer: User, page: Document) -> None:
    client = signed_in(writer)
    form = _open_form(client, page)

    response = _save(client, page, {**form, "title": "Parking and badges"})

    assert response.status_code == 302
    page.refresh_from_db()
    assert page.title == "Parking and badges"


def test_a_history_revert_opened_before_another_save_is_a_conflict(
    writer: User, steward: User, page: Document
) -> None:
    # given a page with two versions, and a writer who opened the revert form of the first
    page.title = "Parking (new)"
    page.save()
    first = page.history.order_by("history_date").first()
    writer_client = signed_in(writer)
    url = f"/admin/kb/document/{page.pk}/history/{first.history_id}/"
    opened = writer_client.get(url)
    base = opened.context["adminform"].form["base_row_hash"].value()

    # when the steward adds a paragraph, then the writer reverts from the form they opened
    stewards_form = _open_form(signed_in(steward), page)
    stewards_form["body"] += f"\n{PARAGRAPH}\n"
    _save(signed_in(steward), page, stewards_form)
    response = writer_client.post(
        url,
        {
            "base_row_hash": base,
            "path": first.path,
            "title": first.title,
            "category": first.category,
            "audience": first.audience,
            "status": first.status,
            "body": first.body,
            "updated_on": "",
            "review_by": "",
        },
    )

    # then the revert is refused and the steward's paragraph is kept
    assert response.status_code == 200
    assert "was saved by steward after you opened it" in response.content.decode()
    page.refresh_from_db()
    assert PARAGRAPH in page.body
