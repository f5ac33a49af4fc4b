"""Where a sync's files come from: a directory walked for Markdown, reStructuredText and HTML
articles (which the parser converts to Markdown), or an upload's entries (Markdown only: a
reStructuredText page needs its folder for labels and includes).

A directory that is an Obsidian vault (it has an `.obsidian/` folder, or the sync is told
``markup="obsidian"``) is read whole first: each note is then the CommonMark it renders as
(`kb.obsidian`), with wiki links and embeds resolved across the vault, and the vault's
templates folders (its settings name them) are not pages.
"""

from __future__ import annotations

import functools
import json
import math
import posixpath
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from kb.chunking.lines import markup_leftovers
from kb.hugo import params_filled
from kb.jekyll import CONFIG_FILES, DATA_FOLDER, DATA_SUFFIXES, JekyllSite, jekyll_site
from kb.obsidian import Note, Vault, note_aliases
from kb.parsing import (
    DOCUMENT_SUFFIXES,
    HTML_SUFFIXES,
    MARKDOWN_SUFFIXES,
    MAX_DOCUMENT_BYTES,
    RST_SUFFIXES,
    DocumentParseError,
    ParsedDocument,
    document_text,
    parse_document,
    parse_warnings,
    source_byte_limit,
)
from kb.rst import RstPages, rst_pages_read
from kb.rst.conf import CONF_FILE, sphinx_conf_read
from kb.services.sync.provenance import SyncedFile, synced_file_of
from kb.services.sync.report import SyncFailure, SyncReport
from kb.services.sync.rows import document_limits_check

# A source file: its document path, and a reader returning at most one byte past the path's
# limit (``source_byte_limit``: MAX_DOCUMENT_BYTES, or MAX_HTML_BYTES for an HTML page).
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


# A folder without `.obsidian/` is still a vault when this share of its notes links or embeds
# the Obsidian way: measured 0.805 on the Obsidian Tasks vault copied without its settings
# folder, 0.0 on each of the Hugo, Fly.io, Argo CD, Plausible and sample folders.
VAULT_NOTE_SHARE = 0.25
VAULT_MARKS = frozenset({"wiki link", "embed"})


def folder_markup(directory: Path, markup: Markup = "auto") -> Markup:
    """The markup a folder is read in: as told, else Obsidian's for a vault (a folder with
    `.obsidian/`, or one copied without it whose notes link ``[[like this]]``)."""
    if markup != "auto":
        return markup
    if (directory / OBSIDIAN_SETTINGS).is_dir() or _links_like_a_vault(directory):
        return "obsidian"
    return "sites"


def _links_like_a_vault(directory: Path) -> bool:
    """Whether at least `VAULT_NOTE_SHARE` of the folder's Markdown notes (two at least) hold a
    wiki link or an embed outside code. Only a note holding ``[[`` is read for them, and the
    count stops once it is decided: a site folder costs one read of each file's bytes."""
    root = directory.resolve()
    notes = [
        (relative_path, file_path)
        for relative_path, file_path in _document_files(directory)
        if file_path.suffix.lower() in MARKDOWN_SUFFIXES
    ]
    needed = max(2, math.ceil(VAULT_NOTE_SHARE * len(notes)))
    linking = 0
    for unread, (relative_path, file_path) in enumerate(reversed(notes)):
        if linking + len(notes) - unread < needed:
            return False  # the notes left cannot make up the share
        try:
            raw = _read_inside(root, relative_path, file_path)
        except (DocumentParseError, OSError):
            continue
        if b"[[" not in raw:
            continue
        text = raw.decode("utf-8", "replace")
        if any(leftover.kind in VAULT_MARKS for leftover in markup_leftovers(text)):
            linking += 1
            if linking >= needed:
                return True
    return False


def folder_sources(directory: Path, *, markup: Markup = "auto") -> FolderSources:
    """The folder's sources in its markup (`folder_markup`)."""
    chosen = folder_markup(directory, markup)
    if chosen == "obsidian":
        return _vault_sources(directory)
    sources, warnings = _sphinx_sources(directory, directory_sources(directory))
    sources, jekyll_warnings = _jekyll_sources(directory, sources)
    return FolderSources(sources, chosen, warnings + jekyll_warnings)


def _jekyll_sources(directory: Path, sources: list[Source]) -> tuple[list[Source], list[str]]:
    """``sources`` as Jekyll builds them when ``directory`` is a Jekyll site (`kb.jekyll`): not
    its layouts, includes and data, nor what its ``exclude`` names, and each page read with the
    values its Liquid prints. One warning names the files left out."""
    config_file = next((name for name in CONFIG_FILES if (directory / name).is_file()), None)
    if config_file is None:
        return sources, []
    root = directory.resolve()
    try:
        raw = FolderFile(root, config_file)()
    except (DocumentParseError, OSError) as exc:
        return sources, [f"{config_file}: cannot read ({exc}): every file is read"]
    data_files = sorted(
        path.relative_to(root).as_posix()
        for path in (root / DATA_FOLDER).rglob("*")
        if path.suffix in DATA_SUFFIXES and path.is_file()
    )
    site, problem = jekyll_site(
        config_file,
        raw,
        data_files=data_files,
        read_file=lambda relative_path: FolderFile(root, relative_path)(),
    )
    if site is None:
        return sources, [problem] if problem else []
    kept: list[Source] = []
    left_out: list[str] = []
    for path, read in sources:
        if site.is_page(path):
            kept.append((path, functools.partial(_liquid_read, site, path, read)))
        else:
            left_out.append(path)
    return kept, _left_out_warning(
        config_file,
        left_out,
        "pages of this Jekyll site (layouts, includes and data in `_` folders, what `exclude` "
        "names)",
    )


