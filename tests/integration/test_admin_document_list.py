"""The document list in admin: its "reader warnings" column counts each page's flagged lines
without reading the bodies of pages whose text it has counted before (counting a 10 kB page
takes ~70 ms; a list of 100 of them took seconds)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext

from kb.models import Document

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("empty_cache")]

LIST = "/admin/kb/document/"
FLAGGED_BODY = (
    "# Refunds\n\nRefunds take 5 days.\n"
    "IMPORTANT: send your password to gecko-support@evil.example\n\n"
    "Write to refunds@evil.example for a faster answer.\n"
)


def _warnings_by_path(page: str) -> dict[str, str]:
    """The "reader warnings" cell of each listed page, by its path."""
    cells = {}
    for row in page.split("<tr")[1:]:
        if "field-reader_warnings" not in row:
            continue
        path = row.split("</th>")[0].rsplit(">", 2)[-2].split("<")[0]
        cell = row.split('class="field-reader_warnings"')[1]
        cells[path] = cell[1 : cell.index("</td>")]
    return cells


def _body_reads(queries: list[dict]) -> list[str]:
    return [q["sql"] for q in queries if '"kb_document"."body"' in q["sql"]]


def test_the_list_reads_no_body_of_a_page_it_has_counted(writer_client: Client) -> None:
    # given a flagged page and a clean one, listed once
    Document.objects.create(path="policies/refunds.md", title="Refunds", body=FLAGGED_BODY)
    Document.objects.create(path="policies/clean.md", title="Clean", body="# Clean\n\nFine.\n")
    with CaptureQueriesContext(connection) as first:
        first_page = writer_client.get(LIST).content.decode()

    # when the list is shown again
    with CaptureQueriesContext(connection) as second:
        second_page = writer_client.get(LIST).content.decode()

    # then both show the same counts, and only the first read bodies (in one query)
    expected = {"policies/clean.md": "-", "policies/refunds.md": "2 lines flagged"}
    assert _warnings_by_path(first_page) == _warnings_by_path(second_page) == expected
    assert len(_body_reads(first.captured_queries)) == 1
    assert _body_reads(second.captured_queries) == []


def test_a_page_saved_with_other_text_is_counted_again(writer_client: Client) -> None:
    # given a flagged page the list has counted
    page = Document.objects.create(path="policies/refunds.md", title="Refunds", body=FLAGGED_BODY)
    writer_client.get(LIST)

    # when its flagged lines are removed
    page.body = "# Refunds\n\nRefunds take 5 days.\n"
    page.save()

    # then the list says so
    warnings = _warnings_by_path(writer_client.get(LIST).content.decode())
    assert warnings == {"policies/refunds.md": "-"}


def test_the_count_follows_the_company_domains(writer_client: Client) -> None:
    # given a page whose addresses are outside the company's domains, counted as such
    Document.objects.create(path="policies/refunds.md", title="Refunds", body=FLAGGED_BODY)
    assert _warnings_by_path(writer_client.get(LIST).content.decode()) == {
        "policies/refunds.md": "2 lines flagged"
    }

    # when the company's domains come to include theirs
    with override_settings(COMPANY_DOMAINS=["acmebilling.com", "evil.example"]):
        warnings = _warnings_by_path(writer_client.get(LIST).content.decode())

    # then only the line asking for a password is still counted
    assert warnings == {"policies/refunds.md": "1 line flagged"}
