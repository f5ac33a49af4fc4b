"""Where each document came from, and what a folder sync may change: the database is the source
of truth, a folder only proposes.

A folder sync records, on each row it writes, the folder, the hash of the file it read, the
status and successor that file named, and ``Document.row_hash()`` as it left the row. On the next
sync from that folder a document is changed only if its file changed since (another file hash)
and its row did not (the same row hash); otherwise it is reported as a conflict, naming who
changed it last and when, and left alone, unless the run was asked to ``overwrite``. Even then,
status and successor come from the file only where the file itself changed them since the last
sync, so a sync never un-retires or retires a page a steward decided on. A page someone moved
to another path or deleted since a sync from the folder wrote it is a conflict too: its file is
not synced back (with ``overwrite``: it is, to its own path).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from typing import Any

from django.db import transaction

from kb.actors import Actor
from kb.models import Document, content_hash_of
from kb.parsing import ParsedDocument
from kb.services.documents import document_save
from kb.services.sync.report import SyncConflict, SyncReport
from kb.services.sync.rows import metadata_differs


@dataclass(frozen=True)
class SyncedFile:
    """One file as this sync read it: what its row records once the sync has written it."""

    file_hash: str  # sha256 of the file's bytes
    status: str
    superseded_by: str | None


@dataclass(frozen=True)
class Provenance:
    """How a write of the sync marks its row: ``folder`` and ``file`` for a folder sync; an
    import only names the origin of the rows it creates."""

    origin: str
    folder: str = ""
    file: SyncedFile | None = None


def file_hash_of(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def synced_file_of(document: ParsedDocument, raw: bytes) -> SyncedFile:
    return SyncedFile(
        file_hash=file_hash_of(raw), status=document.status, superseded_by=document.superseded_by
    )


@dataclass(frozen=True)
class MissingPage:
    """A file whose page a sync from this folder wrote at the file's path and someone has since
    moved (``moved``: the row, now at another path) or deleted (``moved`` is None)."""

    conflict: SyncConflict
    moved: Document | None


def sync_change_reason(folder: str) -> str:
    """What the history says of a folder sync's write, instead of a user."""
    return f"folder sync from {folder}"[:100]


def prune_change_reason(folder: str) -> str:
    """What the history says of a page a folder sync removed because its file was gone."""
    return f"file gone from {folder}"[:100]


def document_save_with_provenance(
    *, row: Document, actor: Actor, provenance: Provenance | None, updated_on_given: bool
) -> None:
    """``document_save`` for a sync or an import, recording where the row came from; a folder
    sync's write marks the row as synced, in the same write. Saving enqueues
    the row's indexing, as ``document_save`` says (inside ``index_requests_in_bulk``, which
    every import opens, to the bulk queue)."""
    synced = provenance is not None and provenance.file is not None
    with transaction.atomic():
        if provenance is not None and provenance.file is not None:
            _provenance_set(row, provenance.folder, provenance.file)
            # What the history says instead of a user: the sync acts as the system.
            row._change_reason = sync_change_reason(provenance.folder)  # type: ignore[attr-defined]
        elif provenance is not None and row.pk is None:
            row.origin = provenance.origin
        document_save(document=row, actor=actor, updated_on_given=updated_on_given, synced=synced)


def row_untouched(row: Document) -> bool:
    """Whether no one changed the row since the last folder sync wrote it."""
    return bool(row.synced_row_hash) and row.synced_row_hash == row.row_hash()


def from_folder(row: Document, folder: str) -> bool:
    return row.origin == Document.Origin.FOLDER and row.sync_folder == folder


def pages_missing(
    *, paths: set[str], existing: dict[str, Document], folder: str
) -> dict[str, MissingPage]:
    """Of ``paths`` (files with no page at their path), those whose page a sync from ``folder``
    wrote and a person then moved or deleted, read from the history in at most three queries,
    however many pages are gone (a first sync after emptying the index asks for every file)."""
    if not paths:
        return {}
    by_id = {row.pk: row for row in existing.values()}
    latest_at_path = list(
        Document.history.filter(path__in=paths)
        .order_by("path", "-history_date", "-history_id")
        .distinct("path")
    )
    gone = {record.id for record in latest_at_path if record.id not in by_id}
    synced = set(
        Document.history.filter(id__in=gone, history_change_reason=sync_change_reason(folder))
        .values_list("id", flat=True)
        .distinct()
    )
    latest_deletion = {
        record.id: record
        for record in Document.history.filter(id__in=synced, history_type="-")
        .select_related("history_user")
        .order_by("id", "-history_date", "-history_id")
        .distinct("id")
    }
    missing = {}
    for record in latest_at_path:
        row = by_id.get(record.id)
        if row is not None:
            if from_folder(row, folder):
                reason = f"moved in the database to {row.path} since the last sync from {folder}"
                missing[record.path] = MissingPage(_conflict(row, reason, path=record.path), row)
            continue
        if record.id not in synced:
            continue  # never synced from this folder: the file is a new page
        deletion = latest_deletion.get(record.id)
        if deletion is None or _pruned(deletion, folder):
            continue  # removed by a sync because its file was gone: the file is back
        reason = f"deleted in the database since the last sync from {folder}"
        missing[record.path] = MissingPage(
            SyncConflict(record.path, reason, _changed_by(deletion), deletion.history_date), None
        )
    return missing


