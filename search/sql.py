"""What every retrieval statement shares: the tables it reads, the condition for the chunks an
asker may see, and the connection it reads from."""

from __future__ import annotations

from django.db import connections
from django.db.backends.base.base import BaseDatabaseWrapper

from kb.models import Chunk, Document, EmbeddingModel, IndexStatistic, PageVector, TermStatistic
from kb.runtime.db_router import read_alias
from kb.visibility import visible_document_sql

CHUNKS = Chunk._meta.db_table
DOCUMENTS = Document._meta.db_table
PAGE_VECTORS = PageVector._meta.db_table
INDEX_STATISTICS = IndexStatistic._meta.db_table
TERM_STATISTICS = TermStatistic._meta.db_table


def visible_chunks_sql(embedding_model: EmbeddingModel) -> str:
    """The condition on ``c`` (chunks) joined to ``d`` (its document) for chunks of one model on
    pages the asker may see (``kb.visibility``); it binds the audiences as ``%(audiences)s``.
    The model is a literal: the shape of that model's partial HNSW index."""
    return f"{visible_document_sql(alias='d')} AND c.embedding_model_id = {int(embedding_model.pk)}"


def reading_connection() -> BaseDatabaseWrapper:
    """The connection retrieval reads from: a replica when one serves these reads
    (``kb.runtime.db_router``), else the primary."""
    return connections[read_alias()]
