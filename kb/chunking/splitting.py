"""Splitting a block that is too big for one chunk into pieces that each fit a token budget.

A block is cut at the most natural boundary that works, coarsest first: list items or table rows,
then paragraphs, sentences, lines, whitespace, and only as a last resort a hard cut between
characters. Code keeps its fence on every piece and tables keep their header, so each piece is
still valid Markdown that renders and reads on its own.

Every piece is measured with the real token counter before it is accepted; the search for the
longest piece that fits gallops and then bisects over the candidate cut points, so splitting a
block costs a logarithmic number of counts per piece rather than one count per word.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kb.chunking.lines import dedented, item_text_column
from kb.chunking.sentences import sentence_ends
from kb.chunking.structure import (
    CELL_BORDER,
    Block,
    BlockKind,
    FenceRole,
    SourceLine,
    indent_width,
    is_list_item,
    is_table_delimiter_row,
    make_block,
    table_cells,
)

TokenCounter = Callable[[str], int]
CutFinder = Callable[[str, int, int], list[int]]
Trim = Callable[[str, int, int], tuple[int, int]]

_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")
_LINE_BREAK = re.compile(r"\n")
_WHITESPACE = re.compile(r"\s+")
_FENCE = re.compile(r" {0,3}(?:`{3,}|~{3,})")


@dataclass(frozen=True)
class Piece:
    text: str
    start: int  # offset in the original text where the piece's source starts
    end: int  # offset in the original text where the piece's source ends (exclusive)
    tokens: int  # count_tokens(text)


def _cuts_after(pattern: re.Pattern[str]) -> CutFinder:
    def find(text: str, start: int, end: int) -> list[int]:
        return [match.end() for match in pattern.finditer(text, start, end)]

    return find


_PARAGRAPHS = _cuts_after(_PARAGRAPH_BREAK)
_SENTENCES: CutFinder = sentence_ends
_LINES = _cuts_after(_LINE_BREAK)
_WORDS = _cuts_after(_WHITESPACE)

_PROSE_CUTS: tuple[CutFinder, ...] = (_PARAGRAPHS, _SENTENCES, _LINES, _WORDS)
# a row too long for a piece is cut between its cells before it is cut between words
_CELLS = _cuts_after(CELL_BORDER)
_ROW_CUTS: tuple[CutFinder, ...] = (_LINES, _CELLS, _WORDS)
# A row's first cell longer than this is not repeated over the rest of the row: AutoHotkey's
# function index has a first cell of 598 characters (a list of links).
ROW_KEY_TOKENS = 24
_CODE_CUTS: tuple[CutFinder, ...] = (_LINES, _WORDS)


def _trim_prose(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _trim_code(text: str, start: int, end: int) -> tuple[int, int]:
    """Drop blank lines at either end but keep the indentation of the first line: it is code."""
    index = start
    while index < end and text[index].isspace():
        if text[index] == "\n":
            start = index + 1
        index += 1
    if index == end:
        return end, end
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def split_block(
    block: Block, budget: int, count_tokens: TokenCounter, *, tokens: int | None = None
) -> list[Piece]:
    """Pieces of `block`, each counting at most `budget` tokens where the block's shape allows it.

    `tokens` is `count_tokens(block.text)` if the caller has it. The tokens of a re-fenced code
    piece or a table piece with its repeated header are the content's count plus the fence's or
    header's: an estimate, which the chunker checks with one exact count per chunk.
    """
    if block.kind is BlockKind.CODE:
        return _split_code(block, budget, count_tokens, tokens)
    if block.kind is BlockKind.TABLE:
        return _split_table(block, budget, count_tokens, tokens)
    if block.kind is BlockKind.LIST and any(line.fence is FenceRole.OPEN for line in block.lines):
        return _split_list_with_code(block, budget, count_tokens)
    cuts = _PROSE_CUTS
    if block.kind is BlockKind.LIST:
        cuts = (_list_item_starts(block), *_PROSE_CUTS)
    elif block.kind is BlockKind.HEADING:
        cuts = (_WORDS,)
    spans = _split_span(
        block.text, 0, len(block.text), budget, count_tokens, cuts, _trim_prose,
        _if_untrimmed(block.text, tokens),
    )  # fmt: skip
    return [_piece(block, start, end, piece_tokens) for start, end, piece_tokens in spans]


def split_text(
    text: str, budget: int, count_tokens: TokenCounter, *, tokens: int | None = None
) -> list[tuple[str, int]]:
    """(piece, tokens) for plain `text` split as prose; each piece counts at most `budget`."""
    spans = _split_span(
        text, 0, len(text), budget, count_tokens, _PROSE_CUTS, _trim_prose,
        _if_untrimmed(text, tokens),
    )  # fmt: skip
    return [(text[start:end], piece_tokens) for start, end, piece_tokens in spans]


def _estimate_without(tokens: int | None, overhead: int) -> int | None:
    """Tokens of a block's content, estimated as the block's tokens minus its fence or header.

    Like every sum of parts this is an estimate; the chunker's final count of each chunk is what
    enforces the budget, so an estimate only ever costs a re-split, never an oversized chunk.
    """
    return None if tokens is None else max(tokens - overhead, 1)


def _if_untrimmed(text: str, tokens: int | None) -> int | None:
    """`tokens` if they still describe `text` after trimming, so it need not be counted again."""
    return tokens if _trim_prose(text, 0, len(text)) == (0, len(text)) else None


def _piece(block: Block, start: int, end: int, tokens: int) -> Piece:
    source_start, source_end = block.source_span(start, end)
    return Piece(block.text[start:end], source_start, source_end, tokens)


def _list_item_starts(block: Block) -> CutFinder:
    """Cut points before each item of the list's outermost level, so nested items stay together."""
    outer_indent = indent_width(block.lines[0].text)
    starts = [
        offset
        for line, offset in zip(block.lines[1:], block.line_offsets[1:], strict=True)
        if line.fence is FenceRole.NONE
        and is_list_item(line.text)
        and indent_width(line.text) <= outer_indent
    ]

    def find(text: str, start: int, end: int) -> list[int]:
        return [offset for offset in starts if start < offset < end]

    return find


