"""The indexing path, written once: chunk each document, embed them together, write each one's
chunks, count what happened.

Three callers index, and ``documents_index`` is the path of all three: the background task (one
saved document), a batch (a model build, the bulk queue's unit) and ``kb_sync`` (a folder's
changed files, in windows). What differs between them is what a document is to them (a saved
row, a parsed file not saved yet), where its chunks are written and what a failure means; each
says so in an ``IndexingPath``. Chunking runs on the caller's thread; embedding runs on a worker
thread (onnxruntime and HTTP clients release the GIL), so while one window of texts is embedded
the one before it is written, and a sync keeps near the embedder's own throughput.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

from kb.chunking import ChunkingError
from kb.embedders import Embedder, EmbeddingError
from kb.models import Document, EmbeddingModel
from kb.services.chunks import (
    DocumentChunks,
    Progress,
    chunks_embed,
    chunks_write_if_current,
    document_chunk,
    document_index_failed,
    log_document_indexed,
    vectors_stored,
)

# What became of one document: its chunks written, left to a newer edit, found current or
# deleted meanwhile (see ``chunks_write_if_current``), or refused by the caller's write.
IndexOutcome = Literal["indexed", "stale", "current", "gone", "failed"]


class IndexSource(Protocol):
    """What a document is indexed from: a saved row, or a parsed file a sync has not saved."""

    @property
    def path(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def body(self) -> str: ...


SourceT = TypeVar("SourceT", bound=IndexSource)
T = TypeVar("T")
SourceT_contra = TypeVar("SourceT_contra", bound=IndexSource, contravariant=True)


class IndexingPath(Protocol[SourceT_contra]):
    """How one caller indexes: where a document's chunks are written and what each failure
    means to it. A method that raises stops the run there; one that returns lets it go on."""

    def unchunkable(self, source: SourceT_contra, error: ChunkingError) -> None:
        """``source`` cannot fit the model's window (``kb.chunking.ChunkingError``)."""

    def unembeddable(self, sources: Sequence[SourceT_contra], error: EmbeddingError) -> None:
        """The embedder failed on the window that held ``sources``."""

    def broken(self, source: SourceT_contra, error: Exception) -> None:
        """An error no step expects (a bug) hit ``source``; it is raised once this returns."""

    def write(self, window: Sequence[tuple[SourceT_contra, DocumentChunks]]) -> list[IndexOutcome]:
        """Write each source's embedded chunks and say what became of each, in order."""


@dataclass
class IndexCounts:
    """What a run did: each write's outcome (a document that failed before its write has
    none), and the texts embedded, reused from stored vectors and written as chunks."""

    outcomes: Counter[str] = field(default_factory=Counter)
    embedded: int = 0
    reused: int = 0
    chunks: int = 0


Window = list[tuple[SourceT, DocumentChunks]]


def documents_index(
    *,
    sources: Sequence[SourceT],
    embedder: Embedder,
    embedding_model: EmbeddingModel,
    path: IndexingPath[SourceT],
    window_texts: int | None = None,
    progress: Progress | None = None,
) -> IndexCounts:
    """Index ``sources`` into ``embedding_model`` along ``path``: chunk them in order, embed
    ``window_texts`` texts per embedder call, on a worker thread, writing window N while
    window N+1 is embedded; by default all of them in one call, on this thread, as there is
    nothing to overlap. Vectors the model already holds for a text are reused, looked up on
    this thread, which holds the database connection."""
    counts = IndexCounts()
    total = len(sources)
    done = 0

    def advance(documents: int) -> None:
        nonlocal done
        done += documents
        if progress is not None:
            progress(done, total)

    if sources:
        advance(0)
    embedding_runner: Executor = (
        _OnThisThread()
        if window_texts is None
        else ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed")
    )
    with embedding_runner as pool:
        previous: tuple[Window[SourceT], Future[list[DocumentChunks]]] | None = None
        for window in _windows(sources, embedder, window_texts, path=path, failed=advance):
            drafts = [chunks for _, chunks in window]
            stored = vectors_stored(embedding_model=embedding_model, documents=drafts)
            embedding = pool.submit(
                chunks_embed, documents=drafts, embedder=embedder, stored=stored
            )
            if previous is not None:
                _window_write(*previous, path=path, counts=counts)
                advance(len(previous[0]))
            previous = (window, embedding)
        if previous is not None:
            _window_write(*previous, path=path, counts=counts)
            advance(len(previous[0]))
    return counts


