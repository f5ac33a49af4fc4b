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
from collections.abc import Sequence
from dataclasses import dataclass, replace

from kb.chunking import markup
from kb.chunking.leftovers import Leftover, line_leftovers
from kb.chunking.markup import CODE_SPAN
from kb.chunking.prose import reads_as_prose


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
    anchor: str = ""  # an explicit id the line gave itself (`## Install {#install}`)
    # a box's title (`:::tip Title`, `!!! note "Title"`): the page shows it on a line of its own,
    # so it is a block of its own, never the start of the sentence under it
    title: bool = False

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


def scan_lines(
    text: str, *, keep_highlights: bool = False, indented_code: bool = False
) -> list[SourceLine]:
    """Split `text` into lines, removing HTML comments and site-generator markup, marking code.

    One pass does both because each decides the other: `<!--` inside a fence is code, and a fence
    opener inside a comment is hidden text. An unterminated comment or fence runs to the end.
    Inline code spans are matched within a line only, which covers how they are written in practice.
    Markup (`kb.chunking.markup`) is removed outside code only: a shortcode in a code sample is
    the example a reader came for. `keep_highlights` leaves `==x==` for the page to render.

    `indented_code` reads a page's indented code blocks as fenced ones (``_Scanner._indented``):
    the chunker reads a page so, with its HTML and list items around them. A passage (a chunk's
    text) has its code fenced already, and what is indented in it is text whose context is gone
    (a `<div>` line it stood under is blank now), so a passage is read without it.
    """
    return _Scanner(keep_highlights=keep_highlights, indented_code=indented_code).scan(text)


def markup_warnings(text: str, *, first_line: int = 1) -> list[str]:
    """What the markup of `text` lost for a reader: includes and snippets that name other files.

    Lines are counted from `first_line`, the line of the file where `text` (a body) starts."""
    scanner = _Scanner()
    scanner.scan(text, first_line=first_line)
    return scanner.warnings


def markup_left(text: str) -> list[str]:
    """The lines of `text` that still hold syntax CommonMark would not render as meant
    (`markup_leftovers`): empty for a heading path or embedded text the markup rules cleaned."""
    return list(dict.fromkeys(leftover.line for leftover in markup_leftovers(text)))


def markup_leftovers(text: str) -> list[Leftover]:
    """Each kind of leftover syntax (`kb.chunking.leftovers.PATTERNS`) on each line of `text`
    outside code, in order.

    A check of the chunker's output, not a step of it. Each line is read as written, since a
    mark there is what a reader and the model get; only which lines are code comes from
    `scan_lines`, so code is told apart exactly as the chunker tells it. Inline code is left out.
    """
    return [leftover for written in prose_lines(text) for leftover in line_leftovers(written)]


def prose_lines(text: str) -> list[str]:
    """The lines of `text` as written that are not code: what a check of leftover markup reads
    (`markup_leftovers`, and `kb.formats.html.html_left` for a page converted from HTML). Code is
    told apart as the chunker tells it (`scan_lines`), plus the code it does not mark
    (`_ProseCode`)."""
    found: list[str] = []
    code = _ProseCode()
    for line in scan_lines(text):
        end = text.find("\n", line.start)
        written = text[line.start : end if end >= 0 else len(text)]
        if line.fence is FenceRole.NONE and not code.is_code(written):
            found.append(written)
    return found


# A list item's marker (`-`, `*`, `+`, `1.`, `1)`): its indent, the marker, the blanks before
# the item's text
ITEM_MARKER = re.compile(r"([ \t]*)([-+*]|\d{1,9}[.)])([ \t]+|$)")


# A fence the scanner does not see because a list item's indent puts it four or more in
_INDENTED_FENCE = re.compile(r"(?:[ \t]{4,}|\t[ \t]*)(`{3,}|~{3,})(.*)")
# A quote's markers up to the text they quote (the one space after a marker is part of it)
_QUOTE_PREFIX = re.compile(r"[ \t]*>(?:[ \t]?>)*[ \t]?")
_FENCE_RUN = re.compile(r"[ \t]*(`{3,}|~{3,})(.*)")


class QuotedFence:
    """A fence written inside a quote (`> ```shell`, an Obsidian callout's example), read line by
    line: the scanner leaves a quote's lines to the quote. ``role`` is a line's place in such a
    fence (``FenceRole.NONE`` outside one); the fence ends with its closing run or the quote."""

    def __init__(self) -> None:
        self._run = ""  # the open fence's run, e.g. "```"

    def role(self, written: str) -> FenceRole:
        prefix = _QUOTE_PREFIX.match(written)
        if prefix is None:
            self._run = ""
            return FenceRole.NONE
        fence = _FENCE_RUN.fullmatch(written[prefix.end() :])
        if self._run:
            if fence and fence[1].startswith(self._run) and not fence[2].strip():
                self._run = ""
                return FenceRole.CLOSE
            return FenceRole.BODY
        if fence and (fence[1][0] == "~" or "`" not in fence[2]):
            self._run = fence[1]
            return FenceRole.OPEN
        return FenceRole.NONE


def unquoted(written: str) -> str:
    """``written`` without the markers of the quote it is in, if any."""
    prefix = _QUOTE_PREFIX.match(written)
    return written[prefix.end() :] if prefix else written


