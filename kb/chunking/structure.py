"""Markdown structure for chunking: headings, atomic blocks and sections.

A small reader of the CommonMark shapes that decide where a chunk may start or end, not a
renderer: it never needs inline formatting, only where each atomic block begins and ends and
which headings it sits under. It reads the lines from `scan_lines`, so code and comments are
already marked, and every position it reports is an offset into the original text.
"""

from __future__ import annotations

import bisect
import dataclasses
import enum
import re
from dataclasses import dataclass

from kb.chunking.lines import ITEM_MARKER, FenceRole, SourceLine, fence_end, scan_lines


class BlockKind(enum.Enum):
    PARAGRAPH = "paragraph"
    LIST = "list"
    TABLE = "table"
    CODE = "code"
    QUOTE = "quote"
    HEADING = "heading"


@dataclass(frozen=True)
class Block:
    """An atomic unit of Markdown: a chunk boundary never falls inside one that fits."""

    kind: BlockKind
    lines: tuple[SourceLine, ...]
    text: str  # the lines' visible text joined by "\n", trailing whitespace removed
    line_offsets: tuple[int, ...]  # where each line starts in `text`

    @property
    def start(self) -> int:
        return self.source_offset(0)

    @property
    def end(self) -> int:
        return self.source_offset(len(self.text) - 1) + 1

    def source_offset(self, index: int) -> int:
        """Offset in the original text of `self.text[index]`."""
        line = bisect.bisect_right(self.line_offsets, index) - 1
        return self.lines[line].source_offset(index - self.line_offsets[line])

    def source_span(self, start: int, end: int) -> tuple[int, int]:
        """Original offsets covering the non-empty `self.text[start:end]` (end exclusive)."""
        return self.source_offset(start), self.source_offset(end - 1) + 1


@dataclass(frozen=True)
class Section:
    """The blocks under one heading (or before the first heading, with level 0)."""

    path: tuple[str, ...]  # heading texts from the outermost heading down to this one
    level: int  # 1-6; 0 for text before the first heading
    heading_text: str  # "" for level 0
    heading: Block | None  # the heading's source line(s)
    blocks: tuple[Block, ...]
    anchor: str = ""  # the id the heading gives itself (`## Install {#install}`), if any


_ATX_HEADING = re.compile(r" {0,3}(#{1,6})(?=[ \t]|$)(.*)")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+$")
_SETEXT_UNDERLINE = re.compile(r" {0,3}(=+|-{2,})[ \t]*")
_THEMATIC_BREAK = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*")
_QUOTE = re.compile(r" {0,3}>")
_TABLE_DELIMITER = re.compile(r"[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*")
_DELIMITER_CELL = re.compile(r"[ \t]*(:?)-+(:?)[ \t]*")
CELL_BORDER = re.compile(r"(?<!\\)\|")  # a table cell's border: a pipe not escaped (`\|`)


def indent_width(text: str) -> int:
    return len(text) - len(text.lstrip(" \t"))


def is_list_item(text: str) -> bool:
    """Whether `text` starts with a list marker (`-`, `*`, `+`, `1.` or `1)`), at any indent."""
    return bool(ITEM_MARKER.match(text))


def is_table_delimiter_row(text: str) -> bool:
    """Whether `text` is a table's header separator such as `| --- | :-: |`."""
    return "|" in text and bool(_TABLE_DELIMITER.fullmatch(text))


def table_cells(row: str) -> list[str]:
    """A table row's cells, with or without its outer pipes, each stripped; a pipe escaped in a
    cell (`a \\| b`, as the reST reader writes one) is the cell's text, not a border."""
    text = row.strip()
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|") and not text.endswith("\\|"):
        text = text[:-1]
    return [cell.strip() for cell in CELL_BORDER.split(text)]


def atx_heading(text: str) -> tuple[int, str] | None:
    """(level, text) if `text` is an ATX heading line such as `## Refunds ##`, else None."""
    match = _ATX_HEADING.fullmatch(text)
    if match is None:
        return None
    title = _CLOSING_HASHES.sub("", match.group(2).strip()).strip()
    return len(match.group(1)), title


