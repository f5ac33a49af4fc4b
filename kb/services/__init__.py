"""Writes to the knowledge base. ``indexing`` keeps chunks in step with documents and embedding
models; ``documents`` holds the staff actions on a document's lifecycle."""

from kb.services.documents import DocumentActionError, document_restore, document_retire
from kb.services.indexing import (
    DocumentChunks,
    EmbeddingModelMismatch,
    IndexingFailed,
    chunk_limits_for,
    chunks_embed,
    chunks_replace,
    document_chunk,
    document_index,
    document_index_request,
    embedding_model_for_indexing,
    embedding_model_register,
    hnsw_index_create,
    index_enqueue,
    index_is_current,
    index_sweep,
    indexing_inline,
)

__all__ = [
    "DocumentActionError",
    "DocumentChunks",
    "EmbeddingModelMismatch",
    "IndexingFailed",
    "chunk_limits_for",
    "chunks_embed",
    "chunks_replace",
    "document_chunk",
    "document_index",
    "document_index_request",
    "document_restore",
    "document_retire",
    "embedding_model_for_indexing",
    "embedding_model_register",
    "hnsw_index_create",
    "index_enqueue",
    "index_is_current",
    "index_sweep",
    "indexing_inline",
]
