"""Directory sync: make the index match a folder of Markdown files, doing only the work needed.

Idempotent and incremental. The skip key is (content hash, chunker version, embedding model), so
an unchanged corpus embeds nothing. Embedding runs outside any transaction, in batches that span
documents; each changed document is then written in one transaction (document row, chunks, index
state) so a search never sees half of it. A file that cannot be read or parsed is reported and
its indexed copy is left alone; an empty folder never empties a non-empty index unless asked.

Every write goes through ``document_save`` with the acting user (``SYSTEM`` for a command run on
the server): a file that would retire, restore or re-link a page its importer may not is
reported like a file that does not parse, and that page is left as it was.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import structlog
from django.db import transaction

from kb.actors import Actor
from kb.embedders import Embedder, EmbeddingError
from kb.models import Document, DocumentIndexState, EmbeddingModel, content_hash_of
from kb.parsing import (
    MARKDOWN_SUFFIXES,
    MAX_DOCUMENT_BYTES,
    DocumentParseError,
    ParsedDocument,
    parse_document,
)
from kb.services import (
    DocumentChunks,
    DocumentPermissionDenied,
    Progress,
    chunks_embed,
    chunks_replace,
    document_chunk,
    document_lifecycle_check,
    document_save,
    embedding_model_for_indexing,
    index_is_current,
    indexing_inline,
    vectors_stored,
)

log = structlog.get_logger("groundwork.kb")

# Texts embedded together: enough for full, length-sorted batches across documents (padding is
# wasted work; measured 256 -> 512 moved the 1,000-document bench from 0.81 to 0.84 of raw
# throughput), few enough that progress moves and memory stays flat on big folders.
INDEX_WINDOW_TEXTS = 512

_METADATA_FIELDS = ("title", "category", "audience", "status", "updated_on", "review_by")


class SyncRefused(RuntimeError):
    """The sync would do something destructive or impossible; nothing was changed."""


@dataclass(frozen=True)
class SyncFailure:
    path: str
    message: str


@dataclass
class SyncReport:
    indexed: list[str] = field(default_factory=list)  # new or changed content, re-embedded
    queued: list[str] = field(default_factory=list)  # new or changed, left to the background
    updated: list[str] = field(default_factory=list)  # metadata only, no embedding
    unchanged: int = 0
    removed: list[str] = field(default_factory=list)
    failed: list[SyncFailure] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    refused: bool = False  # an all-or-nothing import that found problems and wrote nothing
    chunks: int = 0  # chunks written
    embedded: int = 0  # texts sent to the embedder
    reused: int = 0  # texts whose vector the model already had (same embedded text)
    seconds: float = 0.0

    def summary(self) -> str:
        if self.refused:
            return f"Nothing was imported: {len(self.failed)} problem(s) to fix first."
        queued = f", {len(self.queued)} queued for indexing" if self.queued else ""
        return (
            f"{len(self.indexed)} changed{queued}, {len(self.updated)} metadata-only, "
            f"{self.unchanged} unchanged, {len(self.removed)} removed, {len(self.failed)} failed; "
            f"{self.chunks} chunks written, {self.embedded} texts embedded and {self.reused} "
            f"reused in {self.seconds:.2f} s"
        )


# A progress callback receives (documents done, documents to index).


# A source file: its document path, and a reader returning at most MAX_DOCUMENT_BYTES + 1 bytes.
Source = tuple[str, Callable[[], bytes]]


def corpus_sync(
    *,
    directory: Path,
    embedder: Embedder,
    actor: Actor,
    allow_prune_all: bool = False,
    progress: Progress | None = None,
) -> SyncReport:
    """Make the index match ``directory``: documents whose file is gone are removed."""
    if not directory.is_dir():
        raise SyncRefused(f"{directory} is not a directory")
    sources = [
        (relative_path, functools.partial(_read_limited, file_path))
        for relative_path, file_path in _markdown_files(directory)
    ]
    return documents_import(
        sources=sources,
        embedder=embedder,
        origin=str(directory),
        actor=actor,
        prune=True,
        allow_prune_all=allow_prune_all,
        progress=progress,
    )


def documents_import(
    *,
    sources: Sequence[Source],
    embedder: Embedder,
    origin: str,
    actor: Actor,
    prune: bool = False,
    allow_prune_all: bool = False,
    index_inline: bool = True,
    all_or_nothing: bool = False,
    progress: Progress | None = None,
) -> SyncReport:
    """Create or update a document per source, skipping unchanged ones.

    With ``index_inline`` the changed documents are chunked and embedded here (kb_sync);
    without it they are only saved, and the save's indexing request does the rest in the
    background (uploads in admin, where a request must not wait on embedding).

    With ``all_or_nothing`` (an upload) every source is validated first; if any fails, nothing
    is written and the report lists every problem; otherwise all writes are one transaction.
    """
    if all_or_nothing and index_inline:
        raise ValueError("all_or_nothing imports only save; indexing follows in the background")
    with transaction.atomic() if all_or_nothing else contextlib.nullcontext():
        return _documents_import(
            sources=sources,
            embedder=embedder,
            origin=origin,
            actor=actor,
            prune=prune,
            allow_prune_all=allow_prune_all,
            index_inline=index_inline,
            all_or_nothing=all_or_nothing,
            progress=progress,
        )


def _documents_import(
    *,
    sources: Sequence[Source],
    embedder: Embedder,
    origin: str,
    actor: Actor,
    prune: bool,
    allow_prune_all: bool,
    index_inline: bool,
    all_or_nothing: bool,
    progress: Progress | None,
) -> SyncReport:
    started = time.perf_counter()
    report = SyncReport()
    embedding_model = embedding_model_for_indexing(embedder=embedder)

    present: set[str] = set()
    parsed: list[ParsedDocument] = []
    for relative_path, read in sources:
        if relative_path in present:
            # Two entries for one path (a zip can hold that): which one was meant is unknown.
            parsed = [document for document in parsed if document.path != relative_path]
            report.failed.append(
                SyncFailure(relative_path, f"{relative_path}: appears more than once in {origin}")
            )
            continue
        present.add(relative_path)
        try:
            parsed.append(parse_document(path=relative_path, raw=read()))
        except DocumentParseError as exc:
            report.failed.append(SyncFailure(relative_path, str(exc)))
        except OSError as exc:
            report.failed.append(SyncFailure(relative_path, f"{relative_path}: cannot read: {exc}"))

    existing = {doc.path: doc for doc in Document.objects.defer("body")}
    if prune and not present and existing and not allow_prune_all:
        raise SyncRefused(
            f"{origin} has no Markdown files but the index holds {len(existing)} documents; "
            "refusing to remove them all (pass --allow-prune-all if that is what you want)"
        )
    parsed = _permitted(parsed, existing, actor, report)
    if all_or_nothing and report.failed:
        report.refused = True
        report.seconds = time.perf_counter() - started
        log.info("documents_import_refused", origin=origin, failed=len(report.failed))
        return report
    states = {
        state.document_id: state
        for state in DocumentIndexState.objects.filter(embedding_model=embedding_model)
    }

    to_index: list[ParsedDocument] = []
    for document in parsed:
        current = existing.get(document.path)
        content_hash = content_hash_of(title=document.title, body=document.body)
        if _needs_write(current, content_hash, states, index_inline=index_inline):
            to_index.append(document)
        elif _metadata_differs(current, document):
            try:
                _document_update_metadata(current, document, actor)
            except DocumentPermissionDenied as exc:
                report.failed.append(SyncFailure(document.path, str(exc)))
                continue
            report.updated.append(document.path)
        else:
            report.unchanged += 1

    if index_inline:
        with indexing_inline(embedding_model):
            _index_documents(to_index, existing, embedder, embedding_model, actor, report, progress)
    else:
        for document in to_index:
            try:
                _document_upsert(
                    document,
                    current=existing.get(document.path),
                    content_hash=content_hash_of(title=document.title, body=document.body),
                    actor=actor,
                )
            except DocumentPermissionDenied as exc:
                report.failed.append(SyncFailure(document.path, str(exc)))
                continue
            report.queued.append(document.path)
    _link_successors(parsed, report, actor)
    removed = sorted(set(existing) - present) if prune else []
    if removed:
        with transaction.atomic():
            Document.objects.filter(path__in=removed).delete()
        report.removed = removed

    report.seconds = time.perf_counter() - started
    log.info(
        "documents_imported",
        origin=origin,
        indexed=len(report.indexed),
        queued=len(report.queued),
        updated=len(report.updated),
        unchanged=report.unchanged,
        removed=len(report.removed),
        failed=len(report.failed),
        chunks=report.chunks,
        seconds=round(report.seconds, 3),
    )
    return report


def _needs_write(
    current: Document | None,
    content_hash: str,
    states: dict[int, DocumentIndexState],
    *,
    index_inline: bool,
) -> bool:
    """Whether the document's text must be written. Indexing inline, that is until its chunks
    are current; otherwise saving is the whole job, and an unchanged text is already indexed
    or queued by its earlier save."""
    if current is None:
        return True
    if index_inline:
        return not index_is_current(states.get(current.pk), content_hash=content_hash)
    return current.content_hash != content_hash


def _markdown_files(directory: Path) -> Iterator[tuple[str, Path]]:
    """Markdown files under ``directory``, sorted, skipping hidden files and folders."""
    for file_path in sorted(directory.rglob("*")):
        relative = file_path.relative_to(directory)
        if any(part.startswith(".") for part in relative.parts):
            continue
        if file_path.suffix.lower() in MARKDOWN_SUFFIXES and file_path.is_file():
            yield relative.as_posix(), file_path


def _read_limited(file_path: Path) -> bytes:
    # Read one byte past the limit so the parser reports the size without us loading a huge file.
    with file_path.open("rb") as handle:
        return handle.read(MAX_DOCUMENT_BYTES + 1)


def _permitted(
    parsed: list[ParsedDocument], existing: dict[str, Document], actor: Actor, report: SyncReport
) -> list[ParsedDocument]:
    """The documents ``actor`` may write as their files say; the others are reported failed
    before anything is embedded. ``document_save`` checks again as each one is written."""
    permitted = []
    for document in parsed:
        try:
            document_lifecycle_check(
                actor=actor,
                document=existing.get(document.path) or Document(path=document.path),
                status=document.status,
                successor_path=document.superseded_by,
            )
        except DocumentPermissionDenied as exc:
            report.failed.append(SyncFailure(document.path, str(exc)))
        else:
            permitted.append(document)
    return permitted


def _metadata_differs(current: Document, document: ParsedDocument) -> bool:
    return any(getattr(current, name) != getattr(document, name) for name in _METADATA_FIELDS)


def _document_update_metadata(current: Document, document: ParsedDocument, actor: Actor) -> None:
    for name in _METADATA_FIELDS:
        setattr(current, name, getattr(document, name))
    document_save(document=current, actor=actor)


def _chunked_windows(
    to_index: list[ParsedDocument], embedder: Embedder
) -> Iterator[list[tuple[ParsedDocument, DocumentChunks]]]:
    """Chunk documents in order and group them until a window holds enough texts to embed."""
    window: list[tuple[ParsedDocument, DocumentChunks]] = []
    texts = 0
    for document in to_index:
        chunks = document_chunk(title=document.title, body=document.body, embedder=embedder)
        window.append((document, chunks))
        texts += len(chunks.drafts)
        if texts >= INDEX_WINDOW_TEXTS:
            yield window
            window, texts = [], 0
    if window:
        yield window


def _index_documents(
    to_index: list[ParsedDocument],
    existing: dict[str, Document],
    embedder: Embedder,
    embedding_model: EmbeddingModel,
    actor: Actor,
    report: SyncReport,
    progress: Progress | None,
) -> None:
    """Embed window N+1 on a worker thread while window N is written to the database.

    onnxruntime and HTTP clients release the GIL, so the writes overlap the embedding instead of
    adding to it; this keeps sync throughput near the embedder's own.
    """
    done = 0
    if progress and to_index:
        progress(done, len(to_index))

    def embed(
        window: list[tuple[ParsedDocument, DocumentChunks]], stored: dict[str, np.ndarray]
    ) -> list[DocumentChunks]:
        return chunks_embed(
            documents=[chunks for _, chunks in window], embedder=embedder, stored=stored
        )

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
                        row = _document_upsert(
                            document,
                            current=current,
                            content_hash=chunks.content_hash,
                            actor=actor,
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
        done += len(window)
        if progress:
            progress(done, len(to_index))

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed") as pool:
        previous: tuple[list[tuple[ParsedDocument, DocumentChunks]], Future] | None = None
        for window in _chunked_windows(to_index, embedder):
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


def _document_upsert(
    document: ParsedDocument, *, current: Document | None, content_hash: str, actor: Actor
) -> Document:
    """Write the document row from the file; ``current`` is the row this sync read, if any."""
    row = current or Document(path=document.path)
    for name in _METADATA_FIELDS:
        setattr(row, name, getattr(document, name))
    row.body = document.body
    row.content_hash = content_hash
    return document_save(document=row, actor=actor)


def _link_successors(parsed: list[ParsedDocument], report: SyncReport, actor: Actor) -> None:
    """Point ``superseded_by`` at successor rows, once every document of this sync exists."""
    wanted = {document.path: document.superseded_by for document in parsed}
    ids = dict(Document.objects.values_list("path", "id"))
    current = dict(Document.objects.filter(path__in=wanted).values_list("path", "superseded_by_id"))
    for path, successor_path in wanted.items():
        if path not in ids:
            continue  # failed to index
        successor_id = ids.get(successor_path) if successor_path else None
        if successor_path and successor_id is None:
            report.warnings.append(f"{path}: superseded_by {successor_path} is not in the index")
        if current.get(path) != successor_id:
            document = Document.objects.get(path=path)
            document.superseded_by_id = successor_id
            try:
                document_save(document=document, actor=actor)
            except DocumentPermissionDenied as exc:
                report.failed.append(SyncFailure(path, str(exc)))
