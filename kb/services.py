"""Writes to the knowledge base: embedding models, documents, and their chunks."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import structlog
from django.db import connection, transaction
from django.utils import timezone

from kb.chunking import CHUNKER_VERSION, ChunkDraft, ChunkLimits, chunk_markdown, embedding_text
from kb.embedders import Embedder
from kb.models import Chunk, Document, DocumentIndexState, EmbeddingModel

log = structlog.get_logger("groundwork.kb")


class EmbeddingModelMismatch(RuntimeError):
    """The configured embedder is not the active embedding model: vectors would not compare."""


def content_hash_of(*, title: str, body: str) -> str:
    """Hash of what the chunks are built from: a change here means re-chunk and re-embed."""
    return hashlib.sha256(f"{title}\x00{body}".encode()).hexdigest()


# --- Embedding models -----------------------------------------------------------------------------


def embedding_model_register(*, embedder: Embedder) -> EmbeddingModel:
    """Record ``embedder``'s vector space (idempotent) and give it its partial HNSW index.

    The first model registered becomes active; later ones start as ``building``. The index is
    created while the model has no chunks yet, so it costs nothing and locks nothing.
    """
    with transaction.atomic():
        model, created = EmbeddingModel.objects.get_or_create(
            key=embedder.key,
            defaults={
                "provider": embedder.provider,
                "model_name": embedder.model_name,
                "dimensions": embedder.dimensions,
                "max_input_tokens": embedder.max_input_tokens,
            },
        )
        if model.dimensions != embedder.dimensions:
            raise EmbeddingModelMismatch(
                f"{embedder.key} is registered with {model.dimensions} dimensions but the "
                f"embedder produces {embedder.dimensions}"
            )
        if created and not EmbeddingModel.objects.active().exists():
            model.state = EmbeddingModel.State.ACTIVE
            model.activated_at = timezone.now()
            model.save(update_fields=["state", "activated_at"])
        if created or not _hnsw_index_exists(model):
            _hnsw_index_create(model)
    if created:
        log.info("embedding_model_registered", key=model.key, state=model.state)
    return model


def _hnsw_index_exists(model: EmbeddingModel) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s", [model.hnsw_index_name])
        return cursor.fetchone() is not None


def _hnsw_index_create(model: EmbeddingModel) -> None:
    # Identifiers and the dimension are integers we control, never user input.
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE INDEX IF NOT EXISTS {model.hnsw_index_name} ON kb_chunk "
            f"USING hnsw ((embedding::vector({int(model.dimensions)})) vector_cosine_ops) "
            f"WHERE embedding_model_id = {int(model.pk)}"
        )


def embedding_model_for_indexing(*, embedder: Embedder) -> EmbeddingModel:
    """The registered model for ``embedder``; refuses to index into a space search doesn't use."""
    model = embedding_model_register(embedder=embedder)
    if model.state == EmbeddingModel.State.RETIRED:
        raise EmbeddingModelMismatch(
            f"embedding model {model.key} is retired; configure the active model instead"
        )
    return model


# --- Chunking and indexing ------------------------------------------------------------------------


def chunk_limits_for(embedder: Embedder) -> ChunkLimits:
    return ChunkLimits.for_window(embedder.max_input_tokens)


@dataclass(frozen=True)
class DocumentChunks:
    """One document version's chunks, and their vectors once ``chunks_embed`` has run.

    Built outside any transaction: chunking and embedding are slow, and a transaction held open
    across them would block writers for seconds.
    """

    title: str
    content_hash: str
    drafts: list[ChunkDraft]
    vectors: np.ndarray | None = None

    def embedding_texts(self) -> list[str]:
        return [embedding_text(self.title, d.heading_path, d.text) for d in self.drafts]


def document_chunk(*, title: str, body: str, embedder: Embedder) -> DocumentChunks:
    drafts = chunk_markdown(
        title=title,
        body=body,
        limits=chunk_limits_for(embedder),
        count_tokens=embedder.count_tokens,
    )
    return DocumentChunks(
        title=title, content_hash=content_hash_of(title=title, body=body), drafts=drafts
    )


def chunks_embed(
    *, documents: Sequence[DocumentChunks], embedder: Embedder
) -> list[DocumentChunks]:
    """Embed several documents' chunks in one call, so batches span documents."""
    vectors = embedder.embed_documents(
        [text for document in documents for text in document.embedding_texts()]
    )
    embedded, offset = [], 0
    for document in documents:
        count = len(document.drafts)
        embedded.append(replace(document, vectors=vectors[offset : offset + count]))
        offset += count
    return embedded


def chunks_replace(
    *,
    document: Document,
    embedding_model: EmbeddingModel,
    chunks: DocumentChunks,
    document_is_new: bool = False,
) -> int:
    """Swap a document's chunks for one model. Call inside the transaction that saves the
    document, so a search sees either the old version or the new one, never a mix."""
    if chunks.content_hash != document.content_hash:
        raise ValueError(f"these chunks are for another version of {document.path}")
    if chunks.vectors is None:
        raise ValueError(f"the chunks of {document.path} have not been embedded")
    if not document_is_new:
        Chunk.objects.filter(document=document, embedding_model=embedding_model).delete()
    Chunk.objects.bulk_create(
        [
            Chunk(
                document=document,
                embedding_model=embedding_model,
                ordinal=draft.ordinal,
                heading_path=draft.heading_path,
                text=draft.text,
                char_start=draft.char_start,
                char_end=draft.char_end,
                token_count=draft.token_count,
                embedding=vector,
            )
            for draft, vector in zip(chunks.drafts, chunks.vectors, strict=True)
        ],
        batch_size=500,
    )
    # One INSERT ... ON CONFLICT instead of a read then a write: this runs once per document.
    indexed = DocumentIndexState(
        document=document,
        embedding_model=embedding_model,
        status=DocumentIndexState.Status.INDEXED,
        indexed_hash=chunks.content_hash,
        chunker_version=CHUNKER_VERSION,
        chunk_count=len(chunks.drafts),
        error="",
        indexed_at=timezone.now(),
    )
    DocumentIndexState.objects.bulk_create(
        [indexed],
        update_conflicts=True,
        unique_fields=["document", "embedding_model"],
        update_fields=[
            "status",
            "indexed_hash",
            "chunker_version",
            "chunk_count",
            "error",
            "indexed_at",
            "updated_at",
        ],
    )
    return len(chunks.drafts)


def index_is_current(state: DocumentIndexState | None, *, content_hash: str) -> bool:
    """The skip key: the same content, chunked by the same chunker, is already indexed."""
    return (
        state is not None
        and state.status == DocumentIndexState.Status.INDEXED
        and state.indexed_hash == content_hash
        and state.chunker_version == CHUNKER_VERSION
    )