class _ProseCode:
    """Code the scanner does not mark, read line by line: a fence inside a quote (an Obsidian
    callout's example, `> ```js`) or indented past a list item's text, and an indented code block
    (four spaces past the text it is under, after a blank line)."""

    def __init__(self) -> None:
        self._quoted = QuotedFence()
        self._fence = ""  # the open fence the scanner missed, e.g. "```"
        self._indented = False
        self._previous_blank = True
        self._content_indent = 0  # where the text of the open list item starts

    def is_code(self, written: str) -> bool:
        if self._quoted.role(written) is not FenceRole.NONE:
            return True
        fence = _INDENTED_FENCE.fullmatch(written)
        if self._fence:
            if fence and fence.group(1).startswith(self._fence) and not fence.group(2).strip():
                self._fence = ""
            return True
        if fence and (fence.group(1)[0] == "~" or "`" not in fence.group(2)):
            self._fence = fence.group(1)
            return True
        blank = not written.strip()
        expanded = written.expandtabs(4)
        indent = len(expanded) - len(expanded.lstrip(" "))
        if not blank:
            code = indent >= self._content_indent + 4
            self._indented = code and (self._indented or self._previous_blank)
            column = item_text_column(expanded)
            if not self._indented and (column is not None or indent < self._content_indent):
                # a list item's text starts after its marker: code under it is indented 4 more
                self._content_indent = column or 0
        self._previous_blank = blank
        return self._indented and not blank


