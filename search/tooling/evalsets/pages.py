"""A folder of Markdown pages read as the product reads it: parsed, then split into sections.

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
    MARKDOWN_SUFFIXES,
    MAX_DOCUMENT_BYTES,
    DocumentParseError,
    _split_front_matter,
    normalise_newlines,
    parse_document,
)


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
    """Every Markdown page under `folder`, in path order, the way `kb_sync` walks it."""
    result = PageFolder()
    for file_path in sorted(folder.rglob("*")):
        relative = file_path.relative_to(folder)
        if any(part.startswith(".") for part in relative.parts):
            continue
        if file_path.suffix.lower() not in MARKDOWN_SUFFIXES or not file_path.is_file():
            continue
        path = relative.as_posix()
        with file_path.open("rb") as handle:
            raw = handle.read(MAX_DOCUMENT_BYTES + 1)
        try:
            parsed = parse_document(path=path, raw=raw)
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
            Page(
                path=path,
                title=parsed.title,
                front_matter=_front_matter(path, raw),
                sections=sections,
            )
        )
    return result


def _front_matter(path: str, raw: bytes) -> dict[str, Any]:
    """Every front-matter field, including those the product ignores (`description`).

    The parser's own splitter, so the fields are read exactly as the parser read them.
    """
    text = normalise_newlines(raw.decode("utf-8").removeprefix("\ufeff"))
    return _split_front_matter(path, text)[0]
