"""Source lines as a reader of the rendered page sees them: HTML comments out, code marked.

Comments are stripped before chunking because a reader never sees them (and they are where text
aimed at a model likes to hide), but `<!--` inside code is an example, not a comment. Fences and
comments are therefore tracked in one pass, and every line remembers where its visible text came
from, so offsets into the original body survive the removal.
"""

from __future__ import annotations

import bisect
import enum
import re
from dataclasses import dataclass


class FenceRole(enum.Enum):
    """Where a line sits relative to a fenced code block."""

    NONE = "none"
    OPEN = "open"
    BODY = "body"
    CLOSE = "close"


@dataclass(frozen=True)
class SourceLine:
    """One line of the original text, as the reader of the rendered page would see it.

    `text` has HTML comments removed (outside code), so it can be shorter than the source line;
    `runs` remembers where each visible run of characters came from so offsets survive that.
    """

    start: int  # offset of the line's first character in the original text
    text: str  # the line without its terminator and without HTML comments
    runs: tuple[tuple[int, int], ...]  # (index in `text`, offset in the original) per visible run
    fence: FenceRole

    def source_offset(self, index: int) -> int:
        """Offset in the original text of `text[index]`."""
        if not self.runs:
            return self.start
        run = bisect.bisect_right(self.runs, index, key=lambda item: item[0]) - 1
        text_index, source_offset = self.runs[max(run, 0)]
        return source_offset + index - text_index


_FENCE_OPEN = re.compile(r"( {0,3})(`{3,}|~{3,})(.*)")
_FENCE_CLOSE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*")
_INLINE_MARK = re.compile(r"`+|<!--")
_BACKTICKS = re.compile(r"`+")


def scan_lines(text: str) -> list[SourceLine]:
    """Split `text` into lines, removing HTML comments and marking fenced code.

    One pass does both because each decides the other: `<!--` inside a fence is code, and a fence
    opener inside a comment is hidden text. An unterminated comment or fence runs to the end.
    Inline code spans are matched within a line only, which covers how they are written in practice.
    """
    lines: list[SourceLine] = []
    fence: tuple[str, int] | None = None  # fence character and length while inside a fence
    in_comment = False
    position = 0
    while position <= len(text):
        newline = text.find("\n", position)
        line_end = len(text) if newline < 0 else newline
        raw = text[position:line_end]
        if raw.endswith("\r"):
            raw = raw[:-1]
        if in_comment:
            close = raw.find("-->")
            if close < 0:
                lines.append(SourceLine(position, "", (), FenceRole.NONE))
            else:
                visible, runs, in_comment = _strip_comments(raw, close + 3, position)
                lines.append(SourceLine(position, visible, runs, FenceRole.NONE))
        elif fence is not None:
            closing = _FENCE_CLOSE.fullmatch(raw)
            if closing and closing.group(1)[0] == fence[0] and len(closing.group(1)) >= fence[1]:
                fence = None
                role = FenceRole.CLOSE
            else:
                role = FenceRole.BODY
            lines.append(SourceLine(position, raw, ((0, position),), role))
        else:
            opening = _FENCE_OPEN.fullmatch(raw)
            # A backtick fence's info string may not contain backticks (that is inline code).
            if opening and (opening.group(2)[0] == "~" or "`" not in opening.group(3)):
                fence = (opening.group(2)[0], len(opening.group(2)))
                lines.append(SourceLine(position, raw, ((0, position),), FenceRole.OPEN))
            else:
                visible, runs, in_comment = _strip_comments(raw, 0, position)
                lines.append(SourceLine(position, visible, runs, FenceRole.NONE))
        if newline < 0:
            break
        position = newline + 1
    return lines


def _strip_comments(
    raw: str, start: int, line_start: int
) -> tuple[str, tuple[tuple[int, int], ...], bool]:
    """Visible text of `raw[start:]`, its runs, and whether a comment is left open at the end."""
    parts: list[str] = []
    runs: list[tuple[int, int]] = []
    visible_length = 0
    run_start = start
    index = start
    code_spans: _CodeSpans | None = None  # built on the first backtick: most lines have none
    while True:
        mark = _INLINE_MARK.search(raw, index)
        if mark is None:
            break
        if mark.group().startswith("`"):
            if code_spans is None:
                code_spans = _CodeSpans(raw)
            closer = code_spans.closing_end(mark.start(), len(mark.group()))
            # An unmatched backtick run is literal text, so a comment after it is still a comment.
            index = mark.end() if closer < 0 else closer
            continue
        if mark.start() > run_start:
            runs.append((visible_length, line_start + run_start))
            parts.append(raw[run_start : mark.start()])
            visible_length += mark.start() - run_start
        close = raw.find("-->", mark.end())
        if close < 0:
            return "".join(parts), tuple(runs), True
        index = run_start = close + 3
    if run_start < len(raw) or not runs:
        runs.append((visible_length, line_start + run_start))
        parts.append(raw[run_start:])
    return "".join(parts), tuple(runs), False


class _CodeSpans:
    """The backtick runs of one line, indexed by length.

    A code span closes at the next run of exactly its opening length; looking that up by
    bisection keeps a line full of unmatched runs from costing quadratic time.
    """

    def __init__(self, raw: str) -> None:
        self._starts_by_length: dict[int, list[int]] = {}
        self._ends: dict[int, int] = {}
        for run in _BACKTICKS.finditer(raw):
            self._starts_by_length.setdefault(len(run.group()), []).append(run.start())
            self._ends[run.start()] = run.end()

    def closing_end(self, opening_start: int, length: int) -> int:
        """End of the run that closes the span opened at `opening_start`, or -1."""
        starts = self._starts_by_length[length]
        following = bisect.bisect_right(starts, opening_start)
        return self._ends[starts[following]] if following < len(starts) else -1
