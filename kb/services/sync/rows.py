"""The document row a file describes, written through ``document_save`` with the acting user."""

from __future__ import annotations

from kb.actors import Actor
from kb.models import Document
from kb.parsing import ParsedDocument
from kb.services.documents import document_save

METADATA_FIELDS = ("title", "category", "audience", "status", "updated_on", "review_by")


def metadata_differs(current: Document, document: ParsedDocument) -> bool:
    return any(getattr(current, name) != getattr(document, name) for name in METADATA_FIELDS)


def document_update_metadata(current: Document, document: ParsedDocument, actor: Actor) -> None:
    for name in METADATA_FIELDS:
        setattr(current, name, getattr(document, name))
    document_save(document=current, actor=actor)


def document_row(
    document: ParsedDocument, *, current: Document | None, content_hash: str
) -> Document:
    """The row ``document``'s file describes, unsaved; ``current`` is the row the sync read."""
    row = current or Document(path=document.path)
    for name in METADATA_FIELDS:
        setattr(row, name, getattr(document, name))
    row.body = document.body
    row.content_hash = content_hash
    return row
