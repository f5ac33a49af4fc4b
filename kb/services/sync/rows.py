"""The document row a file describes, unsaved: the sync writes it through ``document_save``."""

from __future__ import annotations

from typing import Any

from kb.models import Document
from kb.parsing import DocumentParseError, ParsedDocument

# Everything but the text that a file sets on its row; a change to only these is a
# metadata-only update (no re-embedding). ``metadata`` and ``aliases`` are not in
# ``Document.row_hash``: nobody edits them in admin, so they cannot conflict with an edit.
METADATA_FIELDS = (
    "path",  # the row's own, but for a page moved in admin whose file's version is taken
    "title",
    "category",
    "audience",
    "status",
    "updated_on",
    "review_by",
    "metadata",
    "aliases",
)


def document_limits_check(document: ParsedDocument) -> None:
    """Refuse, as a parse error of its file, a document whose values do not fit its row, before
    anything is written. The limits are the model fields' own, read here and nowhere else: a
    title of 5,000 characters was a DataError (a 500 in admin, a kb_sync stopped for good)."""
    field = Document._meta.get_field
    values: list[tuple[str, Any, str]] = [
        ("path", field("path"), document.path),
        ("title", field("title"), document.title),
        ("category", field("category"), document.category),
        ("superseded_by", field("synced_superseded_by"), document.superseded_by or ""),
    ]
    aliases = field("aliases").base_field  # type: ignore[union-attr]
    values += [("an alias", aliases, alias) for alias in document.aliases]
    for name, model_field, value in values:
        if model_field.max_length is not None and len(value) > model_field.max_length:
            raise DocumentParseError(
                path=document.path,
                message=f"{name} is {len(value):,} characters; "
                f"the limit is {model_field.max_length:,}",
            )


def metadata_differs(current: Document, document: ParsedDocument) -> bool:
    values = _metadata(document, current=current)
    return any(getattr(current, name) != value for name, value in values.items())


def metadata_apply(current: Document, document: ParsedDocument) -> Document:
    """``current`` with ``document``'s metadata, unsaved."""
    for name, value in _metadata(document, current=current).items():
        setattr(current, name, value)
    return current


def document_row(
    document: ParsedDocument, *, current: Document | None, content_hash: str
) -> Document:
    """The row ``document``'s file describes, unsaved; ``current`` is the row the sync read."""
    row = current or Document(path=document.path)
    for name, value in _metadata(document, current=current).items():
        setattr(row, name, value)
    row.body = document.body
    row.content_hash = content_hash
    return row


def audience_note(document: ParsedDocument, *, stored: str | None) -> str | None:
    """What an import or sync says about the audience it wrote over ``stored`` (None for a new
    page): a change, which only a file that states ``audience:`` can make, or an audience kept
    where the file, by saying nothing, would have taken the default."""
    if stored is None:
        return None
    if document.audience_stated and document.audience != stored:
        return f"audience of {document.path}: {stored} → {document.audience}, as the file says"
    if not document.audience_stated and document.audience != stored:
        return (
            f"kept {document.path} {stored}: the file does not say audience:, and a file's "
            "silence never widens who may see a page"
        )
    return None


def _metadata(document: ParsedDocument, *, current: Document | None) -> dict[str, object]:
    values = {name: getattr(document, name) for name in METADATA_FIELDS}
    values["metadata"] = dict(document.metadata)
    values["aliases"] = list(document.aliases)
    if not document.audience_stated and current is not None:
        # A file that does not say who may see the page leaves that as stored: its silence
        # must never widen an internal page to the public (``audience_note`` reports it).
        values["audience"] = current.audience
    if document.updated_on is None and current is not None:
        # A file without ``updated:`` leaves the date to the row: ``document_save`` moves it to
        # today when the text changes, and the next write must not take that back.
        values["updated_on"] = current.updated_on
    return values