def split_sections(text: str) -> list[Section]:
    """Sections of `text` in order, each with its heading path and atomic blocks.

    A section with neither a heading nor blocks (an empty preamble) is left out; a heading with
    no body is kept, because its text is part of the path of the sections below it.
    """
    lines = scan_lines(text, indented_code=True)
    builder = _SectionBuilder()
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.fence is FenceRole.OPEN:
            end = fence_end(lines, index)
            builder.add_block(BlockKind.CODE, lines[index:end])
            index = end
            continue
        if _is_blank(line):
            index += 1
            continue
        heading = atx_heading(line.text)
        if heading is not None:
            builder.start_section(heading[0], heading[1], lines[index : index + 1])
            index += 1
        elif _THEMATIC_BREAK.fullmatch(line.text):
            index += 1  # a horizontal rule is markup, not text; it only separates blocks
        elif _QUOTE.match(line.text):
            index = _add(builder, BlockKind.QUOTE, lines, index, _quote_end(lines, index))
        elif _starts_list(line.text):
            index = _add(builder, BlockKind.LIST, lines, index, _list_end(lines, index))
        elif _starts_table(lines, index):
            index = _add(builder, BlockKind.TABLE, lines, index, _table_end(lines, index))
        elif _is_setext_underline(lines, index + 1):
            level = 1 if lines[index + 1].text.strip().startswith("=") else 2
            builder.start_section(level, line.text.strip(), lines[index : index + 2])
            index += 2
        else:
            index = _add(builder, BlockKind.PARAGRAPH, lines, index, _paragraph_end(lines, index))
    return builder.finish()


def first_heading(text: str, *, level: int = 1) -> str | None:
    """Text of the first non-empty heading of `level` outside code and comments, or None."""
    for section in split_sections(text):
        if section.level == level and section.heading_text:
            return section.heading_text
    return None


def _add(
    builder: _SectionBuilder, kind: BlockKind, lines: list[SourceLine], start: int, end: int
) -> int:
    builder.add_block(kind, lines[start:end])
    return end


def _is_blank(line: SourceLine) -> bool:
    return line.fence is FenceRole.NONE and not line.text.strip()


def _starts_list(text: str) -> bool:
    return indent_width(text) <= 3 and is_list_item(text)


def _starts_table(lines: list[SourceLine], index: int) -> bool:
    text = lines[index].text
    if text.lstrip().startswith("|"):
        return True
    return "|" in text and _is_table_delimiter(lines, index + 1)


def _is_table_delimiter(lines: list[SourceLine], index: int) -> bool:
    if index >= len(lines) or lines[index].fence is not FenceRole.NONE:
        return False
    return is_table_delimiter_row(lines[index].text)


def _is_setext_underline(lines: list[SourceLine], index: int) -> bool:
    return (
        index < len(lines)
        and lines[index].fence is FenceRole.NONE
        and bool(_SETEXT_UNDERLINE.fullmatch(lines[index].text))
    )


def _starts_other_block(lines: list[SourceLine], index: int) -> bool:
    """Whether line `index` begins a block that ends the paragraph or quote before it: a box's
    title ends the block it is in, as the page shows it on its own line."""
    line = lines[index]
    if line.fence is not FenceRole.NONE or _is_blank(line) or line.title or lines[index - 1].title:
        return True
    return opens_block(line.text) or _starts_table(lines, index)


def opens_block(text: str) -> bool:
    """Whether a line of `text` ends the paragraph before it: a heading, a rule, a quote or a
    list (a table also needs the line after it, `_starts_table`)."""
    return (
        atx_heading(text) is not None
        or bool(_THEMATIC_BREAK.fullmatch(text))
        or bool(_QUOTE.match(text))
        or _starts_list(text)
    )


def _paragraph_end(lines: list[SourceLine], index: int) -> int:
    end = index + 1
    while end < len(lines) and not _starts_other_block(lines, end):
        end += 1
    return end


def _quote_end(lines: list[SourceLine], index: int) -> int:
    end = index + 1
    while end < len(lines):
        if lines[end].title or lines[end - 1].title:
            break  # a callout's title (`> [!tip] Title`) is a line of its own
        if _QUOTE.match(lines[end].text) and lines[end].fence is FenceRole.NONE:
            end += 1
        elif _starts_other_block(lines, end):
            break
        else:
            end += 1  # a lazy continuation line of the quoted paragraph
    return end


def _table_end(lines: list[SourceLine], index: int) -> int:
    end = index + 1
    while end < len(lines):
        line = lines[end]
        if _is_blank(line) or line.fence is not FenceRole.NONE or "|" not in line.text:
            break
        if atx_heading(line.text) is not None:
            break
        end += 1
    return end


