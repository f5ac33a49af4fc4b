"""Markdown to safe HTML: the admin preview and the public document pages.

markdown-it-py with raw HTML off turns any HTML in a document into text; nh3 then removes
whatever unsafe markup could still come out (javascript: links, event attributes). HTML
comments never reach the output, so the hidden instructions some pages carry are not shown.

The document pages also need to know where each rendered block came from, so that a citation
(character offsets of a chunk in ``Document.body``) can highlight the blocks it quotes. Comments
are removed line by line (``scan_lines`` keeps one line per source line), so markdown-it's
``token.map`` line ranges over the visible text are line ranges of the original body too.
"""

from __future__ import annotations

import bisect
import dataclasses
import posixpath
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import cast

import nh3
from django.utils.html import escape
from django.utils.text import slugify
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from kb.chunking.lines import FenceRole, SourceLine, scan_lines
from kb.chunking.markup import HIGHLIGHT
from kb.chunking.structure import opens_block
from kb.parsing import DOCUMENT_SUFFIXES

_markdown = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")

_URL_SCHEMES = {"http", "https", "mailto"}

CITED_CLASS = "cited-passage"
CONTEXT_CLASS = "cited-context"  # the passage's blocks, marked lightly around quoted sentences
QUOTED_CLASS = "cited-sentence"
CITED_ID = "passage"
# Private-use characters put into the body where a quoted sentence starts and ends, so Markdown
# parses the text as it is and the marks come out where the sentence is in the HTML.
_QUOTE_OPEN, _QUOTE_CLOSE = "\ue000", "\ue001"
_QUOTE_MARKS = re.compile(r"[ \t]*(?:>[ \t]?)+")  # a quote's (or callout's) leading `> `
MAX_QUOTED_SPANS = 12
# Ids the page around the document uses: a heading slug must never take one of them.
RESERVED_IDS = frozenset({CITED_ID, "main", "top", "content", "on-this-page", "document-title"})

# Blocks a citation can mark. A block inside one that is already marked is left alone: the
# outer one carries the highlight, and nested highlights would only stack borders.
_CITABLE_OPENERS = {
    "paragraph_open",
    "heading_open",
    "list_item_open",
    "table_open",
    "blockquote_open",
}
_CITABLE_LEAVES = {"fence", "code_block"}
_HEADING_TAGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
_BLOCK_TAGS = {"p", "li", "table", "pre", "blockquote"}

# What the document pages add to markdown-it's output; everything else is nh3's default.
_PAGE_ATTRIBUTES = {tag: set(allowed) for tag, allowed in nh3.ALLOWED_ATTRIBUTES.items()}
for _tag in _HEADING_TAGS | _BLOCK_TAGS:
    _PAGE_ATTRIBUTES.setdefault(_tag, set()).add("id")
_PAGE_ATTRIBUTES.setdefault("span", set()).add("aria-hidden")
_PAGE_CLASSES = {
    **{tag: {CITED_CLASS, CONTEXT_CLASS} for tag in _HEADING_TAGS | _BLOCK_TAGS},
    "a": {"heading-anchor"},
    "span": {"visually-hidden"},
    "caption": {"visually-hidden"},
}

_CITED_LABEL = '<span class="visually-hidden">Cited passage: </span>'

# Given every path a page's links could mean, the ones that are documents (one lookup).
ExistingPaths = Callable[[set[str]], Collection[str]]


@dataclass(frozen=True)
class MarkdownReference:
    kind: str  # "image" or "link"
    url: str
    line_number: int  # 1-based line in the body where its block starts


def markdown_references(body: str) -> list[MarkdownReference]:
    """Every image source and link target of the body as Markdown reads it (comments out)."""
    references = []
    for token in _markdown.parse(_visible_text(scan_lines(body))):
        if token.type != "inline" or not token.children:
            continue
        line_number = token.map[0] + 1 if token.map else 1
        for child in token.children:
            if child.type == "image":
                references.append(
                    MarkdownReference("image", str(child.attrGet("src") or ""), line_number)
                )
            elif child.type == "link_open":
                references.append(
                    MarkdownReference("link", str(child.attrGet("href") or ""), line_number)
                )
    return references


def markdown_to_html(body: str) -> str:
    """The body as safe HTML with no ids: it is shown inside admin pages that have their own."""
    html = _markdown.render(_visible_text(scan_lines(body, keep_highlights=True)))
    return nh3.clean(html, url_schemes=_URL_SCHEMES)


