"""The content's admin, one module per admin class; importing them registers them with the site
(Django's autodiscovery imports ``kb.admin``)."""

from kb.admin import categories, chunks, documents, embedding_models

__all__ = ["categories", "chunks", "documents", "embedding_models"]