def _split_list_with_code(block: Block, budget: int, count_tokens: TokenCounter) -> list[Piece]:
    """Pieces of a list that holds fenced code: as many whole items as fit, as for any list; an
    item too big alone is cut around its code (``_split_item``), never inside a fence."""
    starts = _list_item_starts(block)(block.text, 0, len(block.text))
    bounds = [0, *starts, len(block.text)]
    pieces: list[Piece] = []
    gathered: tuple[int, int, int] | None = None  # start, end and tokens of the items gathered
    for start, end in itertools.pairwise(bounds):
        start, end = _trim_prose(block.text, start, end)
        if start >= end:
            continue
        if gathered is not None:
            tokens = count_tokens(block.text[gathered[0] : end])
            if tokens <= budget:
                gathered = (gathered[0], end, tokens)
                continue
            pieces.append(_piece(block, *gathered))
        tokens = count_tokens(block.text[start:end])
        gathered = (start, end, tokens) if tokens <= budget else None
        if gathered is None:
            pieces += _split_item(block, start, end, budget, count_tokens)
    if gathered is not None:
        pieces.append(_piece(block, *gathered))
    return pieces


def _split_item(
    block: Block, start: int, end: int, budget: int, count_tokens: TokenCounter
) -> list[Piece]:
    """Pieces of the item at ``block.text[start:end]``: its text and each block of code fenced
    under it apart, each split further only when too big alone. What follows the item's first
    lines reads as the item's text, out of the list: dedented to the column the item's text
    starts at, and each fenced block to its fence's own indent, so code stays code."""
    first = bisect.bisect_right(block.line_offsets, start) - 1
    last = bisect.bisect_right(block.line_offsets, end - 1)
    lines = block.lines[first:last]
    column = item_text_column(lines[0].text) or indent_width(lines[0].text)
    pieces: list[Piece] = []
    for run, code in _fence_runs(lines):
        indent = indent_width(run[0].text)
        if code:
            part = make_block(BlockKind.CODE, [dedented(line, indent) for line in run])
        elif run[0] is lines[0]:
            part = make_block(BlockKind.LIST, list(run))
        else:
            text_lines = [dedented(line, max(indent, column)) for line in run]
            kind = BlockKind.LIST if is_list_item(text_lines[0].text) else BlockKind.PARAGRAPH
            part = make_block(kind, text_lines)
        tokens = count_tokens(part.text)
        if tokens <= budget:
            pieces.append(Piece(part.text, part.start, part.end, tokens))
        else:
            pieces += split_block(part, budget, count_tokens, tokens=tokens)
    return pieces


