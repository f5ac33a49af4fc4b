"""Reads for the public document pages: which documents a reader may open."""

from __future__ import annotations

from itertools import groupby

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from kb.models import Document, DocumentQuerySet


def reader_sees_internal(*, user: AbstractBaseUser | AnonymousUser) -> bool:
    """Internal pages are for staff; everyone else must not learn they exist."""
    return bool(user.is_active and getattr(user, "is_staff", False))


def _readable(*, include_internal: bool) -> DocumentQuerySet:
    # Retired pages stay readable: old links and old answers point at them, and the page says
    # it was retired. Drafts are unfinished and never shown.
    documents = Document.objects.exclude(status=Document.Status.DRAFT)
    if not include_internal:
        documents = documents.filter(audience=Document.Audience.PUBLIC)
    return documents


def document_for_reader(*, path: str, include_internal: bool) -> Document | None:
    """The document at ``path`` if this reader may open it, else None (the page 404s)."""
    return _readable(include_internal=include_internal).filter(path=path).first()


def document_successor_for_reader(*, document: Document, include_internal: bool) -> Document | None:
    """The page that replaced ``document``, when there is one the reader may open."""
    if document.superseded_by_id is None:
        return None
    return _readable(include_internal=include_internal).filter(pk=document.superseded_by_id).first()


def documents_by_category(*, include_internal: bool) -> list[tuple[str, list[Document]]]:
    """Published documents the reader may open, grouped by category (uncategorised last)."""
    documents = (
        _readable(include_internal=include_internal)
        .filter(status=Document.Status.PUBLISHED)
        .only("path", "title", "category", "audience", "updated_on")
        .order_by("category", "title")
    )
    groups = [
        (category, list(members))
        for category, members in groupby(documents, key=lambda document: document.category)
    ]
    return sorted(groups, key=lambda group: (group[0] == "", group[0].casefold()))