class _Scanner:
    def __init__(self, *, keep_highlights: bool = False, indented_code: bool = False) -> None:
        self._keep_highlights = keep_highlights
        self._indented_code = indented_code
        # the open indented code block: the column of the list item's text it is under (0
        # outside a list), or -1 when none is open, and the fence it is read between
        self._code_column = -1
        self._code_fence = ""
        # the last look past an indented block's lines (``_indented_fence``): their indent,
        # where it stopped, and the fence found for them
        self._looked: tuple[int, int, str | None] = (-1, -1, None)
        self._lines: list[SourceLine] = []  # the lines read so far
        self._html_lists: list[str] = []  # the HTML lists open, innermost last: "ul" or "ol"
        self.warnings: list[str] = []
        # the open code fence: its character, its length and the column its list item's text
        # starts at (0 outside a list), which its lines are indented past
        self._fence: tuple[str, int, int] | None = None
        # each open list item: the least indent that goes on in it (its text's column, or two
        # past its marker if less: Python-Markdown indents an item's paragraphs four spaces
        # whatever its marker is), and the column where its text starts
        self._items: list[tuple[int, int]] = []
        self._dedented = 0  # columns of indent the open boxes took off the line being read
        self._directives: list[tuple[str, int, bool]] = []  # MyST fences: char, length, hidden
        self._directive_options = False  # the `:class: x` lines that open a directive
        self._admonitions: list[int] = []  # content indent of each open MkDocs admonition
        self._in_comment = False
        self._components: frozenset[str] = frozenset()  # names the page's MDX imports bind
        self._tag_close = ""  # `>}}` or `>` inside a shortcode or component tag of several lines
        self._tag_titled = False  # that tag is a component's, whose title is shown
        # per open MDX component, the indent of its content's first line (-1 before it)
        self._component_indents: list[int] = []
        self._code_shortcode = ""  # the name of the open shortcode whose body is code
        self._in_export = False  # in an MDX export, which runs to the next blank line
        self._after_blank = True  # the line before the one read is blank (or there is none)
        self._rest: tuple[str, int] = ("", -1)  # the text scanned, and where the line read ends
        self._last_close: dict[str, int] = {}  # where each tag close last occurs in that text
        # an HTML table read as the pipe table it shows (``_html_table``): its lines still to
        # be given, one per line of the page, and where its `</table>` line ends
        self._table_lines: list[SourceLine] = []
        self._table_end = -1
        # where the last search for a `</table>` started, and what it found (``_table_close``)
        self._table_closes: tuple[int, re.Match[str] | None] | None = None

    def scan(self, text: str, *, first_line: int = 1) -> list[SourceLine]:
        lines: list[SourceLine] = []
        self._lines = lines
        self._last_close = {}
        self._table_lines, self._table_end, self._table_closes = [], -1, None
        position = 0
        number = first_line - 1
        while position <= len(text):
            newline = text.find("\n", position)
            line_end = len(text) if newline < 0 else newline
            raw = text[position:line_end]
            if raw.endswith("\r"):
                raw = raw[:-1]
            number += 1
            self._rest = (text, newline)
            lines.append(self._line(raw, position, number))
            self._after_blank = not raw.strip()
            if newline < 0:
                break
            position = newline + 1
        return lines

    def _line(self, raw: str, position: int, number: int) -> SourceLine:
        if position <= self._table_end:
            return self._table_lines.pop(0) if self._table_lines else _blank(position)
        dedent = self._admonition_dedent(raw)
        dedent += self._component_dedent(raw[dedent:])
        self._dedented = indent_columns(raw[:dedent])
        raw, base = raw[dedent:], position + dedent
        if self._tag_close:
            return self._line_in_tag(raw, position, base, number)
        if self._in_comment:
            return self._line_in_comment(raw, position, base, number)
        if self._in_export:
            self._in_export = bool(raw.strip())
            return _blank(position)
        if self._fence is not None and not self._item_ends(raw):
            return self._line_in_fence(raw, position, base, fence=self._fence)
        self._fence = None
        if self._code_shortcode:
            return self._line_in_code_shortcode(raw, position, base)
        if self._indented_code:
            code = self._indented(raw, position, base)
            if code is not None:
                return code
        if self._close_directive(raw):
            return SourceLine(position, "", (), FenceRole.NONE)
        self._read_item(raw)
        opened = self._open_fence(raw, position, base, number) or self._open_code_shortcode(
            raw, position, base
        )
        if opened is not None:
            return opened
        if self._directives and self._directives[-1][2]:
            return _blank(position)  # a toctree's entries are navigation, not text
        if self._directive_options:
            if markup.DIRECTIVE_OPTION.fullmatch(raw):
                return _blank(position)
            self._directive_options = False
        opening = _HTML_TABLE_OPEN.match(raw)
        if opening is not None:
            table = self._html_table(base, base + opening.end())
            if table is not None:
                return table
        visible, runs, self._in_comment = _strip_comments(raw, 0, base)
        return self._unwrap(SourceLine(position, visible, runs, FenceRole.NONE), number)

    def _html_table(self, start: int, opened: int) -> SourceLine | None:
        """The first line of the pipe table an HTML `<table>` shows (its line starting at
        ``start``, its open tag ending at ``opened``), the others kept for the lines after it
        (``_table_lines``), or None when it is not one table of rows closed on the page.

        Without its tags a table's cells read one per line, a row's words run into the next
        row's and no cell is read under its column's name (Plausible's "Required action to
        ensure continuous tracking" over "WordPress plugin", "Update the site domain in your
        plugin settings"). Read as the pipe table an imported HTML page gives
        (``kb.formats.html``), each row is one, under its header. Each line of it stands where
        its `<tr>` is on the page, and takes the place of one of the table's lines, in order;
        the lines left are blank."""
        from kb.formats.html import html_to_markdown  # it reads pages with this module

        text = self._rest[0]
        close = self._table_close(start)
        if close is None or _HTML_TABLE_OPEN_ANYWHERE.search(text, opened, close.start()):
            return None  # not closed, or a table nested in a cell: read as it was
        rows = [row.start() for row in _HTML_ROW_OPEN.finditer(text, opened, close.start())]
        if not rows:
            return None
        newline = text.find("\n", close.end())
        end = len(text) if newline < 0 else newline
        html = text[start:end]
        written = html_to_markdown(html).strip("\n").split("\n")
        # the header (an empty one when no row heads the table) and its rule, then the rows
        heads = len(written) - len(rows)
        if heads not in (1, 2) or not all(line.startswith("|") for line in written):
            return None
        # the row each line stands for: the header and its rule stand for the first
        of_row = [0] * heads + list(range(len(rows))) if heads == 2 else [0, *range(len(rows))]
        ends = [*rows[1:], close.start()]
        lines = []
        for line, row in zip(written, of_row, strict=True):
            place = rows[row]
            # a row's characters stand where its `<tr>` is, within the row while they fit
            fits = len(line) <= ends[row] - place
            lines.append(
                SourceLine(place, line, ((0, place),), FenceRole.NONE)
                if fits
                else _written(place, line, FenceRole.NONE)
            )
        self._table_lines, self._table_end = lines[1:], end
        return lines[0]

    def _indented(self, raw: str, position: int, base: int) -> SourceLine | None:
        """The line read as a line of an indented code block, else None.

        CommonMark's indented code: lines four columns past the text they stand under (the
        list item's, or the page's), after a blank line, up to a line less indented. The page
        shows it as code, so it is read as a fenced block: the blank line before it becomes
        the opening fence (or a codehilite first line, `::yaml`, which names the language and
        is never shown), the blank line after it the closing one, and its lines lose the four
        columns. A block is read so only when a blank line or the page's end closes it (a
        fence needs a line of its own), and not when it opens with markup the site renders
        before Markdown (a `<div>`, a shortcode): pages indent those as they nest them."""
        if self._code_column >= 0:
            if not raw.strip():
                return SourceLine(position, "", (), FenceRole.BODY)
            if indent_columns(raw) >= self._code_column + 4:
                return self._indented_line(raw, position, base)
            # the lines ended at the blank line before this one, which closes them
            closing = self._lines[-1]
            if closing.fence is FenceRole.BODY and not closing.text:
                self._lines[-1] = _written(closing.start, self._code_fence, FenceRole.CLOSE)
            self._code_column = -1
            return None
        if not (self._lines and self._after_blank and raw.strip()) or self._component_indents:
            # a blank line before it holds the fence (the page's first line has none), and
            # MDX has no indented code: what a component indents is its text
            return None
        indent = indent_columns(raw)
        column = next((text for goes_on, text in reversed(self._items) if indent >= goes_on), 0)
        content = raw.strip()
        if (
            indent < column + 4
            or content.startswith(("{{", "{%", "<%"))
            or markup.HTML_TAG.match(content)
            or markup.HTML_OPENER.match(content)
        ):
            return None
        fence = self._indented_fence(self._dedented + column + 4, raw)
        if fence is None:
            return None
        self._code_column, self._code_fence = column, " " * column + fence
        language = _CODEHILITE_LANGUAGE.fullmatch(content)
        if language is not None:
            return _written(position, self._code_fence + language.group(1), FenceRole.OPEN)
        opening = self._lines[-1]
        self._lines[-1] = _written(opening.start, self._code_fence, FenceRole.OPEN)
        return self._indented_line(raw, position, base)

    def _indented_line(self, raw: str, position: int, base: int) -> SourceLine:
        """A line of an indented code block, without the four columns that made it code."""
        line = SourceLine(position, raw, ((0, base),), FenceRole.BODY)
        start = _indent_chars(raw, self._code_column)
        return _cut(line, ((start, _indent_chars(raw, self._code_column + 4)),))

    def _indented_fence(self, columns: int, first: str) -> str | None:
        """The fence for the indented block whose first line, ``first``, is the line being
        read (its lines ``columns`` or more in, as written): longer than any run of backticks
        that starts one of its lines, so a fence the block shows as text stays its text. None
        when neither a blank line nor the end of the text closes it. Blocks side by side share
        one look ahead: a page of many would be read again from each."""
        text, newline = self._rest
        indent, stop, fence = self._looked
        if indent == columns and newline < stop:
            return fence
        longest = _fence_length(first)
        blank = False
        while newline >= 0:
            start = newline + 1
            newline = text.find("\n", start)
            line = text[start : newline if newline >= 0 else len(text)]
            if not line.strip():
                blank = True
            elif indent_columns(line) < columns:
                break
            else:
                blank = False
                longest = max(longest, _fence_length(line))
        else:
            blank, start = True, len(text) + 1
        fence = "`" * max(3, longest + 1) if blank else None
        self._looked = (columns, start, fence)
        return fence

    def _prose_inside(self, char: str, length: int) -> bool:
        """Whether the content of the MyST directive opened on the line being read, up to its
        closing fence (its options left out), reads as prose (`kb.chunking.prose`), as an
        unknown reStructuredText directive's is read: ```` ```{impl-detail} ```` over a
        sentence is text, ```` ```{console} ```` over a command is code. Only the directive's
        own lines are read."""
        text, position = self._rest
        paragraphs: list[str] = []
        lines: list[str] = []
        options = True
        while position >= 0:
            start = position + 1
            position = text.find("\n", start)
            line = text[start : position if position >= 0 else len(text)].rstrip("\r")
            closing = _FENCE_CLOSE.fullmatch(line)
            if closing and closing.group(1)[0] == char and len(closing.group(1)) >= length:
                if lines:
                    paragraphs.append(" ".join(lines))
                return bool(paragraphs) and reads_as_prose(
                    CODE_SPAN.sub("", paragraph) for paragraph in paragraphs
                )
            if options and markup.DIRECTIVE_OPTION.fullmatch(line):
                continue
            options = False
            if line.strip():
                lines.append(line)
            elif lines:
                paragraphs.append(" ".join(lines))
                lines = []
        return False  # never closed: a code block running to the end, as CommonMark reads it

    def _closes_later(self, close: str) -> bool:
        """Whether ``close`` occurs after the line being read. Its last place in the text is
        looked up once per text: a search from each line with an open tag made a page of many
        (2 MB, 32,000 such lines) take 30 s to read instead of 0.5 s."""
        text, line_end = self._rest
        if close not in self._last_close:
            self._last_close[close] = text.rfind(close)
        return line_end >= 0 and self._last_close[close] >= line_end

    def _table_close(self, start: int) -> re.Match[str] | None:
        """The first `</table>` after ``start``, found once for every table opened before it
        (``_table_closes``, the last one found): a search from each of many tables that the
        same close ends, or none does, would read the page again for each."""
        found = self._table_closes
        if found is None or found[0] > start or (found[1] is not None and found[1].start() < start):
            found = (start, _HTML_TABLE_CLOSE.search(self._rest[0], start))
            self._table_closes = found
        return found[1]

    def _line_in_tag(self, raw: str, position: int, base: int, number: int) -> SourceLine:
        """A line inside a shortcode or component tag of several lines: hidden up to its close
        (but a component's title, `title="Log in"`, on a line of its own)."""
        close = raw.find(self._tag_close)
        if close < 0:
            line = SourceLine(position, raw, ((0, base),), FenceRole.NONE)
            return self._tag_title(line) if self._tag_titled else _blank(position)
        close += len(self._tag_close)
        if self._tag_titled and not raw[:close].endswith("/>"):
            self._component_indents.append(-1)  # a component's tag of several lines opened it
        self._tag_close, self._tag_titled = "", False
        visible, runs, self._in_comment = _strip_comments(raw, close, base)
        return self._unwrap(SourceLine(position, visible, runs, FenceRole.NONE), number)

    def _tag_title(self, line: SourceLine) -> SourceLine:
        """``line`` of a component tag written over several lines: only the value of a title
        attribute it holds, as a box's title, else nothing."""
        span = markup.title_value(line.text)
        if span is None:
            return _cut(line, ((0, len(line.text)),))
        return _cut(line, ((0, span[0]), (span[1], len(line.text))), title=True)

    def _line_in_comment(self, raw: str, position: int, base: int, number: int) -> SourceLine:
        close = raw.find("-->")
        if close < 0:
            return SourceLine(position, "", (), FenceRole.NONE)
        visible, runs, self._in_comment = _strip_comments(raw, close + 3, base)
        return self._unwrap(SourceLine(position, visible, runs, FenceRole.NONE), number)

    def _line_in_fence(
        self, raw: str, position: int, base: int, *, fence: tuple[str, int, int]
    ) -> SourceLine:
        """A code line kept as written; only a fence of the opener's character (``fence``: the
        open fence's character, length and list column), at least as long, closes it."""
        closing = _FENCE_CLOSE.fullmatch(raw[_indent_chars(raw, fence[2]) :])
        if closing and closing.group(1)[0] == fence[0] and len(closing.group(1)) >= fence[1]:
            self._fence = None
            role = FenceRole.CLOSE
        else:
            role = FenceRole.BODY
        return SourceLine(position, raw, ((0, base),), role)

    def _open_code_shortcode(self, raw: str, position: int, base: int) -> SourceLine | None:
        """The line, read as a fence's opener, when ``raw`` opens a shortcode whose body is code
        (``CODE_SHORTCODES``), else None. The page shows the body as a code block, so the passage
        holds it as one: `{{< code-toggle file=hugo >}}` reads ```` ```toml ````, in the language
        of its body (read from the line after it), `{{< highlight go >}}` ```` ```go ````."""
        tag = _code_shortcode(raw)
        if tag is None or tag.closes or tag.arguments.rstrip().endswith("/"):
            return None  # `{{< code-toggle config=server />}}` shows data, not a body
        if tag.name == "pre" and not self._closes_later("</pre>"):
            return None  # a `<pre>` nothing closes is text: the rest of the page is not code
        language = (
            _config_language(_line_after(*self._rest))
            if tag.name == "code-toggle"
            else _shortcode_language(tag.arguments)
        )
        self._code_shortcode = tag.name
        return SourceLine(position, f"{tag.indent}```{language}", ((0, base),), FenceRole.OPEN)

    def _line_in_code_shortcode(self, raw: str, position: int, base: int) -> SourceLine:
        """A line of a code shortcode's body kept as written, or its closing tag read as the
        fence that closes it."""
        tag = _code_shortcode(raw)
        if tag is None or not tag.closes or tag.name != self._code_shortcode:
            return SourceLine(position, raw, ((0, base),), FenceRole.BODY)
        self._code_shortcode = ""
        return SourceLine(position, f"{tag.indent}```", ((0, base),), FenceRole.CLOSE)

    def _close_directive(self, raw: str) -> bool:
        """Whether ``raw`` closes the innermost open MyST directive (which it then pops)."""
        closing = _FENCE_CLOSE.fullmatch(raw)
        if closing and self._directives:
            char, length, _ = self._directives[-1]
            if closing.group(1)[0] == char and len(closing.group(1)) >= length:
                self._directives.pop()
                return True
        return False

    def _open_fence(self, raw: str, position: int, base: int, number: int) -> SourceLine | None:
        """The line when ``raw`` opens a code fence or a MyST directive, else None.

        A prose directive keeps only its title; a hidden one (a toctree) shows nothing. One we
        do not know is prose when its content reads as prose (`_prose_inside`), else code."""
        # A fence as far in as the text of the list item it is under is read from there, and
        # ends with the item; so is one indented four or more where the item goes on (else it
        # would be no fence). One indented less than the item's text is not under it.
        indent = indent_columns(raw)
        column = 0
        if self._items:
            goes_on, text = self._items[-1]
            if indent >= text or goes_on <= 4 <= indent:
                column = min(text, indent)
        opening = _FENCE_OPEN.fullmatch(raw[_indent_chars(raw, column) :])
        # A backtick fence's info string may not contain backticks (that is inline code).
        if not (opening and (opening.group(2)[0] == "~" or "`" not in opening.group(3))):
            return None
        directive = markup.DIRECTIVE.fullmatch(opening.group(3).strip())
        name = directive.group(1) if directive else ""
        if directive and (
            name in markup.PROSE_DIRECTIVES
            or name in markup.HIDDEN_DIRECTIVES
            or (
                name not in markup.CODE_DIRECTIVES
                and self._prose_inside(opening.group(2)[0], len(opening.group(2)))
            )
        ):
            hidden = name in markup.HIDDEN_DIRECTIVES
            if name in markup.INCLUDES:
                self.warnings.append(
                    f"line {number}: {{{name}}} {directive.group(2).strip()} not resolved "
                    "(its text is not included)"
                )
            self._directives.append((opening.group(2)[0], len(opening.group(2)), hidden))
            self._directive_options = True
            title_start = len(raw) - len(opening.group()) + opening.start(3)
            title_start += opening.group(3).index("}") + 1
            title_start += len(raw[title_start:]) - len(raw[title_start:].lstrip())
            line = SourceLine(position, raw, ((0, base),), FenceRole.NONE)
            if hidden:
                return _blank(position)
            return _cut(line, ((0, title_start),), title=bool(raw[title_start:].strip()))
        self._fence = (opening.group(2)[0], len(opening.group(2)), column)
        return SourceLine(position, raw, ((0, base),), FenceRole.OPEN)

    def _read_item(self, raw: str) -> None:
        """Keeps the open list items (``_items``) as of ``raw``, a line outside code: CommonMark
        reads a fence under an item from where the item's text starts, so MkDocs' steps,
        indented four spaces, hold code fenced four spaces in. A line indented less than an
        item goes on ends the item after a blank line (right after a line of text it continues
        the paragraph), and another item's marker ends it at once."""
        if not raw.strip():
            return
        indent = indent_columns(raw)
        column = item_text_column(raw)
        while self._items and indent < self._items[-1][0] and (self._after_blank or column):
            self._items.pop()
        if column is not None:
            self._items.append((min(column, indent + 2), column))

    def _item_ends(self, raw: str) -> bool:
        """Whether ``raw``, read inside a fence opened under a list item, ends that item (a line
        of text less indented than the item's text), and with it the fence."""
        column = self._fence[2] if self._fence else 0
        return bool(column and raw.strip() and indent_columns(raw) < column)

    def _component_dedent(self, raw: str) -> int:
        """Characters of indent that belong to the open MDX components (`<Note>`, `<Step>`):
        MDX has no indented code, so the content a page indents under a component is its text,
        as far in as its first line (a list or code under it keeps its own indent)."""
        if not self._component_indents or self._in_comment or self._tag_close or not raw.strip():
            return 0
        indent = len(raw) - len(raw.lstrip(" \t"))
        if self._component_indents[-1] < 0:
            self._component_indents[-1] = indent  # the component's first line of content
        return min(indent, self._component_indents[-1])

    def _component_opened(self, text: str) -> None:
        """Counts a component tag alone on its line (`<Steps>`, `</Step>`) as opening or closing
        a block whose content `_component_dedent` reads."""
        tag = markup.COMPONENT_TAG.fullmatch(text.strip()) if "<" in text else None
        if tag is None or not (
            tag.group(2) in self._components or markup.unimported_component(tag.group(2))
        ):
            return
        if tag.group(1):
            if self._component_indents:
                self._component_indents.pop()
        elif not tag.group().endswith("/>") and self._closes_later(f"</{tag.group(2)}>"):
            self._component_indents.append(-1)

    def _admonition_dedent(self, raw: str) -> int:
        """Characters of indent that belong to the open MkDocs admonitions, which end at the
        first non-blank line indented less than their content."""
        if self._in_comment or not self._admonitions:
            return 0
        if raw.strip():
            while self._admonitions and markup.indent_chars(raw, self._admonitions[-1]) is None:
                self._admonitions.pop()
                if self._fence is not None:
                    self._fence = None  # a fence left open inside the box ends with it
        if not self._admonitions:
            return 0
        found = markup.indent_chars(raw, self._admonitions[-1])
        return found if found is not None else len(raw) - len(raw.lstrip(" \t"))

    def _unwrap(self, line: SourceLine, number: int) -> SourceLine:
        self._component_opened(line.text)
        imported = markup.mdx_import(line.text)
        if imported is not None:
            cut, names = imported
            self._components |= names
            if cut.warning:
                self.warnings.append(f"line {number}: {cut.warning}")
            return _cut(line, cut.drop)
        if self._after_blank and markup.MDX_EXPORT.match(line.text):
            # a component or data the page's JSX uses, never shown: an export opens a block
            self._in_export = True
            return _blank(line.start)
        marker = markup.block_marker(line.text)
        if marker is not None:
            cut, content_indent = marker
            if content_indent is not None:
                # as far in as the line the box opens on is in the page: a tab in an example box
                self._admonitions.append(self._dedented + content_indent)
            if cut.warning:
                self.warnings.append(f"line {number}: {cut.warning}")
            line = _cut(line, cut.drop, title=cut.title)
            # a title reads as any text does: its icons, shortcodes and tags go
            return self._inline(line, number, title=True) if cut.title else line
        written = line.text
        line = self._html_blocks(written, self._inline(line, number))
        opening = markup.COMPONENT_OPENER.fullmatch(line.text)
        if opening is not None and (
            opening.group(1) in self._components
            or (
                markup.unimported_component(opening.group(1))
                and _HTML_ATTRIBUTES_GO_ON.match(_line_after(*self._rest))
            )
        ):
            # `<VideoEmbed` with its attributes on the lines below: the tag runs to its `>`,
            # and a title among them (`title="Log in"`) is what the box says, as on one line
            self._tag_close, self._tag_titled = ">", True
            return self._tag_title(line)
        if _HEAD_OPEN.fullmatch(line.text) and self._closes_later("</head>"):
            # an MDX page's `<head>` (its title, a search engine's FAQ schema) is never shown
            self._tag_close = "</head>"
            return _cut(line, ((0, len(line.text)),))
        unclosed = _unclosed_tag(line.text)
        if unclosed is None or not self._closes_later(unclosed[1]):
            return line  # a tag nothing closes is text: the rest of the page is not hidden
        if unclosed[1] == ">" and not _HTML_ATTRIBUTES_GO_ON.match(_line_after(*self._rest)):
            return line  # "…if i<p" ends a sentence: an element's tag goes on with attributes
        # `{{< asciinema` or `<% x = Component.new(` with its arguments on the lines below: the
        # tag runs to its `>}}` or `%>`
        opener, self._tag_close = unclosed
        return _cut(line, ((opener, len(line.text)),))

    def _html_blocks(self, written: str, line: SourceLine) -> SourceLine:
        """``line`` (``written`` before its tags went) as the HTML blocks it opens show it: an
        `<li>` at its start is an item of the `<ul>` or `<ol>` it stands in (written `- ` or
        `1. `, at no indent: a nested list reads as one), and a heading element alone on it
        (`<h3>Not supported</h3>`) a line of its own. Without their tags, Plausible's cards
        and Fly.io's lists of products read as one run-on sentence."""
        if "<" not in written:
            return line
        outside = CODE_SPAN.sub(lambda span: " " * len(span.group()), written)
        item = _HTML_ITEM.match(outside)
        for tag in _HTML_LIST_TAG.finditer(outside, 0, item.start(1) if item else len(outside)):
            self._html_list(tag)
        if item is not None:
            marker = "1. " if self._html_lists[-1:] == ["ol"] else "- "
            for tag in _HTML_LIST_TAG.finditer(outside, item.start(1)):
                self._html_list(tag)
            return _prefixed(dedented(line, indent_columns(line.text)), marker)
        if _HTML_HEADING.fullmatch(outside):
            return replace(line, title=True)
        return line

    def _html_list(self, tag: re.Match[str]) -> None:
        """Keeps the HTML lists open (``_html_lists``) as of ``tag``, an `<ol>`, `<ul>` or
        their close."""
        if not tag.group(1):
            self._html_lists.append(tag.group(2).casefold())
        elif self._html_lists:
            self._html_lists.pop()

    def _inline(self, line: SourceLine, number: int, *, title: bool = False) -> SourceLine:
        """``line`` without its inline markup (``markup.inline_markup``)."""
        cut = markup.inline_markup(
            line.text,
            code_spans=[match.span() for match in CODE_SPAN.finditer(line.text)],
            components=self._components,
            keep_highlights=self._keep_highlights,
        )
        if cut.warning:
            self.warnings.append(f"line {number}: {cut.warning}")
        if not (cut.drop or cut.breaks):
            return line
        return _cut(line, cut.drop, anchor=cut.anchor, breaks=cut.breaks, title=title or cut.title)


