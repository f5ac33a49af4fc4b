"""What `kb_sync --dry-run` reports: what each file of a folder would become, nothing written.

For the person bringing a documentation folder written for a site generator: each page's title,
status, audience, earlier addresses and sections as they would load, what its markup lost, and
which files would be refused and why, before anything reaches the index. It parses and chunks
exactly as a sync does (same parser, same chunker, same model window) but never embeds and never
touches the database. It also says where site-generator markup would be left in a heading path
or an embedded text (`markup_left`; for a page converted from HTML, raw HTML left too): the
check the README runs on public documentation folders.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kb.chunking import ChunkingError
from kb.chunking.lines import markup_left
from kb.embedders import Embedder
from kb.formats.html import html_left
from kb.parsing import ParsedDocument, is_html_path
from kb.services.chunks import document_chunk
from kb.services.sync.report import SyncReport
from kb.services.sync.sources import directory_sources, sources_parse


@dataclass(frozen=True)
class FilePreview:
    document: ParsedDocument
    sections: tuple[str, ...]  # each chunk's heading path, in order, without repeats
    chunks: int
    problem: str = ""  # why the file could not be chunked, if it could not
    heading_paths_with_markup: int = 0  # chunks whose heading path holds markup outside code
    texts_with_markup: int = 0  # chunks whose embedded text does
    markup_lines: tuple[str, ...] = ()  # the distinct lines holding it, in order


@dataclass
class CorpusPreview:
    files: list[FilePreview] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # "path:line: message", as a sync says
    warnings: list[str] = field(default_factory=list)  # the sync's warnings, unknown keys once

    @property
    def heading_paths_with_markup(self) -> int:
        return sum(file.heading_paths_with_markup for file in self.files)

    @property
    def texts_with_markup(self) -> int:
        return sum(file.texts_with_markup for file in self.files)

    def summary(self) -> str:
        return (
            f"dry run: {len(self.files)} file(s) would load, {len(self.rejected)} rejected, "
            f"{len(self.warnings)} warning(s), markup left in {self.heading_paths_with_markup} "
            f"heading path(s) and {self.texts_with_markup} embedded text(s); nothing was written"
        )


def corpus_preview(*, directory: Path, embedder: Embedder) -> CorpusPreview:
    report = SyncReport()
    _present, parsed, _files = sources_parse(
        directory_sources(directory), origin=str(directory), report=report
    )
    preview = CorpusPreview(
        rejected=[failure.message for failure in report.failed], warnings=report.warnings
    )
    for document in parsed:
        try:
            drafts = document_chunk(title=document.title, body=document.body, embedder=embedder)
        except ChunkingError as exc:
            preview.files.append(FilePreview(document, (), 0, problem=str(exc)))
            continue
        paths = dict.fromkeys(draft.heading_path for draft in drafts.drafts)
        left = _html_or_markup_left if is_html_path(document.path) else markup_left
        in_paths = [left(draft.heading_path) for draft in drafts.drafts]
        in_texts = [left(text) for text in drafts.embedding_texts()]
        preview.files.append(
            FilePreview(
                document,
                tuple(paths),
                len(drafts.drafts),
                heading_paths_with_markup=sum(1 for lines in in_paths if lines),
                texts_with_markup=sum(1 for lines in in_texts if lines),
                markup_lines=tuple(dict.fromkeys(line for lines in in_texts for line in lines)),
            )
        )
    return preview


def _html_or_markup_left(text: str) -> list[str]:
    """For a page converted from HTML: raw HTML left (a tag, an entity) counts as markup too."""
    return list(dict.fromkeys([*markup_left(text), *html_left(text)]))