def folder_plan(
    *,
    parsed: list[ParsedDocument],
    existing: dict[str, Document],
    files: dict[str, SyncedFile],
    missing: dict[str, MissingPage],
    folder: str,
    overwrite: bool,
    current_ids: set[int],
    report: SyncReport,
) -> list[ParsedDocument]:
    """The documents a sync from ``folder`` may write, each with the status and successor it may
    set. Every other file is counted unchanged, or reported as a conflict and left alone (with
    ``overwrite``: reported as overwritten and written). A moved page that is overwritten moves
    back: it is then in ``existing`` at its file's path too."""
    plan: list[ParsedDocument] = []
    for document in parsed:
        current = existing.get(document.path)
        file = files[document.path]
        if current is None and document.path in missing:
            gone = missing[document.path]
            taken = _missing_page_plan(
                document, gone, existing=existing, overwrite=overwrite, report=report
            )
        elif current is None:
            taken = document
        else:
            taken = _existing_page_plan(
                document,
                current,
                file=file,
                folder=folder,
                overwrite=overwrite,
                current_ids=current_ids,
                report=report,
            )
        if taken is not None:
            plan.append(taken)
    return plan


def _missing_page_plan(
    document: ParsedDocument,
    gone: MissingPage,
    *,
    existing: dict[str, Document],
    overwrite: bool,
    report: SyncReport,
) -> ParsedDocument | None:
    """A file whose page was moved or deleted in the database: a conflict, or with
    ``overwrite`` the file written back (a moved row returns to the file's path)."""
    if not overwrite:
        report.conflicts.append(gone.conflict)
        return None
    if gone.moved is None:
        report.overwritten.append(replace(gone.conflict, replaced=("deletion",)))
        return document
    existing[document.path] = gone.moved
    taken = _lifecycle(document, gone.moved)
    report.overwritten.append(_replacing(gone.conflict, gone.moved, taken))
    return taken


def _existing_page_plan(
    document: ParsedDocument,
    current: Document,
    *,
    file: SyncedFile,
    folder: str,
    overwrite: bool,
    current_ids: set[int],
    report: SyncReport,
) -> ParsedDocument | None:
    """A file whose page exists: nothing to write when the two agree, the file when only it
    changed, and a conflict (written only with ``overwrite``) when the row changed too."""
    if not from_folder(current, folder):
        if _matches(current, document):
            if current.origin == Document.Origin.UNKNOWN:
                # Synced before provenance was recorded, and still as the file says.
                _adopt(current, folder, file)
            report.unchanged += 1
            return None
        conflict = _conflict(current, _not_from_folder(current, folder))
    elif current.synced_file_hash == file.file_hash:
        if current.pk not in current_ids and row_untouched(current):
            # Not indexed in this model yet: index the row as the last sync left it.
            return replace(_lifecycle(document, current), updated_on=current.updated_on)
        report.unchanged += 1
        return None
    elif row_untouched(current):
        return _lifecycle(document, current)
    elif _matches(current, document):
        # Changed on both sides, to the same thing: nothing is in conflict.
        _adopt(current, folder, file)
        report.unchanged += 1
        return None
    else:
        conflict = _conflict(current, f"changed in the database since the last sync from {folder}")
    if overwrite:
        taken = _lifecycle(document, current)
        report.overwritten.append(_replacing(conflict, current, taken))
        return taken
    report.conflicts.append(conflict)
    return None


def prunable(
    *,
    existing: dict[str, Document],
    present: set[str],
    folder: str,
    missing: dict[str, MissingPage],
    report: SyncReport,
) -> list[str]:
    """Documents whose file is gone from ``folder`` and that no one changed since the sync wrote
    them; one edited since is kept and reported (a moved one was reported by its file).
    Documents of other origins are never pruned."""
    moved = {gone.moved.pk for gone in missing.values() if gone.moved is not None}
    removed = []
    for path, row in sorted(existing.items()):
        if path in present or not from_folder(row, folder) or row.pk in moved:
            continue
        if row_untouched(row):
            removed.append(path)
        else:
            report.conflicts.append(
                _conflict(row, f"its file is gone from {folder}, but it was changed since; kept")
            )
    return removed