_SHORTCODE_OPEN = re.compile(r"\{\{[<%]")
# `<pre>` or `<pre class="x"><code>` alone on its line, or its close (group 1)
_PRE_TAG = re.compile(
    r"[ \t]*(?:<pre(?:[ \t][^<>]*)?>(?:<code(?:[ \t][^<>]*)?>)?|(</)(?:code></)?pre>)[ \t]*"
)
# A `<head>` element alone on its line, as Docusaurus pages set their <head> metadata
_HEAD_OPEN = re.compile(r"[ \t]*<head(?:[ \t][^<>]*)?>[ \t]*")
# The line after an HTML element's open tag that goes on: an attribute, or the tag's end
_HTML_ATTRIBUTES_GO_ON = re.compile(r"[ \t]*(?:[\w:.-]+[ \t]*(?:=|/?>|$)|/?>)")
_ERB_OPEN = re.compile(r"<%(?!%)")  # `<%%` writes a literal `<%`
# An HTML list item's tag opening a line (its text in group 1's place on), an HTML list's tag
# (group 1: a close; group 2: the list's kind), a heading element alone on a line
_HTML_ITEM = re.compile(r"[ \t]*(?:<[uo]l\b[^<>]*>[ \t]*)*<li(?:[ \t][^<>]*)?>()", re.IGNORECASE)
_HTML_LIST_TAG = re.compile(r"<(/?)([uo]l)\b[^<>]*>", re.IGNORECASE)
# An HTML table's open tag opening a line, any table's open tag, its close, a row's open tag
_HTML_TABLE_OPEN = re.compile(r"[ \t]*<table\b[^<>]*>", re.IGNORECASE)
_HTML_TABLE_OPEN_ANYWHERE = re.compile(r"<table\b", re.IGNORECASE)
_HTML_TABLE_CLOSE = re.compile(r"</table\s*>", re.IGNORECASE)
_HTML_ROW_OPEN = re.compile(r"<tr\b[^<>]*>", re.IGNORECASE)
_HTML_HEADING = re.compile(r"[ \t]*<(h[1-6])\b[^<>]*>.*</\1>[ \t]*", re.IGNORECASE)
# Python-Markdown's codehilite: the first line of an indented block naming its language
# (`::yaml`, `:::python`, `#!bash`; a shebang's path, `#!/bin/sh`, is code)
_CODEHILITE_LANGUAGE = re.compile(r"(?:::+|#!)([\w+#.-]+)")
# Shortcodes whose body a page shows as a code block: Hugo's `highlight`, and the `code-toggle`
# (one configuration shown as TOML, YAML and JSON) and `code` of Hugo's own documentation.
CODE_SHORTCODES = ("code-toggle", "highlight", "code")


