"""Which pages are answered from, and for whom: the rule's ORM form (``Document.objects.current``,
``.visible_to``) and its SQL form (``kb.visibility``) pick the same pages, in every status and
audience, superseded or not."""

from __future__ import annotations

import itertools

import pytest
from django.db import connection

from kb.models import CURRENT_DOCUMENT, Document
from kb.selectors.access import ALL_AUDIENCES, PUBLIC_AUDIENCES
from kb.visibility import current_document_sql, visible_document_sql

pytestmark = pytest.mark.django_db

AUDIENCES_OF_READERS = {"public reader": PUBLIC_AUDIENCES, "staff reader": ALL_AUDIENCES}


@pytest.fixture
def every_kind_of_page() -> dict[str, Document]:
    """One page per status x audience x superseded-or-not; every successor is a current page."""
    successor = Document.objects.create(
        path="successor.md", title="Successor", body="# Successor\n\nText.", content_hash="0"
    )
    pages = {"successor.md": successor}
    for status, audience, superseded in itertools.product(
        Document.Status, Document.Audience, (False, True)
    ):
        path = f"{status.value}-{audience.value}{'-superseded' if superseded else ''}.md"
        pages[path] = Document.objects.create(
            path=path,
            title=path,
            body=f"# {path}\n\nText.",
            content_hash="0",
            status=status,
            audience=audience,
            superseded_by=successor if superseded else None,
        )
    return pages


def _paths_by_sql(condition: str, params: dict[str, list[str]]) -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT d.path FROM {Document._meta.db_table} d WHERE {condition}", params)
        return {path for (path,) in cursor.fetchall()}


def test_current_pages_are_the_published_ones_superseded_by_nothing_in_both_forms(
    every_kind_of_page: dict[str, Document],
) -> None:
    expected = {"successor.md", "published-public.md", "published-internal.md"}

    by_orm = set(Document.objects.current().values_list("path", flat=True))
    by_sql = _paths_by_sql(current_document_sql(alias="d"), {})

    assert by_orm == expected
    assert by_sql == expected


@pytest.mark.parametrize("reader", AUDIENCES_OF_READERS)
def test_visible_pages_are_the_current_ones_of_the_readers_audiences_in_both_forms(
    every_kind_of_page: dict[str, Document], reader: str
) -> None:
    audiences = AUDIENCES_OF_READERS[reader]
    expected = {
        path
        for path, page in every_kind_of_page.items()
        if page.status == Document.Status.PUBLISHED
        and page.superseded_by_id is None
        and page.audience in audiences
    }

    by_orm = set(Document.objects.visible_to(audiences).values_list("path", flat=True))
    by_sql = _paths_by_sql(visible_document_sql(alias="d"), {"audiences": list(audiences)})

    assert by_orm == expected
    assert by_sql == expected
    assert ("published-internal.md" in expected) is (reader == "staff reader")


def test_the_partial_index_retrieval_reads_is_built_on_the_same_rule() -> None:
    (searchable,) = [i for i in Document._meta.indexes if i.name == "kb_document_searchable"]

    assert searchable.condition == CURRENT_DOCUMENT
