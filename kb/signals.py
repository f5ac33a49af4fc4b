"""Every save of a document, from any code path, asks for it to be indexed."""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_save
from django.dispatch import receiver

from kb.models import Document
from kb.services import document_index_request, index_requests_open


@receiver(post_save, sender=Document, dispatch_uid="kb_document_index_request")
def document_saved(sender: type[Document], instance: Document, **kwargs: Any) -> None:
    """Mark the saved version pending in the save's own transaction (the saving service opens
    it) and send its indexing when that commits. Its inputs: the saved row, and the one named
    call a caller may wrap its saves in, ``index_requests_in_bulk`` (send them to the bulk
    queue in batches; leave out a model the caller indexes itself), read here by name."""
    document_index_request(document=instance, requests=index_requests_open())