def passage_to_html(text: str, *, marked: Sequence[tuple[int, int]] = ()) -> str:
    """A passage (a chunk's text) as safe HTML, as the public page renders it, with the spans
    ``marked`` (offsets into ``text``) in ``<mark>``: the attention page shows the values two
    passages disagree on in the text a customer reads, not in its Markdown."""
    body = _with_quote_marks(text, _valid_spans(marked, length=len(text))).text
    html = nh3.clean(_markdown.render(_visible_text(scan_lines(body))), url_schemes=_URL_SCHEMES)
    return _quote_marks_to_html(html, plain=True)[0]


@dataclass(frozen=True)
class Heading:
    level: int
    text: str
    anchor: str  # the heading's id on the page
    start: int = 0  # offset of its line in the body


@dataclass(frozen=True)
class RenderedDocument:
    html: str  # sanitised
    headings: tuple[Heading, ...]
    cited: bool  # whether any block was marked as the cited passage
    quoted: bool = False  # whether quoted sentences were marked within it
    quoted_section: Heading | None = None  # the heading the first quoted sentence is under


def document_render(
    *,
    body: str,
    cited_range: tuple[int, int] | None = None,
    quoted: Sequence[tuple[int, int]] = (),
    title: str = "",
    path: str = "",
    existing: ExistingPaths | None = None,
) -> RenderedDocument:
    """A document body as a page: heading anchors, links between pages, the cited blocks marked.

    Every block whose source overlaps ``cited_range`` (``[start, end)`` offsets into ``body``)
    gets the ``cited-passage`` class; the first also gets ``id="passage"`` and a label for
    screen readers. With ``quoted`` (the sentences the answer drew on, as offsets too) those
    sentences are the highlight instead, each in a ``<mark>``, the first one carrying the id and
    the label, and the passage's blocks are marked lightly (``cited-context``). A first
    ``# heading`` equal to ``title`` is left out: the page shows the title itself, and two
    identical ``<h1>`` would say the same thing twice. Given the document's ``path``, links to
    other pages point at their ``/docs`` pages (``document_link``); ``existing`` is asked once,
    with every path the page's links could mean, which of them are documents.
    """
    spans = _valid_spans(quoted, length=len(body))
    if spans:
        rendered = _render(
            body=body, cited_range=cited_range, quoted=spans, title=title, path=path,
            existing=existing,
        )  # fmt: skip
        if rendered.quoted:
            return rendered
        # The sentences fell where no mark can show (inside code, a link's address): the
        # passage alone is the highlight, as for a link without quotes.
    return _render(
        body=body, cited_range=cited_range, quoted=[], title=title, path=path, existing=existing
    )


def _render(
    *,
    body: str,
    cited_range: tuple[int, int] | None,
    quoted: list[tuple[int, int]],
    title: str,
    path: str,
    existing: ExistingPaths | None,
) -> RenderedDocument:
    marked = _with_quote_marks(body, quoted)
    lines = scan_lines(marked.text, keep_highlights=True)
    tokens = _markdown.parse(_visible_text(lines))
    tokens = _without_title_heading(tokens, title=title)
    headings = [
        dataclasses.replace(heading, start=marked.original(heading.start))
        for heading in _anchor_headings(tokens, lines)
    ]
    if path:
        _link_documents(tokens, path=path, existing=existing)
    cited = False
    if cited_range is not None:
        cited = _mark_cited(
            tokens,
            lines=lines,
            body=marked.text,
            cited_range=(marked.shifted(cited_range[0]), marked.shifted(cited_range[1])),
            light=bool(quoted),
        )
    html = _markdown.renderer.render(tokens, _markdown.options, {})
    cleaned = nh3.clean(
        html,
        url_schemes=_URL_SCHEMES,
        attributes=_PAGE_ATTRIBUTES,
        allowed_classes=_PAGE_CLASSES,
    )
    section = None
    if quoted:
        cleaned, marks = _quote_marks_to_html(cleaned)
        if not marks:
            return RenderedDocument(html=cleaned, headings=tuple(headings), cited=cited)
        first = quoted[0][0]
        section = next((h for h in reversed(headings) if h.start <= first), None)
    return RenderedDocument(
        html=cleaned,
        headings=tuple(headings),
        cited=cited or bool(quoted),
        quoted=bool(quoted),
        quoted_section=section,
    )


