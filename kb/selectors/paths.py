"""Document paths as a whole: the folders they make, which of some paths exist, and a version that
changes whenever what a path resolves to may have."""

from __future__ import annotations

from django.db import connections, router

from kb.models import Document


def document_folders() -> list[str]:
    """The folders documents live in (``policies/``), for an importer choosing where a page goes."""
    folders: set[str] = set()
    for path in Document.objects.values_list("path", flat=True):
        parts = path.split("/")[:-1]
        folders.update("/".join(parts[: depth + 1]) + "/" for depth in range(len(parts)))
    return sorted(folders)


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
