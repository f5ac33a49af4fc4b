"""The document services decide who may change whether a page is current, whatever the path."""

from __future__ import annotations

import datetime

import pytest
from django.contrib.auth.models import AnonymousUser
from django.utils import timezone

from kb.actors import SYSTEM
from kb.models import Document
from kb.services import DocumentPermissionDenied, document_restore, document_retire, document_save
from tests.conftest import member

pytestmark = pytest.mark.django_db


@pytest.fixture
def pages() -> tuple[Document, Document]:
    current = Document.objects.create(path="new.md", title="New", body="# New\n\nBay E.\n")
    old = Document.objects.create(path="old.md", title="Old", body="# Old\n\nBay C.\n")
    return old, current


def _state(document: Document) -> tuple[str, int | None]:
    document.refresh_from_db()
    return document.status, document.superseded_by_id


def test_doc_writer_edits_and_publishes_but_never_retires_restores_or_relinks(pages) -> None:
    old, current = pages
    writer = member("writer", "Doc writers")

    # a writer's ordinary work goes through
    old.body += "\nAlso bay D.\n"
    old.status = Document.Status.DRAFT
    document_save(document=old, actor=writer)
    old.status = Document.Status.PUBLISHED
    document_save(document=old, actor=writer)
    assert _state(old) == ("published", None)

    # a change to whether the page is current does not, whichever service is asked
    attempts = {
        "retire": lambda: document_retire(document=old, actor=writer, successor=current),
        "save as retired": lambda: document_save(
            document=Document(
                pk=old.pk, path=old.path, title=old.title, body=old.body, status="retired"
            ),
            actor=writer,
        ),
        "save with a successor": lambda: document_save(
            document=Document(
                pk=old.pk, path=old.path, title=old.title, body=old.body, superseded_by=current
            ),
            actor=writer,
        ),
        "create retired": lambda: document_save(
            document=Document(path="x.md", title="X", body="x", status="retired"), actor=writer
        ),
    }
    for name, attempt in attempts.items():
        with pytest.raises(DocumentPermissionDenied, match="only a policy steward"):
            attempt()
        assert _state(old) == ("published", None), name
    assert not Document.objects.filter(path="x.md").exists()


def test_doc_writer_cannot_restore_a_retired_page(pages) -> None:
    old, current = pages
    document_retire(document=old, actor=SYSTEM, successor=current)
    writer = member("writer", "Doc writers")

    with pytest.raises(DocumentPermissionDenied):
        document_restore(document=old, actor=writer)
    old.status, old.superseded_by = Document.Status.PUBLISHED, None
    with pytest.raises(DocumentPermissionDenied, match="restore a retired page"):
        document_save(document=old, actor=writer)

    assert _state(old) == ("retired", current.pk)


@pytest.mark.parametrize(
    "actor",
    [
        pytest.param(lambda: AnonymousUser(), id="anonymous"),
        pytest.param(lambda: member("gone", "Policy stewards", is_active=False), id="inactive"),
    ],
)
def test_nobody_but_an_active_steward_or_the_system_may_retire(pages, actor) -> None:
    old, _ = pages

    with pytest.raises(DocumentPermissionDenied):
        document_retire(document=old, actor=actor())

    assert _state(old) == ("published", None)


@pytest.mark.parametrize(
    "actor",
    [
        pytest.param(lambda: member("steward", "Policy stewards"), id="steward"),
        pytest.param(lambda: SYSTEM, id="system"),
    ],
)
def test_steward_and_system_retire_and_restore(pages, actor) -> None:
    old, current = pages
    acting = actor()

    document_retire(document=old, actor=acting, successor=current)
    assert _state(old) == ("retired", current.pk)
    document_restore(document=old, actor=acting)
    assert _state(old) == ("published", None)


def test_a_new_text_moves_updated_on_to_today_unless_the_writer_set_it(pages) -> None:
    old, _ = pages
    writer = member("writer", "Doc writers")
    old.updated_on = datetime.date(2024, 1, 1)
    document_save(document=old, actor=writer)

    # a metadata change leaves the date alone
    old.category = "parking"
    document_save(document=old, actor=writer)
    assert _updated_on(old) == datetime.date(2024, 1, 1)

    # a new body moves it to today
    old.body += "\nAlso bay D.\n"
    document_save(document=old, actor=writer)
    assert _updated_on(old) == timezone.localdate()

    # a new title and a date set in the same save: the writer's date stands
    old.title = "Old parking"
    old.updated_on = datetime.date(2025, 5, 5)
    document_save(document=old, actor=writer)
    assert _updated_on(old) == datetime.date(2025, 5, 5)

    # a file that states its date (a sync or an import) keeps it even when it is unchanged
    old.body += "\nAnd bay F.\n"
    document_save(document=old, actor=SYSTEM, updated_on_given=True)
    assert _updated_on(old) == datetime.date(2025, 5, 5)


def _updated_on(document: Document) -> datetime.date | None:
    document.refresh_from_db()
    return document.updated_on