def _left_out_warning(source: str, left_out: Sequence[str], what: str) -> list[str]:
    """One warning naming the files ``source`` (a tool's configuration) says are not ``what``
    (the first ``SKIPPED_NAMED``, the rest counted), or none: nothing is dropped unsaid."""
    if not left_out:
        return []
    named = ", ".join(left_out[:SKIPPED_NAMED])
    more = f" and {len(left_out) - SKIPPED_NAMED} more" if len(left_out) > SKIPPED_NAMED else ""
    return [f"{source}: {len(left_out)} file(s) are not {what}: {named}{more}"]


_SPHINX_FOLDERS = ("templates_path", "html_static_path", "html_extra_path")
SKIPPED_NAMED = 8  # the skipped files a warning names, the rest counted


def _sphinx_sources(directory: Path, sources: list[Source]) -> tuple[list[Source], list[str]]:
    """``sources`` as Sphinx reads them when ``directory`` is a Sphinx project (a ``conf.py``
    beside reStructuredText pages): not its HTML, which Sphinx builds rather than reads (theme
    templates, example pages among the static files, test fixtures, an old build), nor the
    folders its ``conf.py`` gives templates and static files, nor what its ``exclude_patterns``
    match. Each file left out is named in one warning: nothing is dropped unsaid."""
    if not any(_is_rst(path) for path, _read in sources):
        return sources, []
    try:
        raw = FolderFile(directory.resolve(), CONF_FILE)()
    except (DocumentParseError, OSError):
        return sources, []
    conf = sphinx_conf_read(raw)
    folders = [
        posixpath.normpath(folder.strip("/"))
        for name in _SPHINX_FOLDERS
        for folder in conf.paths.get(name, ())
    ]
    excluded = [_glob(pattern) for pattern in conf.paths.get("exclude_patterns", ())]

    def skipped(path: str) -> bool:
        # a pattern that names a folder excludes what it holds, as Sphinx's walk does
        prefixes = [path, *(path.rsplit("/", depth)[0] for depth in range(1, path.count("/") + 1))]
        return (
            path.lower().endswith(HTML_SUFFIXES)
            or any(path.startswith(f"{folder}/") for folder in folders)
            or any(pattern.fullmatch(prefix) for pattern in excluded for prefix in prefixes)
        )

    kept = [(path, read) for path, read in sources if not skipped(path)]
    left_out = [path for path, _read in sources if skipped(path)]
    return kept, _left_out_warning(
        CONF_FILE,
        left_out,
        "pages of this Sphinx project (HTML, which Sphinx builds rather than reads; its "
        "templates_path, html_static_path and exclude_patterns)",
    )


def _liquid_read(site: JekyllSite, path: str, read: Callable[[], bytes]) -> bytes:
    """A Jekyll page's file with the values its Liquid prints (`JekyllSite.liquid_filled`): the
    bytes the sync reads and records, so a change to the configuration or a data file is a
    change of each page that prints it."""
    return site.liquid_filled(path, read())


def _glob(pattern: str) -> re.Pattern[str]:
    """A Sphinx exclude pattern as a regular expression: ``**`` crosses folders, ``*`` and
    ``?`` do not (``sphinx.util.matching``)."""
    parts = re.split(r"(\*\*/?|\*|\?)", pattern.strip("/"))
    translated = {"**": ".*", "**/": "(?:.*/)?", "*": "[^/]*", "?": "[^/]"}
    return re.compile("".join(translated.get(part, re.escape(part)) for part in parts))


@dataclass(frozen=True)
class FolderFile:
    """Reads one page of a synced folder. It knows the folder, because a reStructuredText page
    reads the folder's other files too (its includes), by the same rule (`read_in_folder`)."""

    root: Path  # resolved
    relative_path: str

    def __call__(self) -> bytes:
        return _read_inside(self.root, self.relative_path, self.root / self.relative_path)

    def read_in_folder(self, relative_path: str) -> bytes:
        """Another file of the folder, for an include; ValueError says why it cannot be read."""
        try:
            raw = _read_inside(self.root, relative_path, self.root / relative_path)
        except DocumentParseError as exc:
            raise ValueError(f"include {relative_path}: {exc.message}") from None
        except OSError as exc:
            raise ValueError(f"include {relative_path}: cannot read: {exc.strerror}") from None
        if len(raw) > MAX_DOCUMENT_BYTES:
            raise ValueError(f"include {relative_path}: larger than {MAX_DOCUMENT_BYTES:,} bytes")
        return raw


