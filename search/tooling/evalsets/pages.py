"""A folder of pages (Markdown, reStructuredText) read as the product reads it: parsed, then
split into sections.

The paths, titles and section labels are the ones `kb_sync` and the chunker produce, so a case
labelled here matches the product's chunks (`heading_path`) and the baselines score exactly the
same units. Files the parser refuses are counted, not guessed at.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kb.chunking.structure import Section, split_sections
from kb.parsing import (
    DOCUMENT_SUFFIXES,
    MAX_DOCUMENT_BYTES,
    RST_SUFFIXES,
    DocumentParseError,
    normalise_newlines,
    parse_document,
    split_front_matter,
)
from kb.rst import rst_pages_read
from kb.services.sync.sources import FolderFile


@dataclass(frozen=True)
class PageSection:
    path: str  # the document path kb_sync stores
    title: str  # the document's title
    label: str  # " > ".join(section.path): what a chunk's heading_path holds; "" before any heading
    section: Section

    @property
    def text(self) -> str:
        """The section's visible text, heading excluded (the label carries it)."""
        return "\n\n".join(block.text for block in self.section.blocks)


@dataclass(frozen=True)
class Page:
    path: str
    title: str
    front_matter: dict[str, Any]
    sections: tuple[PageSection, ...]  # only sections with text: the ones a chunk can come from


@dataclass
class PageFolder:
    pages: list[Page] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # the parser's messages

    @property
    def sections(self) -> list[PageSection]:
        return [section for page in self.pages for section in page.sections]


def section_label(section: Section) -> str:
    return " > ".join(section.path)


def pages_read(folder: Path) -> PageFolder:
    """Every Markdown and reStructuredText page under `folder`, in path order, the way
    `kb_sync` walks it (reStructuredText pages are read together: ``kb.rst``)."""
    result = PageFolder()
    files: list[tuple[str, bytes]] = []
    for file_path in sorted(folder.rglob("*")):
        relative = file_path.relative_to(folder)
        if any(part.startswith(".") for part in relative.parts):
            continue
        if file_path.suffix.lower() not in DOCUMENT_SUFFIXES or not file_path.is_file():
            continue
        with file_path.open("rb") as handle:
            files.append((relative.as_posix(), handle.read(MAX_DOCUMENT_BYTES + 1)))
    rst = rst_pages_read(
        {path: raw for path, raw in files if path.lower().endswith(RST_SUFFIXES)},
        read_file=FolderFile(folder.resolve(), "").read_in_folder,
    )
    for path, raw in files:
        if path in rst.part_of:
            continue
        try:
            if path.lower().endswith(RST_SUFFIXES):
                if path in rst.failures:
                    raise rst.failures[path]
                parsed = rst.documents[path]
                front_matter = {**parsed.metadata, "description": parsed.description}
            else:
                parsed = parse_document(path=path, raw=raw)
                front_matter = _front_matter(path, raw)
        except DocumentParseError as exc:
            result.rejected.append(str(exc))
            continue
        sections = tuple(
            PageSection(
                path=path, title=parsed.title, label=section_label(section), section=section
            )
            for section in split_sections(parsed.body)
            if section.blocks
        )
        result.pages.append(
            Page(path=path, title=parsed.title, front_matter=front_matter, sections=sections)
        )
    return result


def _front_matter(path: str, raw: bytes) -> dict[str, Any]:
    """Every front-matter field, including those the product ignores (`description`).

    The parser's own splitter, so the fields are read exactly as the parser read them.
    """
    text = normalise_newlines(raw.decode("utf-8").removeprefix("\ufeff"))
    return split_front_matter(path, text)[0]