def _valid_spans(spans: Sequence[tuple[int, int]], *, length: int) -> list[tuple[int, int]]:
    """Ranges inside the body, sorted, without overlaps; at most ``MAX_QUOTED_SPANS``."""
    kept: list[tuple[int, int]] = []
    for start, end in sorted(spans)[:MAX_QUOTED_SPANS]:
        if 0 <= start < end <= length and (not kept or start >= kept[-1][1]):
            kept.append((start, end))
    return kept


@dataclass(frozen=True)
class _MarkedBody:
    """The body with a private-use character before and after each quoted span."""

    text: str
    inserted: tuple[int, ...]  # original offsets at which a character was inserted, sorted

    def shifted(self, offset: int) -> int:
        """Where the original ``offset`` is in ``text``."""
        return offset + bisect.bisect_right(self.inserted, offset)

    def original(self, offset: int) -> int:
        """Where ``text``'s ``offset`` was in the original body."""
        # The i-th inserted character sits at inserted[i] + i in ``text``.
        positions = [position + index for index, position in enumerate(self.inserted)]
        return offset - bisect.bisect_left(positions, offset)


def _with_quote_marks(body: str, spans: list[tuple[int, int]]) -> _MarkedBody:
    if not spans:
        return _MarkedBody(text=body, inserted=())
    pieces, inserted, position = [], [], 0
    for start, end in spans:
        pieces += [body[position:start], _QUOTE_OPEN, body[start:end], _QUOTE_CLOSE]
        inserted += [start, end]
        position = end
    pieces.append(body[position:])
    return _MarkedBody(text="".join(pieces), inserted=tuple(inserted))


_TAG = re.compile(r"(<[^>]*>)")
_CITED_SENTENCE_LABEL = '<span class="visually-hidden">Cited: </span>'


def _quote_marks_to_html(html: str, *, plain: bool = False) -> tuple[str, int]:
    """Turn the quote characters of sanitised HTML into ``<mark>`` elements: a mark never spans
    a tag, so a sentence over a link or across table cells becomes several marks. Returns the
    HTML and how many marks it has. Characters that ended up inside a tag (an address) go.
    ``plain`` marks carry no class, id or label (not a citation: a value to look at)."""
    inside = False
    marks = 0
    out: list[str] = []
    for part in _TAG.split(html):
        if part.startswith("<"):
            inside = _toggled(part, inside)
            out.append(part.replace(_QUOTE_OPEN, "").replace(_QUOTE_CLOSE, ""))
            continue
        for piece in re.split(f"([{_QUOTE_OPEN}{_QUOTE_CLOSE}])", part):
            if piece == _QUOTE_OPEN:
                inside = True
            elif piece == _QUOTE_CLOSE:
                inside = False
            elif inside and piece.strip() and plain:
                out.append(f"<mark>{piece}</mark>")
                marks += 1
            elif inside and piece.strip():
                first = ' id="passage"' if marks == 0 else ""
                label = _CITED_SENTENCE_LABEL if marks == 0 else ""
                out.append(f'<mark class="{QUOTED_CLASS}"{first}>{label}{piece}</mark>')
                marks += 1
            else:
                out.append(piece)
    return "".join(out), marks


def _toggled(tag: str, inside: bool) -> bool:
    for character in tag:
        if character == _QUOTE_OPEN:
            inside = True
        elif character == _QUOTE_CLOSE:
            inside = False
    return inside


def _visible_text(lines: list[SourceLine]) -> str:
    # markdown-it also breaks lines at a lone "\r"; scan_lines does not, and the two must agree
    # on line numbers for token.map to point at the right source lines.
    texts = [line.text.replace("\r", " ") for line in lines]
    for index, line in enumerate(lines[:-1]):
        if line.title and _goes_on(line.text, lines[index + 1]):
            texts[index] += "\\"  # a hard break: the box's title on its own line, as on the site
    return "\n".join(texts)


def _goes_on(title: str, following: SourceLine) -> bool:
    """Whether ``following`` goes on with the paragraph a box's ``title`` starts (both inside
    the same quote, for a callout's)."""
    if following.fence is not FenceRole.NONE:
        return False
    quoted = _QUOTE_MARKS.match(title)
    text = following.text
    if quoted is not None:
        if not text.startswith(quoted.group()):
            return False
        text = text[len(quoted.group()) :]
    return bool(text.strip()) and not opens_block(text)