@dataclass(frozen=True)
class _ShortcodeTag:
    indent: str
    closes: bool
    name: str
    arguments: str


def _code_shortcode(raw: str) -> _ShortcodeTag | None:
    """The tag of a code shortcode (``CODE_SHORTCODES``) that ``raw`` is alone on, else None;
    an HTML `<pre>` (or `</pre>`) alone on its line is read as one, named "pre": the page shows
    what it holds as preformatted text, a console session or a listing."""
    if "pre>" in raw:
        pre = _PRE_TAG.fullmatch(raw)
        if pre is not None:
            indent = raw[: len(raw) - len(raw.lstrip())]
            return _ShortcodeTag(indent, bool(pre.group(1)), "pre", "")
    if "{{" not in raw:
        return None
    tag = markup.SHORTCODE.fullmatch(raw.strip())
    if tag is None or tag.group(3) not in CODE_SHORTCODES:
        return None
    indent = raw[: len(raw) - len(raw.lstrip())]
    return _ShortcodeTag(indent, bool(tag.group(2)), tag.group(3), tag.group(4))


_YAML_KEY = re.compile(r"[ \t]*(?:- )?[\w.\-\"']+:(?:[ \t]|$)")


def _line_after(text: str, newline: int) -> str:
    """The line after the one ending at ``newline`` (-1: none)."""
    if newline < 0:
        return ""
    end = text.find("\n", newline + 1)
    return text[newline + 1 : end if end >= 0 else len(text)]


