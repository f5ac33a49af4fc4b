"""Edit history: what one saved version of a document changed, what a stale edit would change
against the page as saved since, and a field's stored value as a person reads it."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from django.db import models
from django.utils.text import capfirst

from kb.models import Document

DIFF_CONTEXT_LINES = 3
# Not worth showing as field changes: the body has its own line diff, the rest is bookkeeping.
_NOT_COMPARED = ("body", "created_at")


@dataclass(frozen=True)
class FieldChange:
    label: str
    old: str
    new: str


@dataclass(frozen=True)
class DiffLine:
    kind: str  # "hunk", "context", "removed" or "added"
    text: str
    old_number: int | None = None
    new_number: int | None = None


@dataclass(frozen=True)
class VersionDiff:
    version: Any  # the HistoricalDocument row being looked at
    previous: Any | None  # the version before it, None for the first one
    field_changes: list[FieldChange]
    body_lines: list[DiffLine]  # a unified diff of the body, empty when it did not change
    added: int  # body lines added and removed
    removed: int


def document_version_diff(*, document_id: int, history_id: int) -> VersionDiff | None:
    """What version ``history_id`` of a document changed against the version before it;
    the first version compares against an empty document. None if there is no such version."""
    version = Document.history.filter(id=document_id, history_id=history_id).first()
    if version is None:
        return None
    previous = version.prev_record
    if previous is None:
        values = {name: getattr(version, _attname(name)) for name in _compared_fields()}
        field_changes = [
            FieldChange(label=_label(name), old="", new=document_field_shown(name, value))
            for name, value in values.items()
            if value not in (None, "")
        ]
        old_body = ""
    else:
        delta = version.diff_against(previous, excluded_fields=_NOT_COMPARED)
        field_changes = [
            FieldChange(
                label=_label(change.field),
                old=document_field_shown(change.field, change.old),
                new=document_field_shown(change.field, change.new),
            )
            for change in delta.changes
        ]
        old_body = previous.body
    body_lines = line_diff(old_body, version.body)
    return VersionDiff(
        version=version,
        previous=previous,
        field_changes=field_changes,
        body_lines=body_lines,
        added=sum(line.kind == "added" for line in body_lines),
        removed=sum(line.kind == "removed" for line in body_lines),
    )


@dataclass(frozen=True)
class EditConflict:
    """A stale edit beside the page as saved since: what the editor would have changed."""

    saved: Document  # the page as stored now, with the other person's save
    field_changes: list[FieldChange]  # old: as saved, new: as in the stale form
    body_lines: list[DiffLine]  # the body from the saved version to the form's


def document_edit_conflict(*, saved: Document, edited: dict[str, Any]) -> EditConflict:
    """Compare the page as saved with the values of an edit made on an older version of it
    (a form's cleaned data, by field name), so the editor sees both and loses neither."""
    field_changes = []
    for name in _compared_fields():
        if name not in edited:
            continue
        theirs, yours = getattr(saved, _attname(name)), edited[name]
        if isinstance(yours, Document):  # a form gives the successor as a page
            yours = yours.pk
        if (theirs or None) != (yours or None):
            field_changes.append(
                FieldChange(
                    label=_label(name),
                    old=document_field_shown(name, theirs),
                    new=document_field_shown(name, yours),
                )
            )
    body = edited.get("body", saved.body)
    return EditConflict(
        saved=saved, field_changes=field_changes, body_lines=line_diff(saved.body, body)
    )


def line_diff(old: str, new: str, *, context: int = DIFF_CONTEXT_LINES) -> list[DiffLine]:
    """A unified diff of two texts by line, with line numbers, as data for a template (which
    escapes it: a body is Markdown typed by people and may hold any HTML)."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    # autojunk off: in a long policy a blank or "---" line is frequent but still a real line.
    matcher = SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    lines: list[DiffLine] = []
    for group in matcher.get_grouped_opcodes(context):
        old_start, new_start = group[0][1], group[0][3]
        old_count, new_count = group[-1][2] - old_start, group[-1][4] - new_start
        hunk = f"@@ -{old_start + 1},{old_count} +{new_start + 1},{new_count} @@"
        lines.append(DiffLine(kind="hunk", text=hunk))
        for tag, old_from, old_to, new_from, new_to in group:
            if tag == "equal":
                lines.extend(
                    DiffLine("context", old_lines[i], i + 1, new_from + i - old_from + 1)
                    for i in range(old_from, old_to)
                )
                continue
            lines.extend(
                DiffLine("removed", old_lines[i], old_number=i + 1) for i in range(old_from, old_to)
            )
            lines.extend(
                DiffLine("added", new_lines[i], new_number=i + 1) for i in range(new_from, new_to)
            )
    return lines


def _compared_fields() -> list[str]:
    tracked = {field.name for field in Document.history.model._meta.fields}
    return [
        field.name
        for field in Document._meta.concrete_fields
        if field.name in tracked and field.name not in {*_NOT_COMPARED, "id"}
    ]


def _field(name: str) -> models.Field[Any, Any]:
    """One of the document's own columns: every name compared is (see ``_compared_fields``)."""
    field = Document._meta.get_field(name)
    if not isinstance(field, models.Field):
        raise LookupError(f"Document.{name} is a relation, not a column")
    return field


def _attname(name: str) -> str:
    return _field(name).attname  # superseded_by_id: the id, not a query


def _label(name: str) -> str:
    return str(capfirst(_field(name).verbose_name))


def document_field_shown(name: str, value: Any) -> str:
    """A document field's stored value as a person reads it, on the version comparison and the
    history list alike: choice labels, dates, the path of a linked page (also once deleted)."""
    if value is None or value == "":
        return "—"
    field = _field(name)
    if field.choices:
        return str(dict(field.flatchoices).get(value, value))
    if name == "superseded_by":
        return _document_named(value)
    if isinstance(value, datetime.date):
        return value.isoformat()
    return str(value)


def _document_named(document_id: Any) -> str:
    """A linked page by its path; a deleted one by the path its history last recorded."""
    path = Document.objects.filter(pk=document_id).values_list("path", flat=True).first()
    if path is not None:
        return path
    last_path = (
        Document.history.filter(id=document_id)
        .order_by("-history_date")
        .values_list("path", flat=True)
        .first()
    )
    return f"{last_path} (deleted)" if last_path else f"(deleted document #{document_id})"