class _OnThisThread(Executor):
    """Runs each call at once on the calling thread, for a run of one window."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as exc:
            future.set_exception(exc)
        return future


def _windows(
    sources: Sequence[SourceT],
    embedder: Embedder,
    window_texts: int | None,
    *,
    path: IndexingPath[SourceT],
    failed: Callable[[int], None] | None = None,
) -> Iterator[Window[SourceT]]:
    """Chunk ``sources`` in order and group them until a window holds ``window_texts`` texts.
    A document that cannot be chunked goes to ``path.unchunkable`` and into no window, and is
    counted done through ``failed`` (called with the number of documents)."""
    window: Window[SourceT] = []
    texts = 0
    for source in sources:
        try:
            chunks = document_chunk(title=source.title, body=source.body, embedder=embedder)
        except ChunkingError as exc:
            path.unchunkable(source, exc)
            if failed is not None:
                failed(1)
            continue
        except Exception as exc:
            path.broken(source, exc)
            raise
        window.append((source, chunks))
        texts += len(chunks.drafts)
        if window_texts is not None and texts >= window_texts:
            yield window
            window, texts = [], 0
    if window:
        yield window


def _window_write(
    window: Window[SourceT],
    embedding: Future[list[DocumentChunks]],
    *,
    path: IndexingPath[SourceT],
    counts: IndexCounts,
) -> None:
    """Write each document of an embedded window along ``path``, counting what happened."""
    sources = [source for source, _ in window]
    try:
        embedded = embedding.result()
    except EmbeddingError as exc:
        path.unembeddable(sources, exc)
        return
    except Exception as exc:
        for source in sources:
            path.broken(source, exc)
        raise
    outcomes = path.write(list(zip(sources, embedded, strict=True)))
    for chunks, outcome in zip(embedded, outcomes, strict=True):
        counts.embedded += chunks.embedded
        counts.reused += chunks.reused
        counts.outcomes[outcome] += 1
        if outcome == "indexed":
            counts.chunks += len(chunks.drafts)


@dataclass(kw_only=True)
class SavedDocumentsPath:
    """The path of documents already saved (the background task, a batch): each one's chunks
    are written only if it is still the version they were cut from, and any failure is
    recorded on its index state, where the admin shows it and the sweep retries it. The
    subclass says whether a failure stops the run."""

    embedding_model: EmbeddingModel
    started: float = field(default_factory=time.perf_counter)
    batch: int | None = None  # documents embedded together, for the log

    def broken(self, source: Document, error: Exception) -> None:
        document_index_failed(
            document=source,
            embedding_model=self.embedding_model,
            error=f"indexing failed: {error!r}",
            bug=True,
        )

    def write(self, window: Sequence[tuple[Document, DocumentChunks]]) -> list[IndexOutcome]:
        """Each document in a transaction of its own, as each was saved on its own."""
        return [self._write_one(source, chunks) for source, chunks in window]

    def _write_one(self, source: Document, chunks: DocumentChunks) -> IndexOutcome:
        outcome = chunks_write_if_current(
            document_id=source.pk, embedding_model=self.embedding_model, chunks=chunks
        )
        if outcome == "indexed":
            extra = {} if self.batch is None else {"batch": self.batch}
            log_document_indexed(
                path=source.path,
                embedding_model=self.embedding_model,
                chunks=chunks,
                started=self.started,
                **extra,
            )
        return outcome