def _without_title_heading(tokens: list[Token], *, title: str) -> list[Token]:
    if (
        title
        and len(tokens) >= 3
        and tokens[0].type == "heading_open"
        and tokens[0].tag == "h1"
        and _plain_text(tokens[1]).strip().casefold() == title.strip().casefold()
    ):
        return tokens[3:]
    return tokens


def _plain_text(inline: Token) -> str:
    return "".join(
        child.content for child in inline.children or () if child.type in {"text", "code_inline"}
    )


def _anchor_headings(tokens: list[Token], lines: list[SourceLine]) -> list[Heading]:
    """Give every heading a unique id and a link to itself (shown on hover and focus).

    A heading that names its own id (`## Install {#install}`) keeps it, because links written
    for the original site use it."""
    anchors = _Anchors(taken=RESERVED_IDS)
    headings: list[Heading] = []
    for index, token in enumerate(tokens):
        if token.type != "heading_open":
            continue
        inline = tokens[index + 1]
        text = " ".join(_plain_text(inline).split())
        given = lines[token.map[0]].anchor if token.map else ""
        anchor = anchors.claim(given or slugify(text, allow_unicode=True) or "section")
        token.attrSet("id", anchor)
        link = (
            f' <a class="heading-anchor" href="#{anchor}"><span aria-hidden="true">#</span>'
            f'<span class="visually-hidden">Link to this section</span></a>'
        )
        inline.children = [*(inline.children or []), _raw_inline(link)]
        start = lines[token.map[0]].start if token.map else 0
        headings.append(Heading(level=int(token.tag[1]), text=text, anchor=anchor, start=start))
    return headings


_INDEX_PAGES = ("_index.md", "index.md", "README.md")


def document_link(
    *, href: str, document_path: str, exists: Callable[[str], bool] | None = None
) -> str:
    """The ``/docs/<path>`` address of a link to another page of the corpus, or ``href`` as is.

    Documentation folders link the way their site generator resolves: a file (`../admin/
    config.md`, relative to the linking file) or a page address (`/docs/foo/`, `../foo/`,
    relative to the linking page's address). A page address could be `foo.md` or `foo/_index.md`;
    ``exists`` says which documents there are, and without it the first guess is used.
    """
    target = _link_target(href=href, document_path=document_path)
    return href if target is None else target.address(exists)


def linked_document(*, href: str, document_path: str, exists: Callable[[str], bool]) -> str | None:
    """The document a link of page ``document_path`` points at, resolved as ``document_link``
    resolves it, when ``exists`` knows it; None for a link to a site, an anchor of the page
    itself, or a page ``exists`` does not know."""
    target = _link_target(href=href, document_path=document_path)
    if target is None:
        return None
    return next((candidate for candidate in target.candidates if exists(candidate)), None)


@dataclass(frozen=True)
class _LinkTarget:
    candidates: tuple[str, ...]  # the documents the link could mean, most likely first
    fragment: str  # "#section" or ""

    def address(self, exists: Callable[[str], bool] | None) -> str:
        chosen = next(
            (candidate for candidate in self.candidates if exists and exists(candidate)),
            self.candidates[0],
        )
        return f"/docs/{chosen}{self.fragment}"


def _link_target(*, href: str, document_path: str) -> _LinkTarget | None:
    """What a link could point at in the corpus; None for a link that stays as written."""
    if not href or href.startswith(("#", "?")) or _REMOTE_URL.match(href):
        return None
    target, hash_mark, fragment = href.partition("#")
    target = target.partition("?")[0]
    if not target:
        return None
    folder = posixpath.dirname(document_path)
    candidates: list[str] = []
    if target.lower().endswith(DOCUMENT_SUFFIXES):
        if not target.startswith("/"):
            candidates.append(posixpath.join(folder, target))  # Hugo's relref: page, then root
        candidates += _from_root(target.lstrip("/"))
    else:
        name = posixpath.basename(document_path)
        page = folder if name in _INDEX_PAGES else posixpath.splitext(document_path)[0]
        # A page address is relative to the linking page's own address (`/guides/install/`);
        # Hugo's relref also tries the page's folder, then the site's root.
        bases = [""] if target.startswith("/") else [page, folder, ""]
        for base in bases:
            joined = posixpath.normpath(posixpath.join(base, target.lstrip("/")))
            for stem in _from_root("" if joined == "." else joined):
                candidates += [f"{stem}.md"] if stem else []
                candidates += [posixpath.join(stem, index) for index in _INDEX_PAGES]
    resolved = [posixpath.normpath(candidate) for candidate in candidates]
    resolved = [candidate for candidate in resolved if not candidate.startswith("..")]
    if not resolved:
        return None
    return _LinkTarget(candidates=tuple(resolved), fragment=f"#{fragment}" if hash_mark else "")


