"""A document's chunks in one model: chunk, embed (reusing every vector the model already has),
and write them in place of the old ones, in the one transaction that checks the document is
still the version they were built from.

Every write path (the background task, a model build, kb_sync) goes through here, so the skip
key, the vector reuse and the chunk rows are the same whichever path indexed a document.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
import structlog
from django.db import connection, transaction

from kb.chunking import CHUNKER_VERSION, ChunkDraft, ChunkLimits, chunk_markdown, embedding_text
from kb.embedders import Embedder
from kb.events import documents_indexed
from kb.models import (
    Chunk,
    Document,
    DocumentIndexState,
    EmbeddingModel,
    content_hash_of,
    text_hash_of,
    vector_literal,
)

# progress(done, total): how long-running work reports itself (a bar in the commands).
Progress = Callable[[int, int], None]

# What ``chunks_write_if_current`` did: wrote them, found the document edited since they were
# built (the edit's own request indexes the new text), found this version already indexed
# (another worker did it meanwhile), or found it deleted.
ChunksWritten = Literal["indexed", "stale", "current", "gone"]

log = structlog.get_logger("groundwork.kb")


def chunk_limits_for(embedder: Embedder) -> ChunkLimits:
    """The limits of ``embedder``'s window: what the model reads is what bounds a chunk."""
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
    reused: int = 0  # vectors taken from chunks that already had the same embedded text

    def embedding_texts(self) -> list[str]:
        return [embedding_text(self.title, d.heading_path, d.text) for d in self.drafts]

    def text_hashes(self) -> list[str]:
        return [text_hash_of(text) for text in self.embedding_texts()]

    @property
    def embedded(self) -> int:
        """Texts this version sent to the embedder."""
        return len(self.drafts) - self.reused


def document_chunk(*, title: str, body: str, embedder: Embedder) -> DocumentChunks:
    """Raises ``ChunkingError`` when the document cannot fit the model's window; anything else
    the chunker raises is a bug and is left to surface."""
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
    *,
    documents: Sequence[DocumentChunks],
    embedder: Embedder,
    embedding_model: EmbeddingModel | None = None,
    stored: Mapping[str, np.ndarray] | None = None,
) -> list[DocumentChunks]:
    """Embed several documents' chunks in one call, so batches span documents.

    A text the model has already embedded (same title, heading path and text, in any document)
    reuses the stored vector instead of being embedded again, so an edit or a chunking change
    embeds only the text that is new. The vectors come from ``stored`` (see ``vectors_stored``;
    for a caller that embeds on another thread than the one holding its database connection),
    or are looked up in ``embedding_model``.
    """
    if stored is None:
        stored = (
            vectors_stored(embedding_model=embedding_model, documents=documents)
            if embedding_model is not None
            else {}
        )
    hashes = [text_hash for document in documents for text_hash in document.text_hashes()]
    texts = [text for document in documents for text in document.embedding_texts()]
    missing = [index for index, text_hash in enumerate(hashes) if text_hash not in stored]
    fresh = embedder.embed_documents([texts[index] for index in missing])
    vectors = np.empty((len(texts), embedder.dimensions), dtype=np.float32)
    for index, text_hash in enumerate(hashes):
        if text_hash in stored:
            vectors[index] = stored[text_hash]
    if missing:
        vectors[missing] = fresh
    embedded, offset = [], 0
    for document in documents:
        count = len(document.drafts)
        reused = sum(text_hash in stored for text_hash in hashes[offset : offset + count])
        embedded.append(replace(document, vectors=vectors[offset : offset + count], reused=reused))
        offset += count
    return embedded


def vectors_stored(
    *, embedding_model: EmbeddingModel, documents: Sequence[DocumentChunks]
) -> dict[str, np.ndarray]:
    """The vectors ``embedding_model`` already holds for these documents' texts, by text hash."""
    text_hashes = {text_hash for document in documents for text_hash in document.text_hashes()}
    if not text_hashes:
        return {}
    rows = (
        Chunk.objects.filter(embedding_model=embedding_model, text_hash__in=text_hashes)
        .order_by("text_hash")
        .distinct("text_hash")
        .values_list("text_hash", "embedding")
    )
    return {text_hash: np.asarray(vector, dtype=np.float32) for text_hash, vector in rows}


def log_document_indexed(
    *, path: str, embedding_model: EmbeddingModel, chunks: DocumentChunks, started: float, **extra
) -> None:
    """The ``document_indexed`` event, as every indexing path reports it."""
    log.info(
        "document_indexed",
        path=path,
        model=embedding_model.key,
        content_hash=chunks.content_hash,
        chunks=len(chunks.drafts),
        ms=round((time.perf_counter() - started) * 1000),
        **extra,
    )


def chunks_write_if_current(
    *, document_id: int, embedding_model: EmbeddingModel, chunks: DocumentChunks
) -> ChunksWritten:
    """Write ``chunks`` unless the document was edited or deleted while they were being built.

    The document row is locked first, so an edit committing meanwhile either lands before the
    check (and these chunks are "stale") or waits until they are written (and then requests
    its own indexing): the index never ends on an older version than the document. Under the
    same lock, a version another worker indexed meanwhile (a duplicate message, a batch that
    overlaps an edit's task) is "current" and not written again.
    """
    with transaction.atomic():
        document = (
            Document.objects.select_for_update()
            .only("pk", "path", "content_hash")
            .filter(pk=document_id)
            .first()
        )
        if document is None:
            return "gone"
        if document.content_hash != chunks.content_hash:
            return "stale"
        if (
            DocumentIndexState.objects.filter(document=document, embedding_model=embedding_model)
            .current()
            .exists()
        ):
            return "current"
        chunks_replace(document=document, embedding_model=embedding_model, chunks=chunks)
    return "indexed"


