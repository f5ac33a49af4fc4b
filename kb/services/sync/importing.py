"""Directory sync: make the index match a folder of Markdown files, doing only the work needed.

Idempotent and incremental. The skip key is (content hash, chunker version, embedding model), so
an unchanged corpus embeds nothing. Embedding runs outside any transaction, in batches that span
documents; each changed document is then written in one transaction (document row, chunks, index
state) so a search never sees half of it. A file that cannot be read, parsed or chunked is
reported and its indexed copy is left alone; an empty folder never removes the documents synced
from it unless asked.

The database is the source of truth: a folder sync writes only documents whose file changed since
the last sync from that folder and that no one changed since, and removes only that folder's
unedited documents whose file is gone; ``provenance`` owns that rule and reports the rest as
conflicts. An upload (no folder) writes every file it holds: it is a writer's new version.

Every write goes through ``document_save`` with the acting user (``SYSTEM`` for a command run on
the server): a file that would retire, restore or re-link a page its importer may not is
reported like a file that does not parse, and that page is left as it was.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Collection, Sequence
from pathlib import Path

import structlog
from django.conf import settings
from django.db import transaction

from kb.actors import Actor
from kb.embedders import Embedder
from kb.models import Document, content_hash_of
from kb.parsing import ParsedDocument
from kb.services.chunks import Progress
from kb.services.documents import DocumentPermissionDenied, document_save
from kb.services.embedding_models import embedding_model_for_indexing
from kb.services.index_queue import index_requests_in_bulk
from kb.services.sync.inline import documents_index_inline
from kb.services.sync.planning import ImportPlan, import_plan
from kb.services.sync.provenance import (
    document_save_with_provenance,
    provenance_refresh,
    prunable,
    prune_change_reason,
)
from kb.services.sync.report import SyncFailure, SyncRefused, SyncReport
from kb.services.sync.rows import audience_note, document_row, metadata_apply, metadata_differs
from kb.services.sync.sources import Markup, Source, folder_sources

log = structlog.get_logger("groundwork.kb")


def corpus_sync(
    *,
    directory: Path,
    embedder: Embedder,
    actor: Actor,
    overwrite: bool = False,
    allow_prune_all: bool = False,
    progress: Progress | None = None,
    markup: Markup = "auto",
) -> SyncReport:
    """Bring into the index what changed in ``directory`` since its last sync, leaving every
    document someone changed in the database since (see ``provenance``); documents of this
    folder whose file is gone are removed. ``overwrite`` takes the files' versions instead.
    ``markup``: how the folder is written (``sources.folder_markup``; "auto" reads a folder
    with `.obsidian/` as an Obsidian vault)."""
    if not directory.is_dir():
        raise SyncRefused(f"{directory} is not a directory")
    folder = folder_sources(directory, markup=markup)
    report = documents_import(
        sources=folder.sources,
        embedder=embedder,
        origin=str(directory),
        actor=actor,
        folder=folder_key(directory),
        overwrite=overwrite,
        allow_prune_all=allow_prune_all,
        progress=progress,
    )
    report.warnings[:0] = folder.warnings
    return report


def folder_key(directory: Path) -> str:
    """How a synced folder is recorded: relative to the project when it lies inside it (the
    demo's ``corpus/``), so a clone moved elsewhere, database and all, still knows its pages;
    an absolute path otherwise."""
    resolved = directory.resolve()
    try:
        return resolved.relative_to(settings.BASE_DIR.resolve()).as_posix()
    except ValueError:
        return str(resolved)


def documents_import(
    *,
    sources: Sequence[Source],
    embedder: Embedder,
    origin: str,
    actor: Actor,
    folder: str | None = None,
    overwrite: bool = False,
    allow_prune_all: bool = False,
    prune: bool = True,
    index_inline: bool = True,
    all_or_nothing: bool = False,
    progress: Progress | None = None,
) -> SyncReport:
    """Create or update a document per source, skipping unchanged ones.

    With ``folder`` (kb_sync) the sources are that folder's files: only what the folder may
    change is written, and the folder's documents whose file is gone are removed. Without it
    (an upload) the files are the writer's new versions and every one is written. Without
    ``prune`` (a connector's page, one part of its upstream) nothing is removed for its absence.

    With ``index_inline`` the changed documents are chunked and embedded here (kb_sync);
    without it they are only saved, and the save's indexing request does the rest in the
    background (uploads in admin, where a request must not wait on embedding).

    The indexing the saves request is sent to the bulk queue, in batches.

    With ``all_or_nothing`` (an upload) every source is validated first; if any fails, nothing
    is written and the report lists every problem; otherwise all writes are one transaction.
    """
    if all_or_nothing and index_inline:
        raise ValueError("all_or_nothing imports only save; indexing follows in the background")
    # What the saves still ask to index (every model without ``index_inline``, a model being
    # built with it) goes to the bulk queue in batches: an import never delays a writer's edit.
    with (
        index_requests_in_bulk(),
        transaction.atomic() if all_or_nothing else contextlib.nullcontext(),
    ):
        return _documents_import(
            sources=sources,
            embedder=embedder,
            origin=origin,
            actor=actor,
            folder=folder,
            overwrite=overwrite,
            allow_prune_all=allow_prune_all or not prune,
            prune=prune,
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
    folder: str | None,
    overwrite: bool,
    allow_prune_all: bool,
    prune: bool,
    index_inline: bool,
    all_or_nothing: bool,
    progress: Progress | None,
) -> SyncReport:
    started = time.perf_counter()
    report = SyncReport()
    embedding_model = embedding_model_for_indexing(embedder=embedder)
    plan = import_plan(
        sources=sources,
        origin=origin,
        actor=actor,
        folder=folder,
        overwrite=overwrite,
        allow_prune_all=allow_prune_all,
        embedding_model=embedding_model,
        report=report,
    )
    if all_or_nothing and report.failed:
        report.refused = True
        report.seconds = time.perf_counter() - started
        log.info("documents_import_refused", origin=origin, failed=len(report.failed))
        return report
    to_index = _texts_to_write(plan=plan, actor=actor, index_inline=index_inline, report=report)
    if index_inline:
        documents_index_inline(
            to_index=to_index,
            existing=plan.existing,
            provenances=plan.provenances,
            embedder=embedder,
            embedding_model=embedding_model,
            actor=actor,
            report=report,
            progress=progress,
        )
    else:
        _documents_save_for_background(to_index=to_index, plan=plan, actor=actor, report=report)
    _link_successors(plan.parsed, report, actor, synced=folder is not None)
    _audience_warnings_add(plan=plan, report=report)
    if folder is not None and prune:
        _folder_prune(plan=plan, folder=folder, report=report)
    report.seconds = time.perf_counter() - started
    _imported_log(origin=origin, report=report)
    return report


def _texts_to_write(
    *, plan: ImportPlan, actor: Actor, index_inline: bool, report: SyncReport
) -> list[ParsedDocument]:
    """The documents whose text must be written (see ``_needs_write``). Of the others, a change
    to metadata alone is saved here, and an unchanged one is counted (its sync record kept up)."""
    to_index: list[ParsedDocument] = []
    for document in plan.parsed:
        current = plan.existing.get(document.path)
        content_hash = content_hash_of(title=document.title, body=document.body)
        provenance = plan.provenances[document.path]
        if _needs_write(current, content_hash, plan.current_ids, index_inline=index_inline):
            to_index.append(document)
        elif current is not None and metadata_differs(current, document):
            try:
                document_save_with_provenance(
                    row=metadata_apply(current, document),
                    actor=actor,
                    provenance=provenance,
                    updated_on_given=document.updated_on is not None,
                )
            except DocumentPermissionDenied as exc:
                report.failed.append(SyncFailure(document.path, str(exc)))
                continue
            report.updated.append(document.path)
        else:
            if current is not None and provenance.file is not None:
                provenance_refresh(row=current, folder=provenance.folder, file=provenance.file)
            report.unchanged += 1
    return to_index


def _documents_save_for_background(
    *, to_index: list[ParsedDocument], plan: ImportPlan, actor: Actor, report: SyncReport
) -> None:
    """Save each changed document without indexing it: the save's indexing request does that
    in the background."""
    for document in to_index:
        row = document_row(
            document,
            current=plan.existing.get(document.path),
            content_hash=content_hash_of(title=document.title, body=document.body),
        )
        try:
            document_save_with_provenance(
                row=row,
                actor=actor,
                provenance=plan.provenances[document.path],
                updated_on_given=document.updated_on is not None,
            )
        except DocumentPermissionDenied as exc:
            report.failed.append(SyncFailure(document.path, str(exc)))
            continue
        report.queued.append(document.path)
        if document.path not in plan.existing:
            report.created.append(document.path)


def _audience_warnings_add(*, plan: ImportPlan, report: SyncReport) -> None:
    """Warn of each written document whose audience the file changed (see ``audience_note``)."""
    written = {*report.indexed, *report.queued, *report.updated}
    for document in plan.parsed:
        note = audience_note(document, stored=plan.stored_audiences.get(document.path))
        if note is not None and document.path in written:
            report.warnings.append(note)


def _folder_prune(*, plan: ImportPlan, folder: str, report: SyncReport) -> None:
    """Remove the folder's documents whose file is gone and that no one changed since."""
    removed = prunable(
        existing=plan.existing,
        present=plan.present,
        folder=folder,
        missing=plan.missing,
        report=report,
    )
    _rows_remove(paths=removed, folder=folder, report=report)


def synced_documents_remove(*, folder: str, paths: Collection[str], report: SyncReport) -> None:
    """Remove the documents at ``paths``, whose source is gone from ``folder`` (a connector's
    upstream), that a sync from it wrote and no one changed since; one edited since is kept and
    reported as a conflict, and a document of another origin is never touched."""
    existing = {row.path: row for row in Document.objects.filter(path__in=paths).defer("body")}
    removed = prunable(existing=existing, present=set(), folder=folder, missing={}, report=report)
    _rows_remove(paths=removed, folder=folder, report=report)


def _rows_remove(*, paths: list[str], folder: str, report: SyncReport) -> None:
    if not paths:
        return
    with transaction.atomic():
        for row in Document.objects.filter(path__in=paths):
            # The history tells this removal from a person's: the file may come back.
            row._change_reason = prune_change_reason(folder)  # type: ignore[attr-defined]
            row.delete()
    report.removed += paths


def _imported_log(*, origin: str, report: SyncReport) -> None:
    log.info(
        "documents_imported",
        origin=origin,
        indexed=len(report.indexed),
        queued=len(report.queued),
        updated=len(report.updated),
        unchanged=report.unchanged,
        removed=len(report.removed),
        failed=len(report.failed),
        conflicts=len(report.conflicts),
        overwritten=len(report.overwritten),
        chunks=report.chunks,
        seconds=round(report.seconds, 3),
    )


def _needs_write(
    current: Document | None,
    content_hash: str,
    current_ids: set[int],
    *,
    index_inline: bool,
) -> bool:
    """Whether the document's text must be written. Indexing inline, that is until its chunks
    are current (``current_ids``); otherwise saving is the whole job, and an unchanged text is
    already indexed or queued by its earlier save."""
    if current is None or current.content_hash != content_hash:
        return True
    return index_inline and current.pk not in current_ids


def _link_successors(
    parsed: list[ParsedDocument], report: SyncReport, actor: Actor, *, synced: bool
) -> None:
    """Point ``superseded_by`` at successor rows, once every document of this sync exists.
    ``parsed`` holds only what this run may write; a folder sync's rows are marked synced."""
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
                with transaction.atomic():
                    document_save(document=document, actor=actor, synced=synced)
            except DocumentPermissionDenied as exc:
                report.failed.append(SyncFailure(path, str(exc)))
                # The next sync tries again: the file is not recorded as synced.
                Document.objects.filter(path=path).update(synced_file_hash="")