def _fence_runs(lines: Sequence[SourceLine]) -> list[tuple[Sequence[SourceLine], bool]]:
    """``lines`` as runs of text and of fenced code (whether each is code), blank lines at
    either end of a run left out."""
    runs: list[tuple[Sequence[SourceLine], bool]] = []
    index = 0
    while index < len(lines):
        code = lines[index].fence is not FenceRole.NONE
        end = index + 1
        while end < len(lines):
            line = lines[end]
            if code and (line.fence is FenceRole.NONE or line.fence is FenceRole.OPEN):
                break
            if not code and line.fence is not FenceRole.NONE:
                break
            end += 1
            if code and line.fence is FenceRole.CLOSE:
                break
        run = lines[index:end]
        while run and not run[-1].text.strip():
            run = run[:-1]
        while run and not run[0].text.strip():
            run = run[1:]
        if run:
            runs.append((run, code))
        index = end
    return runs


def _split_code(
    block: Block, budget: int, count_tokens: TokenCounter, tokens: int | None
) -> list[Piece]:
    lines = block.lines
    opener = lines[0].text
    fence = _FENCE.match(opener)
    closed = len(lines) > 1 and lines[-1].fence is FenceRole.CLOSE
    content_end = len(lines) - 1 if closed else len(lines)
    if fence is None or content_end <= 1:
        return _split_plain(block, budget, count_tokens, _CODE_CUTS, _trim_code)
    closer = fence.group()
    fence_tokens = count_tokens(f"{opener}\n{closer}")
    content_budget = budget - fence_tokens
    if content_budget < budget // 2:  # re-fencing would cost more than the code it carries
        return _split_plain(block, budget, count_tokens, _CODE_CUTS, _trim_code)
    last = content_end - 1
    start = block.line_offsets[1]
    end = min(block.line_offsets[last] + len(lines[last].text), len(block.text))
    spans = _split_span(
        block.text, start, end, content_budget, count_tokens, _CODE_CUTS, _trim_code,
        _estimate_without(tokens, fence_tokens),
    )  # fmt: skip
    return _wrapped_pieces(block, spans, opener + "\n", "\n" + closer, fence_tokens)


def _wrapped_pieces(
    block: Block,
    spans: list[tuple[int, int, int]],
    prefix: str,
    suffix: str,
    wrapper_tokens: int,
) -> list[Piece]:
    """Each span of `block` as a piece of its own between `prefix` and `suffix` (a re-opened
    fence, a repeated table header). The first and last pieces claim the block's edges in the
    source, which the wrapper they repeat came from."""
    pieces = []
    for number, (start, end, span_tokens) in enumerate(spans):
        source_start, source_end = block.source_span(start, end)
        if number == 0:
            source_start = block.start
        if number == len(spans) - 1:
            source_end = block.end
        text = f"{prefix}{block.text[start:end]}{suffix}"
        pieces.append(Piece(text, source_start, source_end, span_tokens + wrapper_tokens))
    return pieces


def _split_table(
    block: Block, budget: int, count_tokens: TokenCounter, tokens: int | None
) -> list[Piece]:
    lines = block.lines
    has_header = len(lines) >= 3 and is_table_delimiter_row(lines[1].text)
    if has_header:
        rows_start = block.line_offsets[2]
        header = block.text[: rows_start - 1]
        header_tokens = count_tokens(header)
        row_budget = budget - header_tokens
        if row_budget >= budget // 2:  # else the repeated header would crowd out the rows
            estimate = _estimate_without(tokens, header_tokens)
            spans = _split_span(
                block.text, rows_start, len(block.text), row_budget, count_tokens, _ROW_CUTS,
                _trim_prose, estimate,
            )  # fmt: skip
            pieces = _wrapped_pieces(block, spans, header + "\n", "", header_tokens)
            if not any(_inside_row(block.text, start) for start, _, _ in spans[1:]):
                return pieces
            # a row too long for a piece goes on in the next one under its first cell: room
            # is kept for the longest first cell repeated and the empty cells that place the rest
            rows = block.text[rows_start:]
            keys = _row_keys(rows, count_tokens)
            key_budget = row_budget - max(keys.values(), default=0) - _widest_row(rows) - 1
            if key_budget < budget // 2:
                return pieces
            spans = _split_span(
                block.text, rows_start, len(block.text), key_budget, count_tokens, _ROW_CUTS,
                _trim_prose, estimate,
            )  # fmt: skip
            pieces = _wrapped_pieces(block, spans, header + "\n", "", header_tokens)
            return [
                _continuing(piece, header, _row_continued(block.text, start, keys), count_tokens)
                for piece, (start, _, _) in zip(pieces, spans, strict=True)
            ]
    return _split_plain(block, budget, count_tokens, _ROW_CUTS, _trim_prose)