def _shortcode_language(arguments: str) -> str:
    """The language a `highlight` or `code` shortcode names: its first argument without `=`
    (`{{< highlight go "linenos=table" >}}`), or its `lang=` argument."""
    for argument in arguments.split():
        if argument.startswith("lang="):
            return argument[len("lang=") :].strip("\"'")
    first = arguments.split()[0].strip("\"'") if arguments.split() else ""
    return first if first and "=" not in first else ""


def _config_language(first: str) -> str:
    """The format of a configuration whose first line is ``first``: JSON, YAML or, as Hugo's
    documentation writes most of them, TOML."""
    first = first.strip()
    if first.startswith("{"):
        return "json"
    if first == "---" or _YAML_KEY.match(first):
        return "yaml"
    return "toml"


def _unclosed_tag(text: str) -> tuple[int, str] | None:
    """Where the first tag that the line does not close starts, outside code, and what closes
    it: a shortcode's `>}}` or `%}}`, an ERB tag's `%>`, an HTML element's `>` (`<a` then its
    `href="…">` on the next line; the tags a line closes are dropped before, by
    ``markup.inline_markup``); None when no tag is left open."""
    openers = [
        (match.start(), "%}}" if match.group().endswith("%") else ">}}")
        for match in _SHORTCODE_OPEN.finditer(text)
    ] + [(match.start(), "%>") for match in _ERB_OPEN.finditer(text)]
    html = markup.HTML_OPENER.search(text) if "<" in text else None
    if html is not None:
        openers.append((html.start(), ">"))
    if not openers:
        return None
    code = markup.Spans.of([match.span() for match in CODE_SPAN.finditer(text)])
    for start, close in sorted(openers):
        if not code.holds(start):
            return start, close
    return None


