"""Reads about documents: which ones a reader may open, what each saved version changed, the
version of the index as a whole, and how a passage's Markdown lines read."""

from __future__ import annotations

import datetime
import hashlib
import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from django.db import connection, connections, models, router
from django.utils.text import capfirst

from kb.actors import SYSTEM, Actor, actor_has_perm
from kb.chunking.lines import FenceRole, scan_lines
from kb.chunking.structure import atx_heading, is_list_item, is_table_delimiter_row
from kb.models import Category, Document, DocumentIndexState, DocumentQuerySet, EmbeddingModel
from kb.parsing import alias_path

# Who may read internal pages (and the text of retired ones): active staff holding this.
STAFF_READER_PERMISSION = "kb.view_document"
PUBLIC_AUDIENCES: tuple[str, ...] = (Document.Audience.PUBLIC.value,)
ALL_AUDIENCES: tuple[str, ...] = tuple(audience.value for audience in Document.Audience)


def reader_is_staff(user: Actor) -> bool:
    """Active staff holding ``kb.view_document`` (or the system, running a command): the readers
    of what customers are not shown, internal pages and the text of retired ones."""
    if user is SYSTEM:
        return True
    return bool(getattr(user, "is_staff", False) and actor_has_perm(user, STAFF_READER_PERMISSION))


def audiences_for(user: Actor) -> tuple[str, ...]:
    """The audiences whose pages ``user`` may see: in /docs pages, chat answers, debug search
    and evals alike. The one place this is decided; everyone else must not learn internal pages
    exist."""
    return ALL_AUDIENCES if reader_is_staff(user) else PUBLIC_AUDIENCES


def _readable(*, audiences: tuple[str, ...]) -> DocumentQuerySet:
    # Retired pages stay reachable: old links and old answers point at them, and the page says
    # it was retired (customers get the notice, not the text). Drafts are never shown.
    return Document.objects.exclude(status=Document.Status.DRAFT).filter(audience__in=audiences)


def document_for_reader(*, path: str, audiences: tuple[str, ...]) -> Document | None:
    """The document at ``path`` if a reader of ``audiences`` may open it, else None (404)."""
    return _readable(audiences=audiences).filter(path=path).first()


def document_for_alias(*, path: str, audiences: tuple[str, ...]) -> Document | None:
    """The document a reader of ``audiences`` may open that was once at ``path`` (its front
    matter's `aliases`): a GIN lookup; the first by path if two pages claim the address."""
    alias = alias_path(path)
    if not alias:
        return None
    return _readable(audiences=audiences).filter(aliases__contains=[alias]).order_by("path").first()


def document_successor_for_reader(
    *, document: Document, audiences: tuple[str, ...]
) -> Document | None:
    """The page that replaced ``document``, when there is one the reader may open."""
    if document.superseded_by_id is None:
        return None
    return _readable(audiences=audiences).filter(pk=document.superseded_by_id).first()


@dataclass(frozen=True)
class CategoryGroup:
    label: str  # as readers see it: staff's name for the category, else the category as given
    documents: list[Document]


def category_label(category: str, *, labels: dict[str, str]) -> str:
    """What readers see for ``category``: the name staff gave it (``labels``, from
    ``Category``), else the value as written, with a slug's dashes read as spaces
    ("getting-started" → "Getting started"; "FAQ" stays "FAQ"). Never title-cased: that
    would make "API" of nothing and "Api" of "api"."""
    if category in labels:
        return labels[category]
    if category.islower():
        return capfirst(category.replace("-", " ").replace("_", " ")) or category
    return category


def document_category_label(document: Document) -> str:
    """The name readers see for the document's category, "" when it has none."""
    if not document.category:
        return ""
    labels = dict(Category.objects.filter(slug=document.category).values_list("slug", "label"))
    return category_label(document.category, labels=labels)


def documents_by_category(*, audiences: tuple[str, ...]) -> list[CategoryGroup]:
    """Published documents the reader may open, grouped by category, the groups in the order of
    their names; documents without a category last, under "Other"."""
    documents = (
        _readable(audiences=audiences)
        .filter(status=Document.Status.PUBLISHED)
        .only("path", "title", "category", "audience", "updated_on")
        .order_by("title")
    )
    labels = dict(Category.objects.values_list("slug", "label"))
    named: dict[str, list[Document]] = {}
    unnamed: list[Document] = []
    for document in documents:
        if document.category:
            label = category_label(document.category, labels=labels)
            named.setdefault(label, []).append(document)
        else:
            unnamed.append(document)
    groups = [
        CategoryGroup(label, sorted(members, key=lambda document: document.title.casefold()))
        for label, members in sorted(named.items(), key=lambda item: item[0].casefold())
    ]
    return groups + ([CategoryGroup("Other", unnamed)] if unnamed else [])


