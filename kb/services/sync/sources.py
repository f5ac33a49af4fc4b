"""Where a sync's files come from: a directory walked for Markdown (and HTML articles, which
the parser converts to Markdown), or an upload's entries."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from kb.parsing import (
    DOCUMENT_SUFFIXES,
    DocumentParseError,
    ParsedDocument,
    parse_document,
    parse_warnings,
    source_byte_limit,
)
from kb.services.sync.provenance import SyncedFile, synced_file_of
from kb.services.sync.report import SyncFailure, SyncReport
from kb.services.sync.rows import document_limits_check

# A source file: its document path, and a reader returning at most one byte past the path's
# limit (``source_byte_limit``: MAX_DOCUMENT_BYTES, or MAX_HTML_BYTES for an HTML page).
Source = tuple[str, Callable[[], bytes]]


def directory_sources(directory: Path) -> list[Source]:
    """The Markdown and HTML files under ``directory``, sorted, each read only when the sync
    gets to it. A file whose real path lies outside ``directory`` (a link to ``/etc/passwd``)
    is refused when read, by name, instead of being published."""
    root = directory.resolve()
    return [
        (relative_path, functools.partial(_read_inside, root, relative_path, file_path))
        for relative_path, file_path in _markdown_files(directory)
    ]


def outside_folder(*, file_path: Path, root: Path) -> bool:
    """Whether ``file_path``, links followed, is not under the folder ``root`` (resolved):
    the rule for every file a folder sync reads (pages and ``categories.json``)."""
    return not file_path.resolve().is_relative_to(root.resolve())


def sources_parse(
    sources: Sequence[Source], *, origin: str, report: SyncReport
) -> tuple[set[str], list[ParsedDocument], dict[str, SyncedFile]]:
    """Every path named, the documents that parsed and what a sync records of their files;
    each file that did not parse is reported."""
    present: set[str] = set()
    parsed: list[ParsedDocument] = []
    files: dict[str, SyncedFile] = {}
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
            raw = read()
            document = parse_document(path=relative_path, raw=raw)
            document_limits_check(document)
        except DocumentParseError as exc:
            report.failed.append(SyncFailure(relative_path, str(exc)))
        except OSError as exc:
            report.failed.append(SyncFailure(relative_path, f"{relative_path}: cannot read: {exc}"))
        else:
            parsed.append(document)
            files[relative_path] = synced_file_of(document, raw)
    report.warnings += parse_warnings(parsed)
    return present, parsed, files


def _markdown_files(directory: Path) -> Iterator[tuple[str, Path]]:
    """Markdown and HTML files under ``directory``, sorted, skipping hidden files and folders."""
    for file_path in sorted(directory.rglob("*")):
        relative = file_path.relative_to(directory)
        if any(part.startswith(".") for part in relative.parts):
            continue
        if file_path.suffix.lower() in DOCUMENT_SUFFIXES and file_path.is_file():
            yield relative.as_posix(), file_path


def _read_inside(root: Path, relative_path: str, file_path: Path) -> bytes:
    # Checked as it is read, not as the folder is listed, and what is opened is the resolved
    # path that was checked. A folder component swapped for a link between the two calls is
    # not caught: a narrow race, left open (docs/reliability.md, issue 26 row 1).
    real = file_path.resolve()
    if outside_folder(file_path=real, root=root):
        raise DocumentParseError(
            path=relative_path,
            message=f"a link to a file outside the folder ({real}): refused, since a sync "
            "publishes only what the folder holds (copy the file in if it belongs there)",
        )
    # Read one byte past the limit so the parser reports the size without us loading a huge file.
    with real.open("rb") as handle:
        return handle.read(source_byte_limit(relative_path) + 1)