def _list_end(lines: list[SourceLine], index: int) -> int:
    """End of the list starting at `index`: items, their indented content and nested code.

    Blank lines between items stay inside the list; a blank line followed by unindented text
    that is not another item ends it. Code fenced inside an item belongs to the item.
    """
    end = index + 1
    while end < len(lines):
        line = lines[end]
        if line.fence is FenceRole.OPEN:
            if indent_width(line.text) == 0:
                break
            end = fence_end(lines, end)
            continue
        if _is_blank(line):
            following = end + 1
            while following < len(lines) and _is_blank(lines[following]):
                following += 1
            if following == len(lines) or not _continues_list(lines[following]):
                break
            end = following
            continue
        text = line.text
        if indent_width(text) < 2 and (
            atx_heading(text) is not None
            or bool(_THEMATIC_BREAK.fullmatch(text))
            or bool(_QUOTE.match(text))
        ):
            break
        end += 1
    return end


def _continues_list(line: SourceLine) -> bool:
    """Whether a line after a blank line still belongs to the list above it."""
    if line.fence is FenceRole.OPEN:
        return indent_width(line.text) > 0
    if _THEMATIC_BREAK.fullmatch(line.text):
        return False
    return is_list_item(line.text) or indent_width(line.text) >= 2


def make_block(kind: BlockKind, lines: list[SourceLine]) -> Block:
    """The block of ``lines``, read as ``kind``."""
    if kind is BlockKind.TABLE and len(lines) > 1 and is_table_delimiter_row(lines[1].text):
        lines = [lines[0], _drawn_rule(lines[1]), *lines[2:]]
    offsets: list[int] = []
    length = 0
    for line in lines:
        offsets.append(length)
        length += len(line.text) + 1
    text = "\n".join(line.text for line in lines).rstrip()
    return Block(kind=kind, lines=tuple(lines), text=text, line_offsets=tuple(offsets))


def _drawn_rule(line: SourceLine) -> SourceLine:
    """A table's delimiter row as the page draws it, a rule under the header: `|---|:-:|--:|`,
    each cell's alignment kept. Formatters pad the row to its columns' widths
    (`| -------------------- | :------: |`), and the model reads one word piece per dash: the
    211 rows of Starship's option tables hold 106 word pieces at the median (339 at most) of the
    254 a chunk may have, Argo CD's metrics tables 244-261. Chunks were half dashes, and a long
    table's header with its row did not fit over each piece, so the table was cut inside the row
    (a chunk of dashes, then rows read under the first row as their header)."""
    written = line.text.strip()
    cells = []
    for cell in table_cells(written):
        match = _DELIMITER_CELL.fullmatch(cell)
        left, right = (match.group(1), match.group(2)) if match else ("", "")
        cells.append(f"{left or '-'}-{right or '-'}")
    indent = line.text[: indent_width(line.text)]
    lead, trail = ("|" if written.startswith("|") else ""), ("|" if written.endswith("|") else "")
    rule = f"{indent}{lead}{'|'.join(cells)}{trail}"
    if rule.count("-") >= line.text.count("-"):
        return line  # drawn already (`| --- | :-: |`, `|-|-|`): as it is written
    # shorter than the row it stands for, so every offset of it stays inside the row
    return dataclasses.replace(line, text=rule, runs=((0, line.source_offset(0)),))


class _SectionBuilder:
    """Collects blocks into sections while keeping the stack of open headings."""

    def __init__(self) -> None:
        self._sections: list[Section] = []
        self._open_headings: list[tuple[int, str]] = []
        self._level = 0
        self._heading_text = ""
        self._heading: Block | None = None
        self._blocks: list[Block] = []
        self._anchor = ""

    def start_section(self, level: int, heading_text: str, lines: list[SourceLine]) -> None:
        self._close()
        while self._open_headings and self._open_headings[-1][0] >= level:
            self._open_headings.pop()
        self._open_headings.append((level, heading_text))
        self._level = level
        self._heading_text = heading_text
        self._heading = make_block(BlockKind.HEADING, lines)
        self._blocks = []
        self._anchor = lines[0].anchor

    def add_block(self, kind: BlockKind, lines: list[SourceLine]) -> None:
        self._blocks.append(make_block(kind, lines))

    def finish(self) -> list[Section]:
        self._close()
        return self._sections

    def _close(self) -> None:
        if self._heading is None and not self._blocks:
            return
        self._sections.append(
            Section(
                path=tuple(text for _, text in self._open_headings),
                level=self._level,
                heading_text=self._heading_text,
                heading=self._heading,
                blocks=tuple(self._blocks),
                anchor=self._anchor,
            )
        )