def fence_end(lines: Sequence[SourceLine], index: int) -> int:
    """Where the fenced block opened at ``lines[index]`` ends: the index after its closing fence,
    or after its last line when the text ends first."""
    end = index + 1
    while end < len(lines) and lines[end].fence is FenceRole.BODY:
        end += 1
    if end < len(lines) and lines[end].fence is FenceRole.CLOSE:
        end += 1
    return end


def code_blocks(lines: Sequence[SourceLine]) -> list[range]:
    """The fenced code blocks of ``lines`` (``scan_lines``), each the range of its lines,
    fences included."""
    blocks = []
    index = 0
    while index < len(lines):
        if lines[index].fence is FenceRole.OPEN:
            end = fence_end(lines, index)
            blocks.append(range(index, end))
            index = end
        else:
            index += 1
    return blocks


def item_text_column(text: str) -> int | None:
    """The column a list item's text starts at, if ``text`` opens an item: past its marker and
    the one to four blanks after it (CommonMark; an item with no text on its line, one)."""
    item = ITEM_MARKER.match(text)
    if item is None:
        return None
    after = len(item.group(3).expandtabs(4)) if item.end() < len(text) else 1
    return indent_columns(text) + len(item.group(2)) + (after if 1 <= after <= 4 else 1)


def dedented(line: SourceLine, columns: int) -> SourceLine:
    """``line`` without up to ``columns`` of its indent (all of it, if it has less)."""
    chars = markup.indent_chars(line.text, columns)
    if chars is None:
        chars = len(line.text) - len(line.text.lstrip(" \t"))
    return _cut(line, ((0, chars),)) if chars else line


