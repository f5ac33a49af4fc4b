"""kb_sync's indexing: chunk, embed and write the changed documents here, not in the background.

Embedding runs outside any transaction, in windows of texts that span documents (the path of
``kb.services.indexing``); each window is then written in one transaction (its documents' rows,
their chunks, their index states), so a search never sees half of a document.

One transaction and one chunk statement a window, not one a document: the window shares the
commit, the round trip and the statement triggers that INSERT fires (the BM25 statistics, the
page vectors), which took a sync's own work on 1,000 small pages from 9.4-10.3 to 7.5-7.7 ms a
page (docs/operations.md). A sync cut off mid-window loses that window's writes, never half a
document, and a re-run finishes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction

from kb.actors import Actor
from kb.chunking import ChunkingError
from kb.embedders import Embedder, EmbeddingError
from kb.models import Document, EmbeddingModel
from kb.parsing import ParsedDocument
from kb.services.chunks import ChunksToWrite, DocumentChunks, Progress, chunks_replace_many
from kb.services.documents import DocumentPermissionDenied
from kb.services.index_queue import index_requests_in_bulk
from kb.services.indexing import IndexOutcome, documents_index
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
    """Write each changed document with its chunks in ``embedding_model``, embedding
    ``INDEX_WINDOW_TEXTS`` texts at a time across documents and writing each window in one
    transaction.

    Each save requests, through its post-save signal, indexing into the other models that
    follow edits (one being built), in bulk: this transaction indexes ``embedding_model``.
    """
    with index_requests_in_bulk(indexed_here=embedding_model):
        counts = documents_index(
            sources=to_index,
            embedder=embedder,
            embedding_model=embedding_model,
            path=_SyncIndexing(
                existing=existing,
                provenances=provenances,
                embedding_model=embedding_model,
                actor=actor,
                report=report,
            ),
            window_texts=INDEX_WINDOW_TEXTS,
            progress=progress,
        )
    report.embedded += counts.embedded
    report.reused += counts.reused
    report.chunks += counts.chunks


@dataclass
class _SyncIndexing:
    """A sync's path: a window's rows are saved with their chunks in one transaction; a file
    that fails is reported and its indexed copy, if any, is kept as it was."""

    existing: dict[str, Document]
    provenances: dict[str, Provenance]
    embedding_model: EmbeddingModel
    actor: Actor
    report: SyncReport

    def unchunkable(self, source: ParsedDocument, error: ChunkingError) -> None:
        # The document cannot fit the model's window: report it and go on with the others.
        self.report.failed.append(
            SyncFailure(source.path, f"{source.path}: cannot be chunked: {error}")
        )

    def unembeddable(self, sources: Sequence[ParsedDocument], error: EmbeddingError) -> None:
        # The embedder is down or answered nonsense: keep every indexed copy as it was.
        self.report.failed.extend(
            SyncFailure(d.path, f"embedding failed: {error}") for d in sources
        )

    def broken(self, source: ParsedDocument, error: Exception) -> None:
        """Nothing to record: the file's row is not written, and the bug surfaces."""

    def write(self, window: Sequence[tuple[ParsedDocument, DocumentChunks]]) -> list[IndexOutcome]:
        """The window's files in one transaction: each file's row, then all their chunks in one
        statement. A file refused (``DocumentPermissionDenied``, raised before its
        row is written and rolled back to the savepoint of ``document_save_with_provenance``)
        is reported, and the others are written."""
        outcomes: list[IndexOutcome] = []
        written: list[ChunksToWrite] = []
        with transaction.atomic():
            for source, chunks in window:
                current = self.existing.get(source.path)
                row = document_row(source, current=current, content_hash=chunks.content_hash)
                try:
                    document_save_with_provenance(
                        row=row,
                        actor=self.actor,
                        provenance=self.provenances[source.path],
                        updated_on_given=source.updated_on is not None,
                    )
                except DocumentPermissionDenied as exc:
                    self.report.failed.append(SyncFailure(source.path, str(exc)))
                    outcomes.append("failed")
                    continue
                written.append(ChunksToWrite(row, chunks, document_is_new=current is None))
                outcomes.append("indexed")
            chunks_replace_many(written, embedding_model=self.embedding_model)
        for write in written:
            self.report.indexed.append(write.document.path)
            if write.document_is_new:
                self.report.created.append(write.document.path)
        return outcomes