def provenance_refresh(*, row: Document, folder: str, file: SyncedFile) -> None:
    """Record a file that changed only in ways the row already shows (or did not change):
    the row is not saved again, only marked as synced from this file."""
    _adopt(row, folder, file)


def _provenance_set(row: Document, folder: str, file: SyncedFile) -> None:
    row.origin = Document.Origin.FOLDER
    row.sync_folder = folder
    row.synced_file_hash = file.file_hash
    row.synced_status = file.status
    row.synced_superseded_by = file.superseded_by or ""


def _adopt(row: Document, folder: str, file: SyncedFile) -> None:
    _provenance_set(row, folder, file)
    row.synced_row_hash = row.row_hash()
    Document.objects.filter(pk=row.pk).update(
        origin=row.origin,
        sync_folder=row.sync_folder,
        synced_file_hash=row.synced_file_hash,
        synced_status=row.synced_status,
        synced_superseded_by=row.synced_superseded_by,
        synced_row_hash=row.synced_row_hash,
    )


def _successor_path(row: Document) -> str | None:
    return row.superseded_by.path if row.superseded_by is not None else None


def _matches(row: Document, document: ParsedDocument) -> bool:
    """Whether the row already says everything the file says."""
    return (
        row.content_hash == content_hash_of(title=document.title, body=document.body)
        and not metadata_differs(row, document)
        and _successor_path(row) == document.superseded_by
    )


def _lifecycle(document: ParsedDocument, row: Document) -> ParsedDocument:
    """The file's document, with the row's status and successor unless the file changed them
    since the last sync: whether a page is current is a steward's decision in the database."""
    status = document.status if document.status != row.synced_status else row.status
    if (document.superseded_by or "") != row.synced_superseded_by:
        successor = document.superseded_by
    else:
        successor = _successor_path(row)
    return replace(document, status=status, superseded_by=successor)


def _replacing(conflict: SyncConflict, row: Document, document: ParsedDocument) -> SyncConflict:
    """``conflict`` naming what of ``row`` writing ``document`` over it replaces."""
    replaced = [name for name in ("path", "title") if getattr(row, name) != getattr(document, name)]
    if row.content_hash != content_hash_of(title=row.title, body=document.body):
        replaced.append("body")
    for name in ("category", "audience", "status", "review_by"):
        if name == "audience" and not document.audience_stated:
            continue  # a file that does not say it keeps the row's (``rows._metadata``)
        if getattr(row, name) != getattr(document, name):
            replaced.append(name)
    if document.updated_on is not None and row.updated_on != document.updated_on:
        replaced.append("updated_on")
    if _successor_path(row) != document.superseded_by:
        replaced.append("superseded_by")
    return replace(conflict, replaced=tuple(replaced))


def _not_from_folder(row: Document, folder: str) -> str:
    if row.origin == Document.Origin.FOLDER:
        return f"synced from {row.sync_folder}, not from {folder}, and differs from the file"
    if row.origin == Document.Origin.UNKNOWN:
        return "in the database from before sync provenance was recorded, and differs from the file"
    origin = "imported" if row.origin == Document.Origin.IMPORT else "created in admin"
    return f"{origin}, not from {folder}, and differs from the file"


def _conflict(row: Document, reason: str, *, path: str | None = None) -> SyncConflict:
    """``row``'s conflict (reported at ``path``, its own by default), naming the last change in
    its history: who, or what, and when."""
    record = (
        Document.history.filter(id=row.pk)
        .select_related("history_user")
        .order_by("-history_date", "-history_id")
        .first()
    )
    if record is None:
        return SyncConflict(path or row.path, reason, "unknown", row.modified_at)
    return SyncConflict(path or row.path, reason, _changed_by(record), record.history_date)


def _pruned(deletion: Any, folder: str) -> bool:
    """Whether a deletion in the history is a sync's pruning: said so, or (from before the
    reason was recorded) made by no user for no stated reason."""
    reason = deletion.history_change_reason
    if reason is None and deletion.history_user_id is None:
        return True
    return bool(reason == prune_change_reason(folder))


def _changed_by(record: Any) -> str:
    """Who made a history record (simple_history's, untyped): a username, or what it says
    instead."""
    user = record.history_user
    changed_by = user.get_username() if user is not None else record.history_change_reason
    return str(changed_by or "unknown")