def indent_columns(text: str) -> int:
    """The columns of indent ``text`` starts with, a tab counting to the next multiple of 4."""
    expanded = text.expandtabs(4)
    return len(expanded) - len(expanded.lstrip(" "))


def _indent_chars(text: str, columns: int) -> int:
    """How many leading characters of ``text`` make up ``columns`` of indent (0 if fewer)."""
    return markup.indent_chars(text, columns) or 0


def _blank(position: int) -> SourceLine:
    return SourceLine(position, "", (), FenceRole.NONE)


def _fence_length(line: str) -> int:
    """How long a run of backticks that could fence code opens ``line`` (0: none)."""
    run = _FENCE_RUN.fullmatch(line)
    return len(run.group(1)) if run and run.group(1)[0] == "`" else 0


def _prefixed(line: SourceLine, marker: str) -> SourceLine:
    """``line`` with ``marker`` written before its text, each of the marker's characters
    standing for where that text starts."""
    at = line.source_offset(0)
    runs = tuple((index, at) for index in range(len(marker)))
    runs += tuple((index + len(marker), offset) for index, offset in line.runs)
    return replace(line, text=marker + line.text, runs=runs)


def _written(position: int, text: str, fence: FenceRole) -> SourceLine:
    """A line the scanner writes in place of a blank one (a fence around indented code): each
    of its characters stands for where that line is."""
    return _prefixed(SourceLine(position, "", (), fence), text)


def _cut(
    line: SourceLine,
    drop: tuple[tuple[int, int], ...],
    *,
    anchor: str = "",
    breaks: tuple[tuple[int, int], ...] = (),
    title: bool = False,
) -> SourceLine:
    """`line` without the `drop` spans of its text and with each of the `breaks` spans read as
    one space (mapped to the span's first offset), each kept character still mapped to the
    offset it came from; `title` when what is left is a box's title."""
    kept: list[str] = []
    runs: list[tuple[int, int]] = []
    previous = -2
    spans, span = markup.Spans.of((*drop, *breaks)).merged, 0
    spaces = {start for start, _ in breaks}
    for index, character in enumerate(line.text):
        while span < len(spans) and spans[span][1] <= index:
            span += 1
        if span < len(spans) and spans[span][0] <= index:
            if index not in spaces:
                continue
            character = " "
        offset = line.source_offset(index)
        if offset != previous + 1:
            runs.append((len(kept), offset))
        kept.append(character)
        previous = offset
    return SourceLine(
        line.start, "".join(kept), tuple(runs), line.fence, anchor or line.anchor, title
    )


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
