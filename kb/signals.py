"""Every save of a document, from any code path, asks for it to be indexed."""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_save
from django.dispatch import receiver

from kb.models import Document
from kb.services import document_index_request, index_request_models


@receiver(post_save, sender=Document, dispatch_uid="kb_document_index_request")
def document_saved(sender: type[Document], instance: Document, **kwargs: Any) -> None:
    # A caller that indexes the document itself limits the request (kb_sync, see
    # ``index_request_only_for``); every other save requests every model that follows edits.
    document_index_request(document=instance, embedding_models=index_request_models(instance))
