"""The sentences of a document body with their offsets in it and the section they are in.

A citation names a chunk, up to eight blocks; what the answer drew on is usually one or two of
its sentences. These spans let the answer record exactly those (offsets into ``Document.body``)
so the document page can highlight them under their own section's name. A span covers what a
reader sees as the sentence's text: never a list marker, a quote marker or a table's outer pipes,
so marking it on the page cannot change how the Markdown around it parses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise

from kb.chunking.sentences import sentence_ends
from kb.chunking.structure import Block, BlockKind, split_sections

# Where a line's own text starts: after indentation, quote markers and a list marker.
_LINE_LEAD = re.compile(r"[ \t]*(?:>[ \t]?)*[ \t]*(?:(?:[-+*]|\d{1,9}[.)])[ \t]+)?")
_LIST_ITEM = re.compile(r"[ \t]*(?:>[ \t]?)*[ \t]*(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")
SECTION_SEPARATOR = " > "


@dataclass(frozen=True)
class BodySentence:
    start: int  # offsets in the body, end exclusive
    end: int
    text: str  # the sentence's source text (Markdown), one line per source line
    section: str  # heading path of its section, "Refund Policy > Eligibility"; "" before any


def body_sentences(body: str, *, start: int = 0, end: int | None = None) -> list[BodySentence]:
    """The sentences of the body's prose, lists and tables that overlap ``[start, end)``.

    A paragraph or a quote is cut at sentence ends (``sentence_ends``, abbreviations known);
    a list item or a table row is cut at its line's sentence ends, each line being a unit of
    its own. Headings and code are not sentences and are left out."""
    end = len(body) if end is None else end
    found: list[BodySentence] = []
    for section in split_sections(body):
        label = SECTION_SEPARATOR.join(section.path)
        for block in section.blocks:
            if block.end <= start or block.start >= end or block.kind is BlockKind.CODE:
                continue
            for span_start, span_end in _block_spans(block):
                if span_start < end and start < span_end:
                    text = body[span_start:span_end]
                    found.append(BodySentence(span_start, span_end, text, label))
    return found


def section_at(body: str, offset: int) -> str:
    """Heading path of the section holding ``offset`` ("" before the first heading)."""
    label = ""
    for section in split_sections(body):
        first = section.heading or (section.blocks[0] if section.blocks else None)
        if first is not None and first.start > offset:
            break
        label = SECTION_SEPARATOR.join(section.path)
    return label


def _block_spans(block: Block) -> list[tuple[int, int]]:
    if block.kind is BlockKind.TABLE:
        spans: list[tuple[int, int]] = []
        for line_start, line in zip(block.line_offsets, block.text.split("\n"), strict=False):
            if set(line.strip()) <= set("|-: \t"):
                continue  # the delimiter row
            lead, trail = _line_content(line, table=True)
            spans += _sentence_spans(block, line_start + lead, line_start + trail)
        return spans
    if block.kind is BlockKind.LIST:
        return [span for item in _list_items(block) for span in _sentence_spans(block, *item)]
    lead, _ = _line_content(block.text, table=False)  # a quote's first marker
    return _sentence_spans(block, lead, len(block.text))


def _list_items(block: Block) -> list[tuple[int, int]]:
    """``[start, end)`` in ``block.text`` of each item's text: from after its marker to the end
    of its last continuation line."""
    items: list[list[int]] = []
    for line_start, line in zip(block.line_offsets, block.text.split("\n"), strict=False):
        if not line.strip():
            continue
        if _LIST_ITEM.match(line) or not items:
            lead, trail = _line_content(line, table=False)
            items.append([line_start + lead, line_start + trail])
        else:
            items[-1][1] = line_start + len(line.rstrip())
    return [(start, end) for start, end in items if start < end]


def _line_content(line: str, *, table: bool) -> tuple[int, int]:
    """``[lead, trail)`` of the line's own text within ``line``."""
    if table:
        lead = len(line) - len(line.lstrip(" \t").removeprefix("|").lstrip(" \t"))
        trail = len(line.rstrip(" \t").removesuffix("|").rstrip(" \t"))
        return lead, max(trail, lead)
    match = _LINE_LEAD.match(line)
    return (match.end() if match else 0), len(line.rstrip())


def _sentence_spans(block: Block, start: int, end: int) -> list[tuple[int, int]]:
    text = block.text
    cuts = [start, *sentence_ends(text, start, end, abbreviations=True), end]
    spans = []
    for piece_start, piece_end in pairwise(cuts):
        while piece_start < piece_end and text[piece_start].isspace():
            piece_start += 1
        while piece_end > piece_start and text[piece_end - 1].isspace():
            piece_end -= 1
        if piece_start < piece_end:
            spans.append(block.source_span(piece_start, piece_end))
    return spans
