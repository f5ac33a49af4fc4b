"""Choosing a successor in admin: a search over the pages that may be one, on the edit page and
the retire page alike; and the document list says a retired page is not searchable."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from kb.actors import SYSTEM
from kb.models import Document, DocumentIndexState
from kb.services import document_retire, embedding_model_register
from tests.conftest import signed_in

pytestmark = pytest.mark.django_db

AUTOCOMPLETE = "/admin/autocomplete/"


def _page(path: str, title: str, **fields: str) -> Document:
    return Document.objects.create(path=path, title=title, body=f"# {title}\n\nText.\n", **fields)


def _successors_found(client: Client, term: str) -> list[str]:
    response = client.get(
        AUTOCOMPLETE,
        {"app_label": "kb", "model_name": "document", "field_name": "superseded_by", "term": term},
    )
    assert response.status_code == 200
    return [result["text"] for result in response.json()["results"]]


def test_successor_search_finds_current_pages_by_title_or_path(steward: User) -> None:
    # given: current pages, a draft, and a retired page, all about parking
    _page("parking-2027.md", "Parking from 2027")
    _page("garage.md", "Garage and parking")
    _page("parking-draft.md", "Parking (draft)", status="draft")
    retired = _page("parking-2025.md", "Parking 2025")
    document_retire(document=retired, actor=SYSTEM)

    # when / then: only the current pages are offered, found by title or path
    client = signed_in(steward)
    assert sorted(_successors_found(client, "parking")) == ["garage.md", "parking-2027.md"]
    assert _successors_found(client, "garage") == ["garage.md"]


def test_other_document_searches_still_list_retired_pages(steward: User) -> None:
    retired = _page("parking-2025.md", "Parking 2025")
    document_retire(document=retired, actor=SYSTEM)

    page = signed_in(steward).get("/admin/kb/document/", {"q": "parking"}).content.decode()

    assert "parking-2025.md" in page


def test_edit_and_retire_pages_use_the_search_widget(steward: User) -> None:
    document = _page("parking.md", "Parking")
    client = signed_in(steward)

    for url in (
        f"/admin/kb/document/{document.pk}/change/",
        f"/admin/kb/document/{document.pk}/retire/",
    ):
        page = client.get(url).content.decode()
        assert 'data-ajax--url="/admin/autocomplete/"' in page, url
        assert "admin/js/autocomplete.js" in page, url


def test_retire_page_accepts_a_successor_chosen_by_search(steward: User) -> None:
    document = _page("parking.md", "Parking")
    successor = _page("parking-2027.md", "Parking from 2027")

    signed_in(steward).post(
        f"/admin/kb/document/{document.pk}/retire/", {"successor": successor.pk}
    )

    document.refresh_from_db()
    assert (document.status, document.superseded_by) == ("retired", successor)


def test_document_list_says_a_retired_page_is_not_searchable(steward: User, local_embedder) -> None:
    # given: two indexed pages, one of them retired
    model = embedding_model_register(embedder=local_embedder)
    kept, retired = _page("kept.md", "Kept"), _page("old.md", "Old")
    DocumentIndexState.objects.filter(embedding_model=model).update(status="indexed")
    document_retire(document=retired, actor=SYSTEM)

    # when
    page = signed_in(steward).get("/admin/kb/document/").content.decode()

    # then
    rows = {row.split("</th>", 1)[0]: row for row in page.split('<th class="field-path">')[1:]}
    assert '<td class="field-index_status">indexed</td>' in next(
        r for p, r in rows.items() if kept.path in p
    )
    assert '<td class="field-index_status">retired — not searchable</td>' in next(
        r for p, r in rows.items() if retired.path in p
    )
