"""What `kb_sync --dry-run` reports: what each file of a folder would become, nothing written.

For the person bringing a documentation folder written for a site generator: each page's title,
status, audience, earlier addresses and sections as they would load, what its markup lost, and
which files would be refused and why, before anything reaches the index. It parses and chunks
exactly as a sync does (same parser, same chunker, same model window) but never embeds and never
touches the database. It also says where site-generator markup would be left in a heading path
or an embedded text (`markup_left`; for a page converted from HTML, `html_left`: raw HTML and
template tags): the check the README runs on public documentation folders.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from kb.chunking import ChunkingError
from kb.chunking.leftovers import Leftover
from kb.chunking.lines import markup_leftovers
from kb.embedders import Embedder
from kb.formats.html import html_left
from kb.parsing import ParsedDocument, is_html_path
from kb.services.chunks import document_chunk
from kb.services.sync.report import SyncReport
from kb.services.sync.sources import Markup, folder_sources, sources_parse

HTML_LEFTOVER_KIND = "HTML or template tag"


@dataclass(frozen=True)
class FilePreview:
    document: ParsedDocument
    sections: tuple[str, ...]  # each chunk's heading path, in order, without repeats
    chunks: int
    problem: str = ""  # why the file could not be chunked, if it could not
    heading_paths_with_markup: int = 0  # chunks whose heading path holds markup outside code
    texts_with_markup: int = 0  # chunks whose embedded text does
    markup_lines: tuple[str, ...] = ()  # the distinct lines holding it, in order
    # Per kind of leftover (`kb.chunking.leftovers`), the chunks whose heading path or text
    # holds it, and the distinct lines it was found on.
    markup_kinds: dict[str, int] = field(default_factory=dict)
    markup_kind_lines: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class MarkupKind:
    kind: str
    chunks: int  # chunks (heading path or embedded text) holding it
    files: int
    examples: tuple[tuple[str, str], ...]  # (path, line), the first few


@dataclass
class CorpusPreview:
    files: list[FilePreview] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # "path:line: message", as a sync says
    warnings: list[str] = field(default_factory=list)  # the sync's warnings, unknown keys once
    markup: str = "sites"  # how the folder was read: "sites" (Hugo, MkDocs...) or "obsidian"

    @property
    def heading_paths_with_markup(self) -> int:
        return sum(file.heading_paths_with_markup for file in self.files)

    @property
    def texts_with_markup(self) -> int:
        return sum(file.texts_with_markup for file in self.files)

    def markup_by_kind(self, *, examples: int = 3) -> list[MarkupKind]:
        """Each kind of markup left, most chunks first, with where it was seen."""
        kinds: dict[str, MarkupKind] = {}
        for file in self.files:
            for kind, chunks in file.markup_kinds.items():
                seen = kinds.get(kind, MarkupKind(kind, 0, 0, ()))
                shown = seen.examples + tuple(
                    (file.document.path, line) for line in file.markup_kind_lines.get(kind, ())
                )
                kinds[kind] = MarkupKind(
                    kind, seen.chunks + chunks, seen.files + 1, shown[:examples]
                )
        return sorted(kinds.values(), key=lambda kind: (-kind.chunks, kind.kind))

    def summary(self) -> str:
        return (
            f"dry run: {len(self.files)} file(s) would load, {len(self.rejected)} rejected, "
            f"{len(self.warnings)} warning(s), markup left in {self.heading_paths_with_markup} "
            f"heading path(s) and {self.texts_with_markup} embedded text(s); nothing was written"
        )


def corpus_preview(
    *, directory: Path, embedder: Embedder, markup: Markup = "auto"
) -> CorpusPreview:
    report = SyncReport()
    folder = folder_sources(directory, markup=markup)
    _present, parsed, _files = sources_parse(folder.sources, origin=str(directory), report=report)
    preview = CorpusPreview(
        rejected=[failure.message for failure in report.failed],
        warnings=[*folder.warnings, *report.warnings],
        markup=folder.markup,
    )
    for document in parsed:
        try:
            drafts = document_chunk(title=document.title, body=document.body, embedder=embedder)
        except ChunkingError as exc:
            preview.files.append(FilePreview(document, (), 0, problem=str(exc)))
            continue
        paths = dict.fromkeys(draft.heading_path for draft in drafts.drafts)
        left = _html_leftovers if is_html_path(document.path) else markup_leftovers
        in_paths = [left(draft.heading_path) for draft in drafts.drafts]
        in_texts = [left(text) for text in drafts.embedding_texts()]
        kinds: dict[str, int] = {}
        kind_lines: dict[str, dict[str, None]] = {}
        for in_path, in_text in zip(in_paths, in_texts, strict=True):
            for kind in dict.fromkeys(leftover.kind for leftover in (*in_path, *in_text)):
                kinds[kind] = kinds.get(kind, 0) + 1
            for leftover in in_text:
                kind_lines.setdefault(leftover.kind, {})[leftover.line] = None
        preview.files.append(
            FilePreview(
                document,
                tuple(paths),
                len(drafts.drafts),
                heading_paths_with_markup=sum(1 for found in in_paths if found),
                texts_with_markup=sum(1 for found in in_texts if found),
                markup_lines=_lines(leftover for found in in_texts for leftover in found),
                markup_kinds=kinds,
                markup_kind_lines={kind: tuple(lines) for kind, lines in kind_lines.items()},
            )
        )
    return preview


def _html_leftovers(text: str) -> list[Leftover]:
    """What a page converted from HTML still holds (`kb.formats.html.html_left`): raw tags,
    entities and template tags, not the Markdown dialects' marks, which such a page cannot have."""
    return [Leftover(HTML_LEFTOVER_KIND, line) for line in html_left(text)]


def _lines(leftovers: Iterable[Leftover]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(leftover.line for leftover in leftovers))