def _inside_row(text: str, start: int) -> bool:
    """Whether a piece starting at ``text[start]`` starts inside a table row, not at its start."""
    return bool(text[text.rfind("\n", 0, start) + 1 : start].strip())


def _row_continued(text: str, start: int, keys: dict[str, int]) -> str:
    """What a table piece starting at ``text[start]`` needs before it when it starts inside a
    row: the row's first cell (when it is among ``keys``, those short enough to repeat) and an
    empty cell for each cell already in the piece before, so the rest of the row reads under
    its own columns and names its row ("| standard.tiny | | | | 0.26 |", not a row whose first
    cell is the end of a picture's title: CSC's flavor tables, whose rows hold three pictures
    each). "" when the piece starts a row."""
    if not _inside_row(text, start):
        return ""
    before = text[text.rfind("\n", 0, start) + 1 : start]
    piped = before.lstrip().startswith("|")
    lead = "| " if piped else ""
    # the cells the piece before holds, the last one open: its rest starts this piece
    given = len(CELL_BORDER.findall(before)) - piped
    if given == 0:  # cut inside the first cell: the rest is the row's first cell
        return lead
    key = table_cells(before)[0]
    return f"{lead}{key if key in keys else ''} |{' |' * (given - 1)} "


def _row_keys(rows: str, count_tokens: TokenCounter) -> dict[str, int]:
    """The rows' first cells short enough to repeat, with their tokens."""
    counted = {key: count_tokens(key) for key in {table_cells(row)[0] for row in rows.split("\n")}}
    return {key: tokens for key, tokens in counted.items() if key and tokens <= ROW_KEY_TOKENS}


def _widest_row(rows: str) -> int:
    """The most cell borders a row has: the empty cells a continued row may need."""
    return max((len(CELL_BORDER.findall(row)) for row in rows.split("\n")), default=0)


def _continuing(piece: Piece, header: str, continued: str, count_tokens: TokenCounter) -> Piece:
    if not continued:
        return piece
    text = f"{header}\n{continued}{piece.text[len(header) + 1 :]}"
    return Piece(text, piece.start, piece.end, piece.tokens + count_tokens(continued))


def _split_plain(
    block: Block,
    budget: int,
    count_tokens: TokenCounter,
    cuts: tuple[CutFinder, ...],
    trim: Trim,
) -> list[Piece]:
    spans = _split_span(block.text, 0, len(block.text), budget, count_tokens, cuts, trim)
    return [_piece(block, start, end, tokens) for start, end, tokens in spans]


