"""The document row a file describes, unsaved: the sync writes it through ``document_save``."""

from __future__ import annotations

from kb.models import Document
from kb.parsing import ParsedDocument

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


def _metadata(document: ParsedDocument, *, current: Document | None) -> dict[str, object]:
    values = {name: getattr(document, name) for name in METADATA_FIELDS}
    values["metadata"] = dict(document.metadata)
    values["aliases"] = list(document.aliases)
    if document.updated_on is None and current is not None:
        # A file without ``updated:`` leaves the date to the row: ``document_save`` moves it to
        # today when the text changes, and the next write must not take that back.
        values["updated_on"] = current.updated_on
    return values
