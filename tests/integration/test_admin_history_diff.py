"""Comparing saved versions of a document in admin: a line diff of the body, changed fields."""

from __future__ import annotations

import pytest
from django.test import Client

from kb.actors import SYSTEM
from kb.models import Document
from kb.selectors.versions import DiffLine, line_diff
from kb.services import document_retire
from tests.conftest import member, signed_in

pytestmark = pytest.mark.django_db

BODY = "# Parking\n\nVisitors park free in bay C.\n\nStaff park in the garage.\n"


@pytest.fixture
def parking() -> Document:
    return Document.objects.create(path="parking.md", title="Parking", body=BODY)


def _diff_url(document: Document, version) -> str:
    return f"/admin/kb/document/{document.pk}/history/{version.history_id}/diff/"


def test_an_edit_shows_its_body_lines_and_changed_fields(writer_client: Client, parking) -> None:
    # given: a second version that moves the visitors' bay and renames the page
    parking.body = BODY.replace("bay C", "bay D")
    parking.title = "Parking and bikes"
    parking.save()

    # when
    response = writer_client.get(_diff_url(parking, parking.history.latest()))

    # then
    html = response.content.decode()
    assert response.status_code == 200
    assert "Body: 1 line added, 1 removed" in html
    assert '<tr class="kb-diff-removed">' in html and '<tr class="kb-diff-added">' in html
    removed = html.split('<tr class="kb-diff-removed">', 1)[1].split("</tr>", 1)[0]
    added = html.split('<tr class="kb-diff-added">', 1)[1].split("</tr>", 1)[0]
    assert "bay C" in removed and "bay D" in added
    assert '<th scope="row">Title</th><td><del>Parking</del></td><td><ins>Parking and bikes' in html
    assert "Staff park in the garage." in html  # context around the change
    assert f"/admin/kb/document/{parking.pk}/history/{parking.history.latest().history_id}/" in html


def test_retiring_shows_the_status_and_the_successor_by_path(
    writer_client: Client, parking
) -> None:
    successor = Document.objects.create(path="parking-2027.md", title="Parking", body=BODY)

    document_retire(document=parking, actor=SYSTEM, successor=successor)

    html = writer_client.get(_diff_url(parking, parking.history.latest())).content.decode()
    assert "<td><del>Published</del></td><td><ins>Retired</ins></td>" in html
    assert "<td><del>—</del></td><td><ins>parking-2027.md</ins></td>" in html
    assert "The body did not change." in html


def test_the_first_version_compares_with_an_empty_document(writer_client: Client, parking) -> None:
    html = writer_client.get(_diff_url(parking, parking.history.earliest())).content.decode()

    assert "This is the first version" in html
    assert "Body: 5 lines added, 0 removed" in html
    assert "Older change" not in html


def test_markup_in_a_body_is_shown_as_text(writer_client: Client, parking) -> None:
    parking.body = BODY + "\n<script>alert('x')</script>\n"
    parking.save()

    html = writer_client.get(_diff_url(parking, parking.history.latest())).content.decode()

    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html


def test_history_page_links_each_version_to_its_comparison(writer_client: Client, parking) -> None:
    parking.body = BODY.replace("bay C", "bay D")
    parking.save()

    html = writer_client.get(f"/admin/kb/document/{parking.pk}/history/").content.decode()

    for version in parking.history.all():
        assert f'href="{_diff_url(parking, version)}"' in html
    assert "Compare with the previous version" in html
    assert "Compare with an empty document" in html


def test_only_people_who_may_see_the_history_get_the_comparison(
    parking, customer_client: Client
) -> None:
    url = _diff_url(parking, parking.history.latest())

    assert Client().get(url).status_code == 302  # to the admin login
    assert customer_client.get(url).status_code == 302
    assert signed_in(member("intern")).get(url).status_code == 403


def test_a_version_of_another_document_or_no_version_is_404(writer_client: Client, parking) -> None:
    other = Document.objects.create(path="other.md", title="Other", body="# Other\n")

    assert writer_client.get(_diff_url(parking, other.history.latest())).status_code == 404
    missing = f"/admin/kb/document/{parking.pk}/history/999999/diff/"
    assert writer_client.get(missing).status_code == 404


def test_line_diff_numbers_lines_on_both_sides() -> None:
    old = "a\nb\nc\nd\n"
    new = "a\nB\nc\nd\ne\n"

    lines = line_diff(old, new, context=1)

    assert lines == [
        DiffLine("hunk", "@@ -1,4 +1,5 @@"),
        DiffLine("context", "a", 1, 1),
        DiffLine("removed", "b", old_number=2),
        DiffLine("added", "B", new_number=2),
        DiffLine("context", "c", 3, 3),
        DiffLine("context", "d", 4, 4),
        DiffLine("added", "e", new_number=5),
    ]


def test_history_page_names_the_successor_and_a_deleted_one_by_path(
    writer_client: Client, parking
) -> None:
    # given: parking.md retired in favour of a page that was later deleted, then of another
    first = Document.objects.create(path="parking-2026.md", title="Parking 2026", body=BODY)
    document_retire(document=parking, actor=SYSTEM, successor=first)
    first.delete()
    second = Document.objects.create(path="parking-2027.md", title="Parking 2027", body=BODY)
    parking.refresh_from_db()
    parking.superseded_by = second
    parking.save()

    # when
    html = writer_client.get(f"/admin/kb/document/{parking.pk}/history/").content.decode()

    # then: no "Deleted document (pk=None)" for "no successor", and the deleted one by its path
    changes = " ".join(html.replace("&nbsp;", " ").split())
    assert "Deleted document" not in changes
    assert "Superseded by:</strong> — &rarr; parking-2026.md (deleted)" in changes
    assert "Superseded by:</strong> parking-2026.md (deleted) &rarr; parking-2027.md" in changes
