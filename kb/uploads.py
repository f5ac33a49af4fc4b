"""Uploads in admin: one Markdown or HTML page, or a .zip of them, read into import sources.
(A reStructuredText page needs its whole folder, for labels and includes: `kb_sync` reads it.)

A zip is untrusted input: entry count, sizes and total expansion are capped before anything is
read (zip bombs), and entry names become document paths only through ``parse_document``'s path
checks (no absolute paths, no ``..``), so nothing can escape the corpus namespace.
"""

from __future__ import annotations

import io
import stat
import zipfile
from collections.abc import Callable

from kb.parsing import (
    HTML_SUFFIXES,
    MARKDOWN_SUFFIXES,
    DocumentParseError,
    source_byte_limit,
)
from kb.services.sync import Source

MAX_UPLOAD_BYTES = 20_000_000
MAX_ZIP_ENTRIES = 2_000
MAX_ZIP_EXPANDED_BYTES = 100_000_000
# What an upload may hold: pages that read alone (an HTML article converts to Markdown).
PAGE_SUFFIXES = (*MARKDOWN_SUFFIXES, *HTML_SUFFIXES)


class UploadRejected(ValueError):
    """The upload as a whole cannot be read; nothing was imported."""


class UploadTargetRejected(UploadRejected):
    """The folder or path the upload should go to is missing or does not fit the upload."""


# What a writer types for "the top level", since an empty target means "not said".
TOP_LEVEL = ("/", ".")


def upload_sources(*, filename: str, data: bytes, target: str = "") -> list[Source]:
    """The documents in one upload, each under the path it will have.

    ``target`` is where the upload goes: a folder (``policies/``; ``/`` for the top level) or,
    for a single page, its whole path (``policies/parking.md``). A single file needs
    one, since its name alone would put it at the top level; a zip's own folders are kept under
    the folder, if one is given."""
    name = filename.replace("\\", "/").rsplit("/", 1)[-1]
    if len(data) > MAX_UPLOAD_BYTES:
        raise UploadRejected(f"{name} is {len(data):,} bytes; the limit is {MAX_UPLOAD_BYTES:,}")
    target = target.strip().replace("\\", "/")
    names_a_file = target.lower().endswith(PAGE_SUFFIXES)
    folder = "" if target in TOP_LEVEL or names_a_file else target.strip("/")
    if name.lower().endswith(PAGE_SUFFIXES):
        if not target:
            raise UploadTargetRejected(
                f"say where {name} goes: a folder such as policies/ (or / for the top level), "
                f"or a path such as policies/{name}"
            )
        path = target.lstrip("/") if names_a_file else _joined(folder, name)
        return [(path, lambda: data[: source_byte_limit(path) + 1])]
    if name.lower().endswith(".zip"):
        if names_a_file:
            raise UploadTargetRejected(
                f"{name} holds several pages: give a folder for them, not the path of one page"
            )
        return [(_joined(folder, path), read) for path, read in _zip_sources(name, data)]
    raise UploadRejected(
        f"{name}: upload a Markdown file (.md), an HTML page (.html) or a .zip of them"
    )


def _joined(folder: str, path: str) -> str:
    return f"{folder}/{path}" if folder else path


def _zip_sources(name: str, data: bytes) -> list[Source]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        entries = archive.infolist()
    except (zipfile.BadZipFile, OSError) as exc:
        raise UploadRejected(f"{name} is not a readable zip file ({exc})") from exc
    if len(entries) > MAX_ZIP_ENTRIES:
        raise UploadRejected(f"{name} has {len(entries)} entries; the limit is {MAX_ZIP_ENTRIES}")
    if sum(entry.file_size for entry in entries) > MAX_ZIP_EXPANDED_BYTES:
        raise UploadRejected(f"{name} expands past {MAX_ZIP_EXPANDED_BYTES:,} bytes")
    sources: list[Source] = []
    for entry in entries:
        parts = entry.filename.split("/")
        hidden = any(
            part.startswith(("._", "__MACOSX"))
            or (part.startswith(".") and part not in {".", ".."})
            for part in parts
        )
        if entry.is_dir() or hidden:
            continue  # folders, dotfiles and macOS metadata; ".." is left for the path check
        if not entry.filename.lower().endswith(PAGE_SUFFIXES):
            continue
        if stat.S_ISLNK(entry.external_attr >> 16):
            # `zip --symlinks` stores a link as its target's name, which is not a page's text;
            # a folder sync likewise refuses a link whose target is not in the folder.
            sources.append((entry.filename, _link_refused(entry.filename)))
            continue
        sources.append((entry.filename, _entry_reader(archive, entry)))
    if not sources:
        raise UploadRejected(f"{name} holds no Markdown or HTML pages")
    return sources


def _link_refused(path: str) -> Callable[[], bytes]:
    def read() -> bytes:
        raise DocumentParseError(path=path, message="a symbolic link, not a file: refused")

    return read


def _entry_reader(archive: zipfile.ZipFile, entry: zipfile.ZipInfo):
    def read() -> bytes:
        # Read one byte past the page's limit: the parser reports oversize files by name.
        try:
            with archive.open(entry) as handle:
                return handle.read(source_byte_limit(entry.filename) + 1)
        except (zipfile.BadZipFile, RuntimeError) as exc:  # corrupt or encrypted entry
            raise OSError(f"unreadable zip entry ({exc})") from exc

    return read
