"""Where each document came from, and what a folder sync may change: the database is the source
of truth, a folder only proposes.

A folder sync records, on each row it writes, the folder, the hash of the file it read, the
status and successor that file named, and ``Document.row_hash()`` as it left the row. On the next
sync from that folder a document is changed only if its file changed since (another file hash)
and its row did not (the same row hash); otherwise it is reported as a conflict, naming who
changed it last and when, and left alone, unless the run was asked to ``overwrite``. Even then,
status and successor come from the file only where the file itself changed them since the last
sync, so a sync never un-retires or retires a page a steward decided on.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

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


def document_save_with_provenance(
    *, row: Document, actor: Actor, provenance: Provenance | None, updated_on_given: bool
) -> None:
    """``document_save`` for a sync or an import, recording where the row came from; after a
    folder sync's write the row is marked as synced, in the same transaction."""
    with transaction.atomic():
        if provenance is not None and provenance.file is not None:
            _provenance_set(row, provenance.folder, provenance.file)
            # What the history says instead of a user: the sync acts as the system.
            row._change_reason = f"folder sync from {provenance.folder}"[:100]  # type: ignore[attr-defined]
        elif provenance is not None and row.pk is None:
            row.origin = provenance.origin
        document_save(document=row, actor=actor, updated_on_given=updated_on_given)
        if provenance is not None and provenance.file is not None:
            row_mark_synced(row)


def row_mark_synced(row: Document) -> None:
    """Record the row as this sync leaves it: an edit by anyone after this changes its hash."""
    row.synced_row_hash = row.row_hash()
    Document.objects.filter(pk=row.pk).update(synced_row_hash=row.synced_row_hash)


def row_untouched(row: Document) -> bool:
    """Whether no one changed the row since the last folder sync wrote it."""
    return bool(row.synced_row_hash) and row.synced_row_hash == row.row_hash()


def from_folder(row: Document, folder: str) -> bool:
    return row.origin == Document.Origin.FOLDER and row.sync_folder == folder


def folder_plan(
    *,
    parsed: list[ParsedDocument],
    existing: dict[str, Document],
    files: dict[str, SyncedFile],
    folder: str,
    overwrite: bool,
    current_ids: set[int],
    report: SyncReport,
) -> list[ParsedDocument]:
    """The documents a sync from ``folder`` may write, each with the status and successor it may
    set. Every other file is counted unchanged, or reported as a conflict and left alone (with
    ``overwrite``: reported as overwritten and written)."""
    plan: list[ParsedDocument] = []
    for document in parsed:
        current = existing.get(document.path)
        file = files[document.path]
        if current is None:
            plan.append(document)
            continue
        if not from_folder(current, folder):
            if _matches(current, document):
                if current.origin == Document.Origin.UNKNOWN:
                    # Synced before provenance was recorded, and still as the file says.
                    _adopt(current, folder, file)
                report.unchanged += 1
                continue
            conflict = _conflict(current, _not_from_folder(current, folder))
        elif current.synced_file_hash == file.file_hash:
            if current.pk not in current_ids and row_untouched(current):
                # Not indexed in this model yet: index the row as the last sync left it.
                plan.append(replace(_lifecycle(document, current), updated_on=current.updated_on))
            else:
                report.unchanged += 1
            continue
        elif row_untouched(current):
            plan.append(_lifecycle(document, current))
            continue
        elif _matches(current, document):
            # Changed on both sides, to the same thing: nothing is in conflict.
            _adopt(current, folder, file)
            report.unchanged += 1
            continue
        else:
            conflict = _conflict(
                current, f"changed in the database since the last sync from {folder}"
            )
        if overwrite:
            report.overwritten.append(conflict)
            plan.append(_lifecycle(document, current))
        else:
            report.conflicts.append(conflict)
    return plan


def prunable(
    *, existing: dict[str, Document], present: set[str], folder: str, report: SyncReport
) -> list[str]:
    """Documents whose file is gone from ``folder`` and that no one changed since the sync wrote
    them; one edited since is kept and reported. Documents of other origins are never pruned."""
    removed = []
    for path, row in sorted(existing.items()):
        if path in present or not from_folder(row, folder):
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


def _not_from_folder(row: Document, folder: str) -> str:
    if row.origin == Document.Origin.FOLDER:
        return f"synced from {row.sync_folder}, not from {folder}, and differs from the file"
    if row.origin == Document.Origin.UNKNOWN:
        return "in the database from before sync provenance was recorded, and differs from the file"
    origin = "imported" if row.origin == Document.Origin.IMPORT else "created in admin"
    return f"{origin}, not from {folder}, and differs from the file"


def _conflict(row: Document, reason: str) -> SyncConflict:
    """``row``'s conflict, naming the last change in its history: who, or what, and when."""
    record = (
        Document.history.filter(id=row.pk)
        .select_related("history_user")
        .order_by("-history_date", "-history_id")
        .first()
    )
    if record is None:
        return SyncConflict(row.path, reason, "unknown", row.modified_at)
    user = record.history_user
    changed_by = user.get_username() if user is not None else record.history_change_reason
    return SyncConflict(row.path, reason, changed_by or "unknown", record.history_date)