def chunks_replace(
    *,
    document: Document,
    embedding_model: EmbeddingModel,
    chunks: DocumentChunks,
    document_is_new: bool = False,
) -> int:
    """Swap a document's chunks for one model (``chunks_replace_many`` of one document)."""
    return chunks_replace_many(
        [ChunksToWrite(document, chunks, document_is_new)], embedding_model=embedding_model
    )


@dataclass(frozen=True)
class ChunksToWrite:
    """A document's new chunks, and whether the document was created in this transaction (it
    has no old chunks to delete)."""

    document: Document
    chunks: DocumentChunks
    document_is_new: bool = False


def chunks_replace_many(writes: Sequence[ChunksToWrite], *, embedding_model: EmbeddingModel) -> int:
    """Swap several documents' chunks for one model, in one statement for all their rows. Call
    inside the transaction that saves or locks the documents, so a search sees either a
    document's old version or its new one, never a mix. In the active model,
    ``kb.events.documents_indexed`` is sent for them once that transaction commits.

    One statement for many documents shares what each statement pays once: its round trip,
    and the statement triggers that add its chunks' terms to the BM25 statistics and their
    vectors to the page sums (a term several pages use is counted in one upsert)."""
    for write in writes:
        if write.chunks.content_hash != write.document.content_hash:
            raise ValueError(f"these chunks are for another version of {write.document.path}")
        if write.chunks.vectors is None:
            raise ValueError(f"the chunks of {write.document.path} have not been embedded")
    if not writes:
        return 0
    replaced = [write.document.pk for write in writes if not write.document_is_new]
    if replaced:
        Chunk.objects.filter(document_id__in=replaced, embedding_model=embedding_model).delete()
    _chunks_insert_and_mark_indexed(writes, embedding_model)
    if embedding_model.state == EmbeddingModel.State.ACTIVE:
        # What customers are answered from changed: its test questions run again (kb.events).
        document_ids = [write.document.pk for write in writes]
        transaction.on_commit(functools.partial(_documents_indexed, document_ids))
    return sum(len(write.chunks.drafts) for write in writes)


def _documents_indexed(document_ids: list[int]) -> None:
    documents_indexed.send_robust(sender=Document, document_ids=document_ids)


_CHUNK_ROW = "(%s, %s, %s, %s, %s, %s, %s, %s, %s::vector, %s)"
_STATE_ROW = "(%s, %s, 'indexed', %s, %s, %s, '', 0, now(), now())"


def _chunks_insert_and_mark_indexed(
    writes: Sequence[ChunksToWrite], embedding_model: EmbeddingModel
) -> None:
    """Insert the chunks and upsert the index states in one statement.

    This runs beside the embedder on the same cores; as ORM calls (a bulk insert, then an
    upsert) it cost two round trips a document and most of its time in Python.
    """
    params: list[int | str] = []
    for write in writes:
        assert write.chunks.vectors is not None
        for draft, vector, text_hash in zip(
            write.chunks.drafts, write.chunks.vectors, write.chunks.text_hashes(), strict=True
        ):
            params += [
                write.document.pk,
                embedding_model.pk,
                draft.ordinal,
                draft.heading_path,
                draft.text,
                draft.char_start,
                draft.char_end,
                draft.token_count,
                vector_literal(vector),
                text_hash,
            ]
    rows = sum(len(write.chunks.drafts) for write in writes)
    # A data-modifying WITH runs to completion whether or not the statement reads it.
    insert_chunks = ""
    if rows:
        insert_chunks = f"""WITH new_chunks AS (
            INSERT INTO kb_chunk (document_id, embedding_model_id, ordinal, heading_path, text,
                                  char_start, char_end, token_count, embedding, text_hash)
            VALUES {", ".join([_CHUNK_ROW] * rows)}
        ) """
    for write in writes:
        params += [
            write.document.pk,
            embedding_model.pk,
            write.chunks.content_hash,
            CHUNKER_VERSION,
            len(write.chunks.drafts),
        ]
    with connection.cursor() as cursor:
        cursor.execute(
            f"""{insert_chunks}
            INSERT INTO kb_documentindexstate
                (document_id, embedding_model_id, status, indexed_hash, chunker_version,
                 chunk_count, error, attempts, indexed_at, updated_at)
            VALUES {", ".join([_STATE_ROW] * len(writes))}
            ON CONFLICT (document_id, embedding_model_id) DO UPDATE SET
                status = EXCLUDED.status, indexed_hash = EXCLUDED.indexed_hash,
                chunker_version = EXCLUDED.chunker_version, chunk_count = EXCLUDED.chunk_count,
                error = '', indexed_at = EXCLUDED.indexed_at, updated_at = EXCLUDED.updated_at""",
            params,
        )


def document_index_failed(
    *, document: Document, embedding_model: EmbeddingModel, error: str, bug: bool = False
) -> None:
    """Record why ``document`` could not be indexed in ``embedding_model`` and log it; ``bug``
    (an exception no indexing step expects) logs the traceback too."""
    DocumentIndexState.objects.mark_failed(
        document_id=document.pk, embedding_model=embedding_model, error=error
    )
    report = log.exception if bug else log.warning
    report(
        "document_index_failed", path=document.path, model=embedding_model.key, error=error[:200]
    )