def _from_root(path: str) -> list[str]:
    # A site's /docs/ section is the corpus folder itself when only that folder was synced.
    return [path, path.removeprefix("docs/")] if path.startswith("docs/") else [path]


def _link_documents(tokens: list[Token], *, path: str, existing: ExistingPaths | None) -> None:
    """Point each link between pages at its ``/docs`` page, asking ``existing`` once for the
    whole page: one question per candidate cost ~8 queries a link (30,000 links, 454 s)."""
    links: list[tuple[Token, _LinkTarget]] = []
    for token in tokens:
        for child in token.children or ():
            if child.type == "link_open":
                target = _link_target(href=str(child.attrGet("href") or ""), document_path=path)
                if target is not None:
                    links.append((child, target))
    if not links:
        return
    wanted = {candidate for _, target in links for candidate in target.candidates}
    present = set(existing(wanted)) if existing is not None else set()
    for child, target in links:
        child.attrSet("href", target.address(present.__contains__ if existing else None))


class _Anchors:
    """Unique ids for a page's headings: ``slug``, then ``slug-1``, ``slug-2``, ...

    Each slug remembers the next suffix to try, so n headings alike cost n steps in all;
    counting up from ``-1`` for each of them again was quadratic (30,000 ``x`` headings, a
    180 KB body: 140 s per view). A suffix already taken (a heading that gave ``{#x-1}``) is
    skipped."""

    def __init__(self, *, taken: frozenset[str]) -> None:
        self._used = set(taken)
        self._next_suffix: dict[str, int] = {}

    def claim(self, slug: str) -> str:
        candidate, suffix = slug, self._next_suffix.get(slug, 1)
        if candidate in self._used:
            candidate = f"{slug}-{suffix}"
            while candidate in self._used:
                suffix += 1
                candidate = f"{slug}-{suffix}"
            self._next_suffix[slug] = suffix + 1
        self._used.add(candidate)
        return candidate


def _mark_cited(
    tokens: list[Token],
    *,
    lines: list[SourceLine],
    body: str,
    cited_range: tuple[int, int],
    light: bool = False,
) -> bool:
    """Mark the blocks overlapping ``cited_range``; ``light`` when quoted sentences inside them
    are the highlight (the blocks then get neither the id nor the label)."""
    start, end = cited_range
    line_ends = _line_ends(lines, body)
    marked_depth: int | None = None  # nesting level of the marked block we are inside of
    first: int | None = None
    depth = 0
    for index, token in enumerate(tokens):
        if token.nesting == -1:
            depth -= 1
            if marked_depth is not None and depth == marked_depth:
                marked_depth = None
            continue
        citable = token.type in _CITABLE_OPENERS or token.type in _CITABLE_LEAVES
        if citable and marked_depth is None and token.map and not token.hidden:
            block_start, block_end = _source_span(token.map, lines, line_ends)
            if block_start < end and start < block_end:
                token.attrJoin("class", CONTEXT_CLASS if light else CITED_CLASS)
                if first is None and light:
                    first = index
                elif first is None:
                    first = index
                    token.attrSet("id", CITED_ID)
                if token.nesting == 1:
                    marked_depth = depth
        if token.nesting == 1:
            depth += 1
    if first is None:
        return False
    if not light:
        _label(tokens, first)
    return True


def _line_ends(lines: list[SourceLine], body: str) -> list[int]:
    """Offset just past each line's last character (its terminator excluded)."""
    ends = [following.start - 1 for following in lines[1:]] + [len(body)]
    return [
        end - 1 if end > line.start and body[end - 1] == "\r" else end
        for line, end in zip(lines, ends, strict=True)
    ]


