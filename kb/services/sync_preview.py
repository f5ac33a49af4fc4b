"""What `kb_sync --dry-run` reports: what each file of a folder would become, nothing written.

For the person bringing a documentation folder written for a site generator: each page's title,
status, audience and sections as they would load, what its markup lost, and which files would be
refused and why, before anything reaches the index. It parses and chunks exactly as a sync does
(same parser, same chunker, same model window) but never embeds and never touches the database.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kb.chunking import ChunkingError
from kb.embedders import Embedder
from kb.parsing import ParsedDocument
from kb.services.chunks import document_chunk
from kb.services.sync.report import SyncReport
from kb.services.sync.sources import directory_sources, sources_parse


@dataclass(frozen=True)
class FilePreview:
    document: ParsedDocument
    sections: tuple[str, ...]  # each chunk's heading path, in order, without repeats
    chunks: int
    problem: str = ""  # why the file could not be chunked, if it could not


@dataclass
class CorpusPreview:
    files: list[FilePreview] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # "path:line: message", as a sync says
    warnings: list[str] = field(default_factory=list)  # the sync's warnings, unknown keys once

    def summary(self) -> str:
        return (
            f"dry run: {len(self.files)} file(s) would load, {len(self.rejected)} rejected, "
            f"{len(self.warnings)} warning(s); nothing was written"
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
        preview.files.append(FilePreview(document, tuple(paths), len(drafts.drafts)))
    return preview
