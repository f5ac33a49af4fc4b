"""Where a sync's files come from: a directory walked for Markdown, or an upload's entries.

A directory that is an Obsidian vault (it has an `.obsidian/` folder, or the sync is told
``markup="obsidian"``) is read whole first: each note is then the CommonMark it renders as
(`kb.obsidian`), with wiki links and embeds resolved across the vault, and the vault's
templates folders (its settings name them) are not pages.
"""

from __future__ import annotations

import functools
import json
import posixpath
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from kb.obsidian import Note, Vault, note_aliases
from kb.parsing import (
    MARKDOWN_SUFFIXES,
    MAX_DOCUMENT_BYTES,
    DocumentParseError,
    ParsedDocument,
    parse_document,
    parse_warnings,
)
from kb.services.sync.provenance import SyncedFile, synced_file_of
from kb.services.sync.report import SyncFailure, SyncReport
from kb.services.sync.rows import document_limits_check

# A source file: its document path, and a reader returning at most MAX_DOCUMENT_BYTES + 1 bytes.
Source = tuple[str, Callable[[], bytes]]


# How a folder's Markdown is read: "auto" is Obsidian's when the folder has `.obsidian/`.
Markup = Literal["auto", "obsidian", "sites"]
MARKUPS: tuple[Markup, ...] = ("auto", "obsidian", "sites")
OBSIDIAN_SETTINGS = ".obsidian"


@dataclass
class FolderSources:
    sources: list[Source]
    markup: Markup  # "obsidian" or "sites": what was chosen
    warnings: list[str] = field(default_factory=list)  # what reading the vault could not resolve


def folder_markup(directory: Path, markup: Markup = "auto") -> Markup:
    """The markup a folder is read in: as told, else Obsidian's for a vault."""
    if markup != "auto":
        return markup
    return "obsidian" if (directory / OBSIDIAN_SETTINGS).is_dir() else "sites"


def folder_sources(directory: Path, *, markup: Markup = "auto") -> FolderSources:
    """The folder's sources in its markup (`folder_markup`)."""
    chosen = folder_markup(directory, markup)
    if chosen == "obsidian":
        return _vault_sources(directory)
    return FolderSources(directory_sources(directory), chosen)


def directory_sources(directory: Path) -> list[Source]:
    """The Markdown files under ``directory``, sorted, each read only when the sync gets to it.
    A file whose real path lies outside ``directory`` (a link to ``/etc/passwd``) is refused
    when read, by name, instead of being published."""
    root = directory.resolve()
    return [
        (relative_path, functools.partial(_read_inside, root, relative_path, file_path))
        for relative_path, file_path in _markdown_files(directory)
    ]


def _vault_sources(directory: Path) -> FolderSources:
    """Every note of the vault, read once, each translated with the whole vault in view.

    A note that cannot be read or whose front matter does not parse is passed on as written,
    so that the sync reports it exactly as for any other folder."""
    root = directory.resolve()
    skipped = _template_folders(directory)
    raw: dict[str, bytes] = {}
    notes: list[Note] = []
    prefixes: dict[str, str] = {}
    sources: list[Source] = []
    for relative_path, file_path in _markdown_files(directory):
        if any(relative_path.startswith(f"{folder}/") for folder in skipped):
            continue
        reader = functools.partial(_read_inside, root, relative_path, file_path)
        try:
            raw[relative_path] = reader()
            parsed = parse_document(path=relative_path, raw=raw[relative_path])
        except (DocumentParseError, OSError):
            sources.append((relative_path, reader))
            continue
        text = raw[relative_path].decode("utf-8-sig")
        prefixes[relative_path] = text[: len(text) - len(parsed.body)]
        # Windows line ends: the translation reads lines, and writes them back with "\n"
        body = parsed.body.replace("\r\n", "\n")
        notes.append(Note(relative_path, body, note_aliases(parsed.metadata)))
    vault = Vault(notes=notes, files=_vault_files(directory))
    warnings: list[str] = []
    if skipped:
        listed = ", ".join(f"{folder}/" for folder in sorted(skipped))
        warnings.append(f"Obsidian templates, not pages: {listed} left out")
    for note in notes:
        translation = vault.translate(note.path)
        warnings += [f"{note.path}: {warning}" for warning in translation.warnings]
        translated = (prefixes[note.path] + translation.body).encode()
        sources.append((note.path, functools.partial(_given, translated)))
    sources.sort(key=lambda source: source[0])
    return FolderSources(sources, "obsidian", warnings)


def _given(raw: bytes) -> bytes:
    return raw


def _template_folders(directory: Path) -> set[str]:
    """The folders the vault's settings keep templates in (core Templates, Templater): their
    notes are `{{title}}` and `<% tp.file.title %>` to be filled in, not pages."""
    settings = directory / OBSIDIAN_SETTINGS
    found: set[str] = set()
    for file, key in (
        (settings / "templates.json", "folder"),
        (settings / "plugins" / "templater-obsidian" / "data.json", "templates_folder"),
    ):
        try:
            value = json.loads(file.read_text(encoding="utf-8")).get(key)
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(value, str) and value.strip("/ "):
            found.add(posixpath.normpath(value.strip("/ ")))
    return found


def _vault_files(directory: Path) -> list[str]:
    """Every file of the vault that is not a note: what `![[picture.png]]` may name."""
    found = []
    for file_path in sorted(directory.rglob("*")):
        relative = file_path.relative_to(directory)
        if any(part.startswith(".") for part in relative.parts) or not file_path.is_file():
            continue
        if file_path.suffix.lower() not in MARKDOWN_SUFFIXES:
            found.append(relative.as_posix())
    return found


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
    """Markdown files under ``directory``, sorted, skipping hidden files and folders."""
    for file_path in sorted(directory.rglob("*")):
        relative = file_path.relative_to(directory)
        if any(part.startswith(".") for part in relative.parts):
            continue
        if file_path.suffix.lower() in MARKDOWN_SUFFIXES and file_path.is_file():
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
        return handle.read(MAX_DOCUMENT_BYTES + 1)