def _source_span(
    line_range: Iterable[int], lines: list[SourceLine], line_ends: list[int]
) -> tuple[int, int]:
    """Offsets in the body of a block's lines, without the blank lines markdown-it counts after
    a list item."""
    first, after_last = list(line_range)
    last = min(after_last, len(lines)) - 1
    while last > first and not lines[last].text.strip():
        last -= 1
    return lines[first].start, line_ends[last]


def _label(tokens: list[Token], index: int) -> None:
    """Tell screen readers where the cited passage starts, inside the marked block."""
    block = tokens[index]
    if block.type in {"paragraph_open", "heading_open"}:
        inline = tokens[index + 1]
        inline.children = [_raw_inline(_CITED_LABEL), *(inline.children or [])]
    elif block.type == "table_open":
        caption = '<caption class="visually-hidden">Cited passage</caption>'
        tokens.insert(index + 1, _raw_block(caption))
    elif block.type in {"list_item_open", "blockquote_open"}:
        tokens.insert(index + 1, _raw_block(_CITED_LABEL))
    else:  # a code block: the label goes before its code, inside the marked <pre>
        block.meta["cited_label"] = True


def _raw_inline(html: str) -> Token:
    return Token(type="html_inline", tag="", nesting=0, content=html)


def _raw_block(html: str) -> Token:
    return Token(type="html_block", tag="", nesting=0, content=html)


_PRE_OPEN = re.compile(r"^<pre((?: [^>]*)?)><code")


def _code_with_block_attributes(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    """Fenced and indented code both carry the citation marks on ``<pre>``, the box a reader
    sees; markdown-it puts a fence's attributes on ``<code>`` instead."""
    token = tokens[idx]
    marks = [(name, token.attrs.pop(name)) for name in ("id", "class") if name in token.attrs]
    html = _DEFAULT_RULES[token.type](tokens, idx, options, env)
    for name, value in marks:
        token.attrs[name] = value
    if not marks:
        return html
    attributes = "".join(f' {name}="{escape(value)}"' for name, value in marks)
    label = _CITED_LABEL if token.meta.get("cited_label") else ""
    return _PRE_OPEN.sub(lambda match: f"<pre{attributes}>{label}<code", html, count=1)


def _image_local_only(
    self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    """An image from another site is shown as its description, never loaded: a remote image
    is fetched by every reader's browser (a tracking pixel), and the pages' Content-Security-
    Policy would block it anyway. The editor preview warns the writer."""
    token = tokens[idx]
    if _REMOTE_URL.match(str(token.attrGet("src") or "")):
        description = self.renderInlineAsText(token.children or [], options, env)
        return escape(f"[image: {description}]" if description else "[image]")
    return _DEFAULT_IMAGE_RULE(tokens, idx, options, env)


_REMOTE_URL = re.compile(r"^\s*(?:[a-z][a-z0-9+.-]*:|//)", re.IGNORECASE)
# MarkdownIt renders with RendererHTML unless told otherwise; its rules are the defaults replaced.
_RENDERER_RULES = cast(RendererHTML, _markdown.renderer).rules
_DEFAULT_IMAGE_RULE = _RENDERER_RULES["image"]
_markdown.add_render_rule("image", _image_local_only)


def _highlight(state: StateInline, silent: bool) -> bool:
    """`==text==` as a <mark> (Obsidian, MkDocs' pymdownx.mark), its text parsed as inline
    Markdown like an emphasis's."""
    start = state.pos
    if not state.src.startswith("==", start) or (start and state.src[start - 1] == "="):
        return False
    found = HIGHLIGHT.match(state.src, start)
    if found is None or found.end() > state.posMax or (start and state.src[start - 1].isalnum()):
        return False
    if not silent:
        state.push("mark_open", "mark", 1)
        end = state.posMax
        state.pos, state.posMax = start + 2, found.end() - 2
        state.md.inline.tokenize(state)
        state.posMax = end
        state.push("mark_close", "mark", -1)
    state.pos = found.end()
    return True


_markdown.inline.ruler.before("emphasis", "highlight", _highlight)

_DEFAULT_RULES = {name: _RENDERER_RULES[name] for name in _CITABLE_LEAVES}
for _name in _CITABLE_LEAVES:
    _markdown.add_render_rule(_name, _code_with_block_attributes)