def _split_span(
    text: str,
    start: int,
    end: int,
    budget: int,
    count_tokens: TokenCounter,
    cuts: tuple[CutFinder, ...],
    trim: Trim,
    tokens: int | None = None,
) -> list[tuple[int, int, int]]:
    """(start, end, tokens) spans covering `text[start:end]`, each within `budget` tokens.

    Packs as much as fits between cut points of the first boundary kind in `cuts`; a stretch
    with no such cut point that fits falls through to the next kind, and after the last kind the
    cut may fall between any two characters (a base64 blob has no better boundary).
    `tokens`, when known, is the count of the trimmed span.
    """
    start, end = trim(text, start, end)
    if start >= end:
        return []
    if tokens is None:
        tokens = count_tokens(text[start:end])
    if tokens <= budget:
        return [(start, end, tokens)]
    ends: Sequence[int]
    if cuts:
        ends = [cut for cut in cuts[0](text, start, end) if start < cut < end]
        if not ends:
            return _split_span(text, start, end, budget, count_tokens, cuts[1:], trim, tokens)
        ends.append(end)
    else:
        ends = range(start + 1, end + 1)
    chars_per_token = (end - start) / tokens
    spans: list[tuple[int, int, int]] = []
    position = start
    index = 0
    while index < len(ends):

        def measure(cut: int, position: int = position) -> int:
            piece_start, piece_end = trim(text, position, cut)
            return count_tokens(text[piece_start:piece_end]) if piece_start < piece_end else 0

        chosen, measured = _furthest_fit(ends, index, measure, budget, position, chars_per_token)
        if chosen is None and cuts:
            spans += _split_span(
                text, position, ends[index], budget, count_tokens, cuts[1:], trim, measured
            )
            chosen = index
        else:
            # A single character over the budget has nothing smaller to become; the caller's
            # final count reports it instead of emitting an oversized chunk.
            chosen = index if chosen is None else chosen
            piece_start, piece_end = trim(text, position, ends[chosen])
            if piece_start < piece_end:
                spans.append((piece_start, piece_end, measured))
        position = ends[chosen]
        index = chosen + 1
    return spans


def _furthest_fit(
    ends: Sequence[int],
    first: int,
    measure: Callable[[int], int],
    budget: int,
    position: int,
    chars_per_token: float,
) -> tuple[int | None, int]:
    """(index, tokens) of a cut in `ends[first:]` whose piece from `position` fits the budget.

    Any cut whose piece reaches 90% of the budget is taken; otherwise the furthest one that
    fits. The search guesses where the budget runs out from the token density measured so
    far and interpolates between the pieces known to fit and to overflow, so a piece usually
    costs three or four counts however long the text; after a few guesses it bisects, which
    bounds the worst case. Returns (None, tokens of the first piece) when not even that fits.
    Every piece returned was measured, so a counter that is not monotonic costs packing
    density, never the budget.
    """
    enough = budget - budget // 10
    aim = budget - budget // 20  # a little under: an overshoot costs one more count
    low: int | None = None
    low_tokens = 0
    high, high_tokens = len(ends), 0
    probe = _index_at(ends, position + aim * chars_per_token, first, high)
    guesses = 0
    while True:
        tokens = measure(ends[probe])
        if tokens <= budget:
            low, low_tokens = probe, tokens
        else:
            high, high_tokens = probe, tokens
            if probe == first:
                return None, tokens
            if low is None:
                probe = first
                continue
        if low is None or low_tokens >= enough or high - low <= 1:
            break
        guesses += 1
        if high == len(ends):  # no overflow seen yet: extrapolate the density of what fits
            density = (ends[low] - position) / low_tokens if low_tokens else chars_per_token
            probe = _index_at(ends, position + aim * density, low + 1, high)
            if guesses > 4:
                probe = min(max(probe, 2 * low - first + 1), high - 1)
        elif guesses > 4:
            probe = (low + high) // 2
        else:
            share = (aim - low_tokens) / max(high_tokens - low_tokens, 1)
            target = ends[low] + share * (ends[high] - ends[low])
            probe = _index_at(ends, target, low + 1, high)
    return low, low_tokens


def _index_at(ends: Sequence[int], offset: float, low: int, high: int) -> int:
    """Index in `ends[low:high]` of the last cut at or before `offset` (at least `low`)."""
    index = bisect.bisect_right(ends, offset, low, high) - 1
    return min(max(index, low), high - 1)


def longest_fitting(
    candidates: Sequence[int], first: int, fits: Callable[[int], int | None]
) -> tuple[int, int] | None:
    """(index, tokens) of the furthest candidate from `first` on whose piece still fits.

    Gallops (1, 2, 4, ... candidates ahead) and then bisects, assuming that a longer piece never
    has fewer tokens; every answer returned was measured, so a counter that breaks the
    assumption costs packing density, never the budget.
    """
    tokens = fits(candidates[first])
    if tokens is None:
        return None
    low, high, best = first, len(candidates), tokens
    step = 1
    while low + step < high:
        probe = fits(candidates[low + step])
        if probe is None:
            high = low + step
            break
        low, best = low + step, probe
        step *= 2
    while high - low > 1:
        middle = (low + high) // 2
        probe = fits(candidates[middle])
        if probe is None:
            high = middle
        else:
            low, best = middle, probe
    return low, best
