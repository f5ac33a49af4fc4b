"""Packing a document's sections into chunks that fit the embedding model's window.

The pipeline: sections by heading (fence- and comment-aware, see `structure`), atomic blocks,
each section's blocks packed greedily up to the target with block-level overlap (a chunk never
spans two sections, however short: see ``ChunkLimits.for_window``), oversized blocks split (see
`splitting`), and every chunk measured exactly as the model will read it. Block token counts
are summed while packing because counting each block once is cheap; the sum is only an
estimate of what the joined text counts, so each chunk is re-counted once at the end and split
further if the estimate was wrong. That final count is what makes the budget a guarantee rather
than a hope.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kb.chunking.splitting import longest_fitting, split_block, split_text
from kb.chunking.structure import Block, Section, split_sections

# Bump whenever the chunks produced for the same input can change: it is part of the key that
# decides whether a document must be re-embedded.
# 28: a component closed on itself inside a sentence (`Press <Key k="enter" /> to…`) reads as
# the words its attributes give.
# 27: an HTML `<table>` opening a line is read as the pipe table it shows, a row per line.
# 26: an HTML `<li>` opening a line is an item of its `<ul>` or `<ol>`, and a heading element
# alone on its line (`<h3>…</h3>`) a line of its own.
# 25: indented code (four columns past the text it stands under, after a blank line) is code,
# held as a fenced block, a codehilite `::yaml` first line naming its language.
# 24: a MyST diagram (`{mermaid}`, `{graphviz}`) is a picture, not code, as in reStructuredText.
# 23: a MyST directive we do not know is read as its content reads: prose as text, else code.
# 22: a table row too long for a piece goes on in the next under its first cell, in its columns.
# 21: a table's delimiter row padded past three dashes a cell is read as its rule (`|---|:-:|`).
# 20: a box nested in a box (a content tab in an admonition) is read from its own indent, and
# a fence under an item reads so whatever the item's marker (Python-Markdown's four spaces).
# 19: a fence indented under a list item (MkDocs' four spaces) is code and ends with the item;
# a list too big for one chunk is cut around the code fenced under its items, never inside it,
# and a piece that starts inside an item reads as the item's text.
# 18: a line-end attribute's value stops at its brace (a formula's `_{k=0}^{…}` is text).
# 17: an MDX export is not text, up to the blank line that ends it.
# 16: MyST roles read as Sphinx shows them, MyST targets and a span's or a code span's
# attributes are not text.
# 15: a link's or a picture's attributes, MkDocs Material's icons and a directive's attributes
# are not text, and a box's title loses its inline markup as other text does.
# 14: an include's title argument is not a box's title; 13: a component's `name` is its title;
# 12: a titled template tag (GitBook's `{% tab title="…" %}`) keeps its title; 11: MDX
# components written as JSX are components without an import, and text under them is not
# indented code; 10: a box's title is a block of its own.
# 9: HTML tags a page uses for emphasis, layout and media are not text, a <head> is not
# either, a <pre> is a code block; 8: an ERB tag over several lines is not text, and a tag
# nothing closes is; 7: ERB tags are not text; 6: a code shortcode's body is a code block
CHUNKER_VERSION = "28"

# A title longer than this is cut in the embedding prefix. Titles are short in practice; the cap
# exists so that a pathological title cannot leave no room for the text it is meant to label.
TITLE_PREFIX_MAX_CHARS = 120

# The chunk sizes of ``ChunkLimits.for_window``: the target and the ceiling a long window gets
# (bigger chunks dilute a vector), the most overlap a chunk repeats, and the smallest window
# that leaves a useful chunk. ``SPECIAL_TOKENS`` are the two the model adds to every input
# ([CLS] and [SEP]), which an embedder's ``count_tokens`` leaves out.
TARGET_CHUNK_TOKENS = 350
MAX_CHUNK_TOKENS = 500
MAX_OVERLAP_TOKENS = 40
MIN_WINDOW_TOKENS = 16
SPECIAL_TOKENS = 2

TokenCounter = Callable[[str], int]
Path = tuple[str, ...]


class ChunkingError(ValueError):
    """This document cannot be chunked for this model: its title leaves no room in the window
    for any text. The one error that means "the input cannot fit"; anything else the chunker
    raises is a bug."""


@dataclass(frozen=True)
class ChunkLimits:
    """Token limits for one embedding model; each limit counts the prefix and the text together."""

    target_tokens: int  # pack blocks up to about this
    max_tokens: int  # never exceeded
    overlap_tokens: int  # trailing whole blocks repeated at the start of the next chunk

    def __post_init__(self) -> None:
        if not 0 < self.target_tokens <= self.max_tokens:
            raise ValueError(
                f"ChunkLimits needs 0 < target_tokens <= max_tokens "
                f"(got target_tokens={self.target_tokens}, max_tokens={self.max_tokens})"
            )
        if not 0 <= self.overlap_tokens < self.target_tokens:
            raise ValueError(
                f"ChunkLimits needs 0 <= overlap_tokens < target_tokens "
                f"(got overlap_tokens={self.overlap_tokens}, target_tokens={self.target_tokens})"
            )

    @classmethod
    def for_window(cls, window_tokens: int) -> ChunkLimits:
        """Limits for a model that reads `window_tokens` word pieces, its 2 special tokens included.

        A long window gets the 350/500 defaults: bigger chunks dilute a vector, so there is no
        point filling a 32k window. A short window is filled to its end (all-MiniLM-L6-v2: 256 →
        max 254) with the target a fifth below it, and overlap shrinks with the target so that
        overlap never dominates a chunk.

        Sections are never merged, whatever the limits: a short, specific section (one
        setting, one error code, one fee) keeps a vector and a keyword entry of its own, found by
        its own heading and words. Merging small siblings under their parent's heading cost the
        vector leg 0.08-0.14 nDCG@10 on real documentation against the same model per section.
        """
        if window_tokens < MIN_WINDOW_TOKENS:
            raise ValueError(
                f"window_tokens must be at least {MIN_WINDOW_TOKENS} (got {window_tokens})"
            )
        max_tokens = min(MAX_CHUNK_TOKENS, window_tokens - SPECIAL_TOKENS)
        target_tokens = min(TARGET_CHUNK_TOKENS, max_tokens * 4 // 5)
        return cls(
            target_tokens=target_tokens,
            max_tokens=max_tokens,
            overlap_tokens=min(MAX_OVERLAP_TOKENS, target_tokens // 5),
        )


@dataclass(frozen=True)
class ChunkDraft:
    ordinal: int  # 0-based within the document
    heading_path: str  # "Refund Policy > Eligibility"; "" for text before any heading
    text: str  # Markdown source of the chunk's blocks, comments removed, joined by "\n\n"
    char_start: int  # offset in the original body where the first block starts
    char_end: int  # offset in the original body where the last block ends (exclusive)
    token_count: int  # count_tokens(embedding_text(title, heading_path, text))


def embedding_text(title: str, heading_path: str, text: str) -> str:
    """What gets embedded: `"{title} > {heading_path}\\n\\n{text}"`, or `"{title}\\n\\n{text}"`.

    The label is what lets a chunk saying "within 30 days" land near a question about refunds.
    A heading path that already starts with the title (a page whose `# Title` repeats its front
    matter) is not prefixed with it again, and an over-long title is cut at a word boundary.
    """
    label = _prefix_title(title)
    if heading_path:
        if not label or heading_path == label or heading_path.startswith(f"{label} > "):
            label = heading_path
        else:
            label = f"{label} > {heading_path}"
    return f"{label}\n\n{text}" if label else text


def chunk_markdown(
    *, title: str, body: str, limits: ChunkLimits, count_tokens: TokenCounter
) -> list[ChunkDraft]:
    """Chunks of `body`, each within `limits.max_tokens` as the embedding model will read it.

    `count_tokens(text)` returns how many word pieces the model reads for `text`, without its
    special tokens. Raises ``ChunkingError`` only when the title leaves no room for any text.
    """
    sections = split_sections(body)
    if not any(section.blocks for section in sections):
        return []
    return _Chunker(title=title, limits=limits, count_tokens=count_tokens).chunk(sections)


def _prefix_title(title: str) -> str:
    title = " ".join(title.split())
    if len(title) <= TITLE_PREFIX_MAX_CHARS:
        return title
    cut = title.rfind(" ", 0, TITLE_PREFIX_MAX_CHARS + 1)
    return title[: cut if cut > TITLE_PREFIX_MAX_CHARS // 2 else TITLE_PREFIX_MAX_CHARS]


@dataclass(frozen=True)
class _Item:
    """A block (or a piece of an oversized one) on its way into a chunk."""

    text: str
    start: int
    end: int
    tokens: int
    path: Path


@dataclass(frozen=True)
class _Rendered:
    heading_path: str
    text: str
    start: int
    end: int
    tokens: int


class _Chunker:
    def __init__(self, *, title: str, limits: ChunkLimits, count_tokens: TokenCounter) -> None:
        self._title = title
        self._limits = limits
        self._count = count_tokens
        self._prefixes: dict[Path, tuple[str, int]] = {}
        self._block_tokens: dict[int, int] = {}
        if self._text_budget(()) < 1:
            raise ChunkingError(
                f"the title {title[:60]!r} leaves no room for text within "
                f"max_tokens={limits.max_tokens}"
            )

    def chunk(self, sections: list[Section]) -> list[ChunkDraft]:
        # A section with no blocks (a heading straight above its subsections) makes no chunk:
        # its heading lives on in the paths of the sections below it.
        planned: list[list[_Item]] = []
        for section in sections:
            if section.blocks:
                planned += self._pack(self._items(section))
        drafts: list[ChunkDraft] = []
        for items in planned:
            for rendered in self._emit(items):
                drafts.append(
                    ChunkDraft(
                        ordinal=len(drafts),
                        heading_path=rendered.heading_path,
                        text=rendered.text,
                        char_start=rendered.start,
                        char_end=rendered.end,
                        token_count=rendered.tokens,
                    )
                )
        return drafts

    def _items(self, section: Section) -> list[_Item]:
        items: list[_Item] = []
        for block in section.blocks:
            items += self._block_items(block, section.path)
        return items

    def _block_items(self, block: Block, path: Path) -> list[_Item]:
        tokens = self._tokens_of(block)
        max_text = self._text_budget(path)
        if tokens <= max_text:
            return [_Item(block.text, block.start, block.end, tokens, path)]
        # Pieces aim at the target like any packed chunk; only a prefix that leaves little room
        # under the target lets them grow towards the maximum.
        target_text = self._limits.target_tokens - self._prefix_tokens(path)
        budget = min(max_text, max(target_text, max_text // 2, 1))
        return [
            _Item(piece.text, piece.start, piece.end, piece.tokens, path)
            for piece in split_block(block, budget, self._count, tokens=tokens)
        ]

    def _pack(self, items: list[_Item]) -> list[list[_Item]]:
        """One section's items packed greedily up to the target, each new chunk opening with
        overlap. A section's last block or two may so make a short chunk of their own; joining
        them to the chunk before, or filling that chunk back to the target, stated fewer facts
        on three of seven answer sets (docs/answers.md, round thirty-three)."""
        target = self._limits.target_tokens
        chunks: list[list[_Item]] = []
        current: list[_Item] = []
        current_tokens = 0
        for item in items:
            if current and self._estimate(current_tokens, item) > target:
                chunks.append(current)
                current = self._overlap(current)
                current_tokens = sum(previous.tokens for previous in current)
                if current and self._estimate(current_tokens, item) > target:
                    current, current_tokens = [], 0
            current.append(item)
            current_tokens += item.tokens
        if current:
            chunks.append(current)
        return chunks

    def _estimate(self, current_tokens: int, item: _Item) -> int:
        return self._prefix_tokens(item.path) + current_tokens + item.tokens

    def _overlap(self, closed: list[_Item]) -> list[_Item]:
        """The previous chunk's trailing whole blocks worth at most `overlap_tokens`.

        A block bigger than the allowance is never cut to fit it, and the first block stays
        behind so that a chunk is never repeated whole. Packing is per section, so overlap never
        carries one section's text into another's chunk.
        """
        carried: list[_Item] = []
        total = 0
        for previous in reversed(closed[1:]):
            if total + previous.tokens > self._limits.overlap_tokens:
                break
            carried.insert(0, previous)
            total += previous.tokens
        return carried

    def _emit(self, items: list[_Item]) -> list[_Rendered]:
        """Chunks for `items`, each verified against max_tokens by an exact count.

        When the summed estimate was low (a counter that charges for the joins between blocks,
        or for the fences added to split code), trailing items move to the next chunk; an item
        that is too big alone is split again as plain text with a budget reduced by the excess.
        """
        emitted: list[_Rendered] = []
        remaining = items
        while remaining:
            take = len(remaining)
            rendered = self._render(remaining[:take])
            while rendered.tokens > self._limits.max_tokens and take > 1:
                take -= 1
                rendered = self._render(remaining[:take])
            if rendered.tokens <= self._limits.max_tokens:
                emitted.append(rendered)
                remaining = remaining[take:]
            else:
                excess = rendered.tokens - self._limits.max_tokens
                remaining = self._resplit(remaining[0], excess) + remaining[1:]
        return emitted

    def _resplit(self, item: _Item, excess: int) -> list[_Item]:
        budget = max(1, min(item.tokens - excess, item.tokens - 1))
        pieces = split_text(item.text, budget, self._count, tokens=item.tokens)
        if len(pieces) == 1 and pieces[0][0] == item.text:
            if len(item.text) < 2:
                raise ChunkingError(
                    f"cannot fit {item.text!r} after its prefix within "
                    f"max_tokens={self._limits.max_tokens}"
                )
            middle = len(item.text) // 2
            halves = (item.text[:middle], item.text[middle:])
            pieces = [(half, self._count(half)) for half in halves]
        return [_Item(text, item.start, item.end, tokens, item.path) for text, tokens in pieces]

    def _render(self, items: list[_Item]) -> _Rendered:
        label = self._label(items[0].path)  # every item of a chunk is of one section
        text = "\n\n".join(item.text for item in items)
        tokens = self._count(embedding_text(self._title, label, text))
        return _Rendered(label, text, items[0].start, items[-1].end, tokens)

    def _tokens_of(self, block: Block) -> int:
        key = id(block)
        if key not in self._block_tokens:
            self._block_tokens[key] = self._count(block.text)
        return self._block_tokens[key]

    def _prefix_tokens(self, path: Path) -> int:
        return self._prefix(path)[1]

    def _label(self, path: Path) -> str:
        return self._prefix(path)[0]

    def _text_budget(self, path: Path) -> int:
        return self._limits.max_tokens - self._prefix_tokens(path)

    def _prefix(self, path: Path) -> tuple[str, int]:
        """The heading path as stored and embedded, and the tokens of its embedding prefix.

        The path is shortened if it would crowd out the text: a prefix may use at most half of
        max_tokens. Outer headings are dropped first, since the innermost heading says most
        about the text under it; a single heading still too long is cut by characters. Real
        documents never get here; a runaway heading line does.
        """
        if path in self._prefixes:
            return self._prefixes[path]
        limit = self._limits.max_tokens // 2
        parts = [part for part in path if part]
        label = ""
        while parts:
            candidate = " > ".join(parts)
            if self._count(embedding_text(self._title, candidate, "")) <= limit:
                label = candidate
                break
            if len(parts) == 1:
                label = self._shorten(parts[0], limit)
                break
            parts = parts[1:]
        # Counted once more even when just counted above: the title alone may be over the limit.
        prefix = (label, self._count(embedding_text(self._title, label, "")))
        self._prefixes[path] = prefix
        return prefix

    def _shorten(self, heading: str, limit: int) -> str:
        def fits(length: int) -> int | None:
            tokens = self._count(embedding_text(self._title, heading[:length].rstrip(), ""))
            return tokens if tokens <= limit else None

        found = longest_fitting(range(1, len(heading) + 1), 0, fits)
        return heading[: found[0] + 1].rstrip() if found else ""
