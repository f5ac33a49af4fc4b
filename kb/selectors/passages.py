"""How a passage's Markdown lines read, by the chunker's own rules."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kb.chunking.lines import FenceRole, QuotedFence, scan_lines, unquoted
from kb.chunking.structure import atx_heading, is_list_item, is_table_delimiter_row

_QUOTE_MARKERS = re.compile(r"^\s*(?:>\s?)+")


@dataclass(frozen=True)
class PassageLine:
    """One line of a chunk's text as the chunker read it, for code that quotes passages: fences,
    headings, list items and table delimiters are recognised by the chunker's own rules, so a
    quote never disagrees with the chunk it came from about what is code or a heading."""

    text: str  # as written, HTML comments (outside code) removed
    content: str  # without blockquote markers or surrounding blanks
    in_code: bool  # a fence line or inside a fenced block
    fence: FenceRole = FenceRole.NONE  # which: the opening line, the code, the closing line

    @property
    def is_heading(self) -> bool:
        return atx_heading(self.content) is not None

    @property
    def is_list_item(self) -> bool:
        return is_list_item(self.content)

    @property
    def is_table_delimiter(self) -> bool:
        return is_table_delimiter_row(self.content)


def passage_lines(text: str) -> list[PassageLine]:
    """The lines of a passage (a chunk's text), each with what kind of line it is. Code fenced
    inside a quote is code too, its lines read without the quote's markers."""
    found: list[PassageLine] = []
    quoted = QuotedFence()
    for line in scan_lines(text):
        content = _QUOTE_MARKERS.sub("", line.text).strip()
        role = quoted.role(line.text if line.fence is FenceRole.NONE else "")
        if role is FenceRole.NONE:
            found.append(
                PassageLine(line.text, content, line.fence is not FenceRole.NONE, line.fence)
            )
        else:
            found.append(PassageLine(unquoted(line.text), content, True, role))
    return found
