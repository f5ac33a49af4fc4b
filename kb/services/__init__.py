"""Writes to the knowledge base, one module per responsibility:

- ``documents``: the staff actions on a document's lifecycle (save, retire, restore);
- ``chunks``: a document's chunks in one model: chunk, embed, write if still current;
- ``indexing``: the indexing path of every caller: chunk, embed, write, count;
- ``index_queue``: a save's indexing request, the Celery task's body, the sweep;
- ``enqueue``: sending kb's Celery tasks by name, so ``kb.tasks`` alone imports the other;
- ``embedding_models``: registering a model and its HNSW index, coverage, switch, drop;
- ``model_builds``: adding a model and building its chunks in the background;
- ``sync``: making the documents match a folder or an upload (kb_sync, admin import).
"""

from kb.services.chunks import (
    ChunksWritten,
    DocumentChunks,
    Progress,
    chunk_limits_for,
    chunks_embed,
    chunks_replace,
    chunks_write_if_current,
    document_chunk,
    vectors_stored,
)
from kb.services.documents import (
    RETIRE_PERMISSION,
    DocumentActionError,
    DocumentEditConflict,
    DocumentPermissionDenied,
    document_delete,
    document_edit_check,
    document_lifecycle_check,
    document_restore,
    document_retire,
    document_retire_undo,
    document_retirement_undoable,
    document_save,
    document_successor_check,
    may_delete,
    may_retire,
)
from kb.services.embedding_models import (
    Coverage,
    EmbeddingModelError,
    EmbeddingModelMismatch,
    embedding_model_activate,
    embedding_model_coverage,
    embedding_model_drop,
    embedding_model_for_indexing,
    embedding_model_for_key,
    embedding_model_register,
    hnsw_index_create,
    hnsw_index_exists,
)
from kb.services.index_queue import (
    IndexingFailed,
    IndexRequests,
    document_index,
    document_index_all_models,
    document_index_request,
    index_enqueue,
    index_requests_in_bulk,
    index_requests_open,
    index_sweep,
)
from kb.services.model_builds import (
    BuildReport,
    documents_index_batch,
    embedding_model_add,
    embedding_model_build,
)

__all__ = [
    "RETIRE_PERMISSION",
    "BuildReport",
    "ChunksWritten",
    "Coverage",
    "DocumentActionError",
    "DocumentChunks",
    "DocumentEditConflict",
    "DocumentPermissionDenied",
    "EmbeddingModelError",
    "EmbeddingModelMismatch",
    "IndexRequests",
    "IndexingFailed",
    "Progress",
    "chunk_limits_for",
    "chunks_embed",
    "chunks_replace",
    "chunks_write_if_current",
    "document_chunk",
    "document_delete",
    "document_edit_check",
    "document_index",
    "document_index_all_models",
    "document_index_request",
    "document_lifecycle_check",
    "document_restore",
    "document_retire",
    "document_retire_undo",
    "document_retirement_undoable",
    "document_save",
    "document_successor_check",
    "documents_index_batch",
    "embedding_model_activate",
    "embedding_model_add",
    "embedding_model_build",
    "embedding_model_coverage",
    "embedding_model_drop",
    "embedding_model_for_indexing",
    "embedding_model_for_key",
    "embedding_model_register",
    "hnsw_index_create",
    "hnsw_index_exists",
    "index_enqueue",
    "index_requests_in_bulk",
    "index_requests_open",
    "index_sweep",
    "may_delete",
    "may_retire",
    "vectors_stored",
]