def document_folders() -> list[str]:
    """The folders documents live in (``policies/``), for an importer choosing where a page goes."""
    folders: set[str] = set()
    for path in Document.objects.values_list("path", flat=True):
        parts = path.split("/")[:-1]
        folders.update("/".join(parts[: depth + 1]) + "/" for depth in range(len(parts)))
    return sorted(folders)


# --- Edit history: what one saved version changed ----------------------------------------------


def index_version() -> str:
    """A digest of everything that decides what retrieval may return; equal digests, equal
    answers. It changes when a document is saved (edit, retire, restore, supersede, audience:
    ``modified_at``) or deleted (the count), when chunks are rewritten or an index state moves
    (``DocumentIndexState.updated_at`` and its count), or when another embedding model is
    activated. (A raw ``QuerySet.update()`` on documents bypasses ``modified_at``; every service
    path saves the row.)

    The answer cache reads it on every first question: one statement of scalar subqueries, so
    one round trip instead of three."""
    quote = connection.ops.quote_name
    documents = quote(Document._meta.db_table)
    states = quote(DocumentIndexState._meta.db_table)
    models = quote(EmbeddingModel._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT (SELECT count(*) FROM {documents}), (SELECT max(modified_at) FROM {documents}),
                   (SELECT count(*) FROM {states}), (SELECT max(updated_at) FROM {states}),
                   (SELECT array_agg(ARRAY[id::text, activated_at::text] ORDER BY id)
                      FROM {models} WHERE state = %s)
            """,
            [EmbeddingModel.State.ACTIVE],
        )
        row = cursor.fetchone()
    return hashlib.sha256(repr(row).encode()).hexdigest()[:24]


_QUOTE_MARKERS = re.compile(r"^\s*(?:>\s?)+")


@dataclass(frozen=True)
class PassageLine:
    """One line of a chunk's text as the chunker read it, for code that quotes passages: fences,
    headings, list items and table delimiters are recognised by the chunker's own rules, so a
    quote never disagrees with the chunk it came from about what is code or a heading."""

    text: str  # as written, HTML comments (outside code) removed
    content: str  # without blockquote markers or surrounding blanks
    in_code: bool  # a fence line or inside a fenced block
    fence: FenceRole = FenceRole.NONE  # which: the opening line, the code, the closing line

    @property
    def is_heading(self) -> bool:
        return atx_heading(self.content) is not None

    @property
    def is_list_item(self) -> bool:
        return is_list_item(self.content)

    @property
    def is_table_delimiter(self) -> bool:
        return is_table_delimiter_row(self.content)


def passage_lines(text: str) -> list[PassageLine]:
    """The lines of a passage (a chunk's text), each with what kind of line it is."""
    return [
        PassageLine(
            text=line.text,
            content=_QUOTE_MARKERS.sub("", line.text).strip(),
            in_code=line.fence is not FenceRole.NONE,
            fence=line.fence,
        )
        for line in scan_lines(text)
    ]


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


def document_paths_present(paths: set[str]) -> set[str]:
    """Which of ``paths`` are documents (any status: a link to a page a reader may not see still
    names it, and the page answers 404 for them). One query, the array as one parameter, so a
    page of 30,000 links asks once."""
    if not paths:
        return set()
    with connections[router.db_for_read(Document)].cursor() as cursor:
        cursor.execute(
            "SELECT path FROM kb_document WHERE path = ANY(%(paths)s)", {"paths": list(paths)}
        )
        return {path for (path,) in cursor.fetchall()}


def document_paths_version() -> str:
    """Changes whenever a document is added, deleted or saved (a move included): what links
    between pages resolve to is fixed while it stays the same. Deletions lower the count and
    every save raises the latest ``modified_at``, so no sequence of changes returns to an
    earlier value."""
    with connections[router.db_for_read(Document)].cursor() as cursor:
        cursor.execute("SELECT count(*), max(modified_at) FROM kb_document")
        count, latest = cursor.fetchone()
    return f"{count}:{latest.isoformat() if latest else ''}"
