"""Staff actions on a document's lifecycle: retire (optionally naming a successor) and restore.

Retiring changes only the document row: retrieval filters on status and successor inside its
SQL, so the text stops being retrievable the moment the transaction commits, with no
re-embedding, and restoring brings it back just as fast.
"""

from __future__ import annotations

import structlog
from django.db import transaction

from kb.models import Document

log = structlog.get_logger("groundwork.kb")


class DocumentActionError(ValueError):
    """The action would leave the documents inconsistent; the message says why, for people."""


@transaction.atomic
def document_retire(*, document: Document, successor: Document | None = None) -> Document:
    if successor is not None:
        if successor.pk == document.pk:
            raise DocumentActionError(f"{document.path} cannot be superseded by itself")
        if successor.status != Document.Status.PUBLISHED or successor.superseded_by_id:
            raise DocumentActionError(
                f"the successor {successor.path} must be a published, current document"
            )
    document.status = Document.Status.RETIRED
    document.superseded_by = successor
    document.save()
    # Pages that named this one as their successor now point at its successor.
    for predecessor in Document.objects.filter(superseded_by=document).exclude(pk=document.pk):
        predecessor.superseded_by = successor
        predecessor.save()
    log.info("document_retired", path=document.path, successor=successor and successor.path)
    return document


@transaction.atomic
def document_restore(*, document: Document) -> Document:
    """Un-retire: published again and retrievable again, with no successor."""
    document.status = Document.Status.PUBLISHED
    document.superseded_by = None
    document.save()
    log.info("document_restored", path=document.path)
    return document
