"""How a passage's Markdown lines read, by the chunker's own rules."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kb.chunking.lines import FenceRole, scan_lines
from kb.chunking.structure import atx_heading, is_list_item, is_table_delimiter_row

_QUOTE_MARKERS = re.compile(r"^\s*(?:>\s?)+")
# A quote's markers up to the text they quote (the one space after a marker is part of it)
_QUOTE_PREFIX = re.compile(r"^[ \t]*>(?:[ \t]?>)*[ \t]?")
# A fence written inside a quote (`> ```shell`), which the chunker's line reader leaves to the
# quote: its character run, and what follows it on the line
_QUOTED_FENCE = re.compile(r"(`{3,}|~{3,})(.*)")


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
    quoted_fence = ""  # the run of the fence open inside a quote, e.g. "```"
    for line in scan_lines(text):
        content = _QUOTE_MARKERS.sub("", line.text).strip()
        prefix = _QUOTE_PREFIX.match(line.text) if line.fence is FenceRole.NONE else None
        if prefix is None or not (quoted_fence or _QUOTED_FENCE.match(content)):
            quoted_fence = ""  # a fence in a quote ends with the quote
            found.append(
                PassageLine(line.text, content, line.fence is not FenceRole.NONE, line.fence)
            )
            continue
        inner = line.text[prefix.end() :]
        fence = _QUOTED_FENCE.fullmatch(content)
        if quoted_fence:
            closes = (
                fence is not None and fence[1].startswith(quoted_fence) and not fence[2].strip()
            )
            role = FenceRole.CLOSE if closes else FenceRole.BODY
            quoted_fence = "" if closes else quoted_fence
        elif fence is not None and (fence[1][0] == "~" or "`" not in fence[2]):
            role, quoted_fence = FenceRole.OPEN, fence[1]
        else:
            found.append(PassageLine(line.text, content, False, line.fence))
            continue
        found.append(PassageLine(inner, content, True, role))
    return found