def directory_sources(directory: Path) -> list[Source]:
    """The Markdown, reStructuredText and HTML files under ``directory``, sorted, each read only
    when the sync gets to it. A file whose real path lies outside ``directory`` (a link to
    ``/etc/passwd``) is refused when read, by name, instead of being published."""
    root = directory.resolve()
    return [
        (relative_path, FolderFile(root, relative_path))
        for relative_path, _file_path in _document_files(directory)
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
    raws: dict[str, bytes] = {}
    rst = _rst_pages(sources, report=report)
    for relative_path, read in sources:
        if relative_path in rst.part_of:
            continue  # included by another page: its text is that page's
        if relative_path in present:
            # Two entries for one path (a zip can hold that): which one was meant is unknown.
            parsed = [document for document in parsed if document.path != relative_path]
            report.failed.append(
                SyncFailure(relative_path, f"{relative_path}: appears more than once in {origin}")
            )
            continue
        present.add(relative_path)
        try:
            if _is_rst(relative_path):
                document, raw = _rst_document(rst, relative_path)
            else:
                raw = read()
                document = parse_document(path=relative_path, raw=raw)
            document_limits_check(document)
        except DocumentParseError as exc:
            report.failed.append(SyncFailure(relative_path, str(exc)))
        except OSError as exc:
            report.failed.append(SyncFailure(relative_path, f"{relative_path}: cannot read: {exc}"))
        else:
            parsed.append(document)
            raws[relative_path] = raw
    # Hugo's `param` shortcodes, from the page's front matter and its sections' cascades: other
    # pages' front matter, so once every page is parsed (Jekyll's values come from the site's
    # files and are filled as a page is read, `_jekyll_sources`). A change to a section's
    # `_index.md` is a change of every page that reads its values.
    filled = params_filled(parsed)
    for document, before in zip(filled, parsed, strict=True):
        raw = raws[document.path]
        if document.body != before.body:
            raw += b"\0" + document.body.encode()
        files[document.path] = synced_file_of(document, raw)
    report.warnings += parse_warnings(filled)
    return present, filled, files


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
    for relative_path, file_path in _document_files(directory):
        if file_path.suffix.lower() not in MARKDOWN_SUFFIXES:
            continue  # a vault's notes are Markdown
        if any(relative_path.startswith(f"{folder}/") for folder in skipped):
            continue
        reader = functools.partial(_read_inside, root, relative_path, file_path)
        try:
            raw[relative_path] = reader()
            parsed = parse_document(path=relative_path, raw=raw[relative_path])
        except (DocumentParseError, OSError):
            sources.append((relative_path, reader))
            continue
        # The text as the parser read it ("\n" line ends), so its body is the text's tail.
        text = document_text(path=relative_path, raw=raw[relative_path])
        prefixes[relative_path] = text[: len(text) - len(parsed.body)]
        notes.append(Note(relative_path, parsed.body, note_aliases(parsed.metadata)))
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


def _is_rst(path: str) -> bool:
    return path.lower().endswith(RST_SUFFIXES)


def _rst_pages(sources: Sequence[Source], *, report: SyncReport) -> RstPages:
    """The reStructuredText pages of ``sources``, read together (labels and ``:doc:`` names
    cross pages). A page that cannot be read is left for the main loop to report."""
    raws: dict[str, bytes] = {}
    unread: dict[str, DocumentParseError] = {}
    read_file = None
    counts: dict[str, int] = {}
    for relative_path, _read in sources:
        counts[relative_path] = counts.get(relative_path, 0) + 1
    for relative_path, read in sources:
        if not _is_rst(relative_path) or counts[relative_path] > 1:
            continue
        if isinstance(read, FolderFile):
            read_file = read.read_in_folder
        try:
            raws[relative_path] = read()
        except DocumentParseError as exc:
            unread[relative_path] = exc
        except OSError as exc:
            unread[relative_path] = DocumentParseError(
                path=relative_path, message=f"cannot read: {exc}"
            )
    pages = rst_pages_read(raws, read_file=read_file) if raws else RstPages()
    pages.failures.update(unread)
    report.warnings += pages.warnings
    for included, by in sorted(pages.part_of.items()):
        report.warnings.append(f"{included}: included by {by}, read as part of it, not as a page")
    return pages


def _rst_document(pages: RstPages, path: str) -> tuple[ParsedDocument, bytes]:
    """The page and the bytes a sync records of it: the file and what it became, so a change
    to an included file or to a label's title is a change of this page."""
    if path in pages.failures:
        raise pages.failures[path]
    if path not in pages.documents:  # given twice: the main loop reports it
        raise DocumentParseError(path=path, message="appears more than once")
    return pages.documents[path], pages.fingerprints[path]


def _document_files(directory: Path) -> Iterator[tuple[str, Path]]:
    """Markdown, reStructuredText and HTML files under ``directory``, sorted, skipping hidden
    files and folders."""
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
