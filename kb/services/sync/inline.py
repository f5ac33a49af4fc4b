"""kb_sync's indexing: chunk, embed and write the changed documents here, not in the background.

Embedding runs outside any transaction, in windows of texts that span documents; each document
is then written in one transaction (document row, chunks, index state), so a search never sees
half of it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
from django.db import transaction

from kb.actors import Actor
from kb.chunking import ChunkingError
from kb.embedders import Embedder, EmbeddingError
from kb.models import Document, EmbeddingModel
from kb.parsing import ParsedDocument
from kb.services.chunks import (
    DocumentChunks,
    Progress,
    chunks_embed,
    chunks_replace,
    document_chunk,
    vectors_stored,
)
from kb.services.documents import DocumentPermissionDenied
from kb.services.index_queue import index_request_only_for
from kb.services.sync.provenance import Provenance, document_save_with_provenance
from kb.services.sync.report import SyncFailure, SyncReport
from kb.services.sync.rows import document_row

# Texts embedded together: enough for full, length-sorted batches across documents (padding is
# wasted work; measured 256 -> 512 moved the 1,000-document bench from 0.81 to 0.84 of raw
# throughput), few enough that progress moves and memory stays flat on big folders.
INDEX_WINDOW_TEXTS = 512


def documents_index_inline(
    *,
    to_index: list[ParsedDocument],
    existing: dict[str, Document],
    provenances: dict[str, Provenance],
    embedder: Embedder,
    embedding_model: EmbeddingModel,
    actor: Actor,
    report: SyncReport,
    progress: Progress | None,
) -> None:
    """Write each changed document with its chunks in ``embedding_model``, in one transaction
    per document; embed window N+1 on a worker thread while window N is written.

    onnxruntime and HTTP clients release the GIL, so the writes overlap the embedding instead of
    adding to it; this keeps sync throughput near the embedder's own.
    """
    # Each save still requests indexing into the other models that follow edits (one being
    # built), looked up once for the whole sync rather than once per document.
    others = tuple(EmbeddingModel.objects.indexing().exclude(pk=embedding_model.pk))
    done = 0
    if progress and to_index:
        progress(done, len(to_index))

    def embed(
        window: list[tuple[ParsedDocument, DocumentChunks]], stored: dict[str, np.ndarray]
    ) -> list[DocumentChunks]:
        return chunks_embed(
            documents=[chunks for _, chunks in window], embedder=embedder, stored=stored
        )

    def unchunkable(document: ParsedDocument, exc: ChunkingError) -> None:
        # The document cannot fit the model's window: report it, keep its indexed copy as it
        # was, and go on with the others.
        nonlocal done
        report.failed.append(
            SyncFailure(document.path, f"{document.path}: cannot be chunked: {exc}")
        )
        done += 1
        if progress:
            progress(done, len(to_index))

    def write(window: list[tuple[ParsedDocument, DocumentChunks]], pending: Future) -> None:
        nonlocal done
        try:
            embedded = pending.result()
        except EmbeddingError as exc:
            # The embedder is down or answered nonsense: keep every indexed copy as it was.
            report.failed.extend(SyncFailure(d.path, f"embedding failed: {exc}") for d, _ in window)
        else:
            for (document, _), chunks in zip(window, embedded, strict=True):
                report.embedded += chunks.embedded
                report.reused += chunks.reused
                current = existing.get(document.path)
                try:
                    with transaction.atomic():
                        row = document_row(
                            document, current=current, content_hash=chunks.content_hash
                        )
                        # This transaction indexes ``embedding_model`` itself.
                        index_request_only_for(row, embedding_models=others)
                        document_save_with_provenance(
                            row=row,
                            actor=actor,
                            provenance=provenances[document.path],
                            updated_on_given=document.updated_on is not None,
                        )
                        report.chunks += chunks_replace(
                            document=row,
                            embedding_model=embedding_model,
                            chunks=chunks,
                            document_is_new=current is None,
                        )
                except DocumentPermissionDenied as exc:
                    report.failed.append(SyncFailure(document.path, str(exc)))
                    continue
                report.indexed.append(document.path)
                if current is None:
                    report.created.append(document.path)
        done += len(window)
        if progress:
            progress(done, len(to_index))

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed") as pool:
        previous: tuple[list[tuple[ParsedDocument, DocumentChunks]], Future] | None = None
        for window in _chunked_windows(to_index, embedder, unchunkable=unchunkable):
            # Reusable vectors are looked up here, on the thread that holds the connection.
            stored = vectors_stored(
                embedding_model=embedding_model, documents=[chunks for _, chunks in window]
            )
            pending = pool.submit(embed, window, stored)
            if previous is not None:
                write(*previous)
            previous = (window, pending)
        if previous is not None:
            write(*previous)


def _chunked_windows(
    to_index: list[ParsedDocument],
    embedder: Embedder,
    *,
    unchunkable: Callable[[ParsedDocument, ChunkingError], None],
) -> Iterator[list[tuple[ParsedDocument, DocumentChunks]]]:
    """Chunk documents in order and group them until a window holds enough texts to embed.

    A document that cannot be chunked goes to ``unchunkable`` and into no window; any other
    error of the chunker is a bug and surfaces.
    """
    window: list[tuple[ParsedDocument, DocumentChunks]] = []
    texts = 0
    for document in to_index:
        try:
            chunks = document_chunk(title=document.title, body=document.body, embedder=embedder)
        except ChunkingError as exc:
            unchunkable(document, exc)
            continue
        window.append((document, chunks))
        texts += len(chunks.drafts)
        if texts >= INDEX_WINDOW_TEXTS:
            yield window
            window, texts = [], 0
    if window:
        yield window
