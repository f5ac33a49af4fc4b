"""The static-site tools' markup that is not text: what each line of it leaves for a reader.

Hugo shortcodes, MkDocs and Docusaurus admonitions, MyST directives, Liquid tags, MDX imports
and component tags, heading attributes and the HTML tags a page wraps its text in are
instructions to a site generator or a browser. Left in, they
reach the heading paths, the embedded text and the keyword index (`Text {#text} > Links
{#links}`). Each rule here says which part of a line is markup; `scan_lines` keeps the rest, so
offsets into the body still hold.
Includes cannot be resolved (the file they name is not a document), so they are reported.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

# `{{< hint info >}}`, `{{% /tab %}}`, `{{< relref "admin/config.md" >}}`
SHORTCODE = re.compile(r"\{\{([<%])\s*(/?)\s*([\w./-]+)(.*?)\s*[>%]\}\}")
_QUOTED = re.compile(r"\"([^\"]*)\"|'([^']*)'|(\S+)")
LINK_SHORTCODES = frozenset({"relref", "ref"})
# Jekyll/Liquid tags: `{% include note.html %}`, `{% raw %}`
LIQUID_TAG = re.compile(r"\{%-?\s*(\w+)(.*?)-?%\}")
# ERB tags in Markdown (Middleman's `.html.markerb`, Rails): `<%= partial "x" %>`, `<% end %>`,
# `<%# a comment %>`; `<%%` writes a literal `<%`.
ERB_TAG = re.compile(r"<%(?!%)(?:==?|-|#)?[ \t]*(\w*)(.*?)-?%>")
# `!!! note "Title"`, `??? tip`, `???+ warning`, content tabs `=== "Linux"` (MkDocs Material,
# pymdownx), also as a definition's body (`:   !!! note`): their content is indented 4 below
ADMONITION = re.compile(
    r"([ \t]*(?::[ \t]+)?)(?:(?:!!!|\?\?\?\+?)[ \t]+[\w-]+(?:[ \t]+(?:\"(.*)\"|(.*)))?"
    r"|===\+?[ \t]+\"(.*)\")[ \t]*"
)
# `:::tip Title`, `:::note[Title]`, `::::`, `:::{note}` (Docusaurus, MyST colon fences), with
# attributes after the name or the title (`:::tip[Title]{icon="heart"}`, remark-directive)
COLON_FENCE = re.compile(
    r"[ \t]*:{3,}[ \t]*(?:\{[\w-]+\}|[\w-]+)?(?:\[(.*)\])?(?:\{[^{}\n]*\})?[ \t]*(.*?)[ \t]*"
)
# MDX (Docusaurus): an ESM import, `import Tabs from '@theme/Tabs';`, `import X from './_x.mdx'`
MDX_IMPORT = re.compile(
    r"import[ \t]+(?:([\w$*{}, \t]+?)[ \t]+from[ \t]*)?(['\"])([^'\"]+)\2[ \t]*;?[ \t]*"
)
_MDX_PARTIAL = re.compile(r"\.mdx?$", re.IGNORECASE)
_FILE_SUFFIX = re.compile(r"\.\w+$")
_IMPORT_BINDING = re.compile(r"(?:[\w$]+[ \t]+as[ \t]+)?([\w$]+)")
# A JSX tag of a component, `<Tabs>`, `</TabItem>`, `<Explainer title="Why" />`: read as one
# when the page imported it or writes it as JSX (`_is_component`); `<Token>` in a sentence is
# as likely a placeholder a reader must see. An attribute's value in braces may hold one level
# more (`rss={{ title: "x" }}`).
_JSX_NAME = r"[ \t]+[\w:.-]+"
_JSX_ATTRIBUTE = _JSX_NAME + r"""(?:[ \t]*=[ \t]*(?:"[^"]*"|'[^']*'|\{(?:[^{}]|\{[^{}]*\})*\}))?"""
_COMPONENT = r"([A-Z][\w$]*)(?:\.[\w$]+)*"
COMPONENT_TAG = re.compile(rf"<(/?){_COMPONENT}((?:{_JSX_ATTRIBUTE})*)[ \t]*/?>")
# A tag whose attributes go on over the next lines: `<VideoEmbed` then `  id="x"` then `/>`
COMPONENT_OPENER = re.compile(rf"[ \t]*<{_COMPONENT}(?:{_JSX_ATTRIBUTE})*[ \t]*")
# An HTML element a Markdown page uses for emphasis, layout or media (`<kbd>`, `<div
# class="browser">`, `<br>`, `<img alt="…" src={useBaseUrl("x.png")} />`): the page shows what it
# wraps, never the tag. Lower case, as pages write HTML: `<Token>` or `<KEYID>` is a placeholder.
HTML_INLINE_ELEMENTS = (
    "a|abbr|audio|b|bdi|big|cite|code|del|dfn|em|embed|font|i|iframe|img|ins|kbd|mark|picture|q|"
    "s|samp|small|source|span|strike|strong|sub|sup|svg|track|tt|u|var|video"
)
# Elements the page shows as a break or a box: between two words a reader sees them apart.
HTML_BLOCK_ELEMENTS = (
    "article|aside|blockquote|br|caption|center|col|colgroup|dd|details|div|dl|dt|figcaption|"
    "figure|footer|h[1-6]|header|hr|li|nav|ol|p|section|summary|table|tbody|td|tfoot|th|thead|"
    "tr|ul|wbr"
)
HTML_ELEMENTS = f"{HTML_INLINE_ELEMENTS}|{HTML_BLOCK_ELEMENTS}"
# A Markdown link's or picture's label, whose brackets may nest once ("[[services.concurrency]]"),
# the label in group 1; a code span in it is read whole, its brackets none of the label's, as
# CommonMark reads it (Fly.io's "[`[[services]]` section](…)"), and a lone backtick is a
# character. A link's address is in parentheses, which may hold a pair ("…/Toml_(file)").
LINK_LABEL = r"\[((?:`[^`\n]*`|[^\[\]\n`]|`(?![^`\n]*`)|\[[^\[\]\n]*\])*)\]"
LINK_DESTINATION = r"\((?:[^()]|\([^()]*\))*\)"
_HTML_ATTRIBUTE = (
    r"""[ \t]+([\w:.-]+)(?:[ \t]*=[ \t]*(?:"[^"]*"|'[^']*'"""
    r"""|\{(?:[^{}]|\{[^{}]*\})*\}|[^\s"'=<>`{}]+))?"""
)
HTML_TAG = re.compile(rf"<(/?)({HTML_ELEMENTS})((?:{_HTML_ATTRIBUTE})*)[ \t]*(?:/[ \t]*)?>")
# An element's tag whose attributes go on over the next lines: `<a` then `  href="…">text</a>`
HTML_OPENER = re.compile(rf"<({HTML_ELEMENTS})(?:{_HTML_ATTRIBUTE})*[ \t]*$")
_HTML_BLOCK_NAME = re.compile(rf"(?:{HTML_BLOCK_ELEMENTS})")
_HTML_NAMES = re.compile(_HTML_ATTRIBUTE)
_HTML_ANCHOR = re.compile(r"""^<a[ \t][^>]*?\b(?:id|name)[ \t]*=[ \t]*["']?([\w-]+)""")
# What a box or tab says of itself: Docusaurus `<TabItem label="Linux">`, `<Details title="Why">`,
# an API reference's field (Mintlify's `<ResponseField name="status">`)
_TITLE_ATTRIBUTE = re.compile(
    r"""[ \t](?:title|label|name)[ \t]*=[ \t]*"""
    r"""(?:"([^"]*)"|'([^']*)'|\{[ \t]*`([^`]*)`[ \t]*\}|\{[ \t]*"([^"]*)"[ \t]*\})"""
)
# `--8<-- "snippets/x.md"` (pymdownx.snippets)
SNIPPET = re.compile(r"[ \t]*-{1,2}8<-{1,2}[ \t]*(.*?)[ \t]*")
# One attribute in braces: an id, a class or a key=value (an id may hold dots: Docusaurus'
# `{#include.imports}`); attr_list after a link also takes a bare word (`{ data-search-exclude }`)
_KEYED_ATTRIBUTE = r"""(?:[#.][\w.-]+|[\w:-]+=(?:"[^"\n]*"|'[^'\n]*'|[^\s"'}]+))"""
_ATTRIBUTE = rf"(?:{_KEYED_ATTRIBUTE}|[\w:-]+)"
_KEYED_ATTRIBUTES = rf"\{{[ \t]*{_KEYED_ATTRIBUTE}(?:[ \t]+{_KEYED_ATTRIBUTE})*[ \t]*\}}"
# `{#install .wide}`, `{: #id}`, `{data-x=1}` at the end of a line (Pandoc, Hugo, kramdown)
ATTRIBUTES = re.compile(
    rf"[ \t]*\{{:?[ \t]*({_KEYED_ATTRIBUTE}(?:[ \t]+{_KEYED_ATTRIBUTE})*)[ \t]*\}}[ \t]*$"
)
_ATTRIBUTE_ID = re.compile(r"(?:^|\s)#([\w.-]+)")
# Roles Sphinx shows as code: registered so for reStructuredText (`kb.rst.sphinx`), and a MyST
# page's `{py:class}`…`` reads the same way
CODE_ROLES = (
    "file", "samp", "envvar", "command", "program", "option", "mimetype", "makevar",
    "regexp", "keyword", "token", "download", "confval", "setting",
    *(f"{prefix}{name}" for prefix in ("", "py:") for name in (
        "func", "meth", "class", "attr", "data", "exc", "mod", "obj", "const", "type",
    )),
)  # fmt: skip
# `{ref}`Title <target>``, `{py:class}`~a.B``: a MyST role (group 1 its name, 3 its text)
MYST_ROLE = re.compile(r"\{([a-z][\w:+.-]*)\}(`+)(.+?)\2(?!`)")
# `Title <target>`: a Sphinx or MyST role's text that names its target apart from what it shows
EXPLICIT_TARGET = re.compile(r"(.*?)\s*<([^<>]+)>", re.DOTALL)
# `(syntax/referencing)=` alone on its line: a MyST target, which Sphinx does not show
MYST_TARGET = re.compile(r"[ \t]*\([^()\s]+\)=[ \t]*")
# `:material-arrow-right:`, `:fontawesome-brands-github:{ .lg }`: an icon (MkDocs Material's
# pymdownx.emoji sets), with its attributes; the page shows a picture
ICON = re.compile(
    r"(?<![\w:]):(?:material|fontawesome|octicons|simple)-[\w-]+:(?![\w:])(?:\{[^{}\n]*\})?"
)
# `[GitHub](https://…){ target=_blank }`, `[x](a.md){: .button }`: a link's or a picture's
# attributes right after it, anywhere on the line (attr_list, kramdown, Pandoc); group 1
LINK_ATTRIBUTES = re.compile(
    r"""\]\((?:<[^<>\n]*>|[^()\s]*)(?:[ \t]+(?:"[^"\n]*"|'[^'\n]*'))?\)"""
    rf"(\{{:?[ \t]*{_ATTRIBUTE}(?:[ \t]+{_ATTRIBUTE})*[ \t]*\}})"
)
# `[a span]{#target .note}` and `` `code`{l=md} ``: a bracketed span's or a code span's
# attributes (Pandoc, MyST), never a bare word ("{name}" is a placeholder)
SPAN_ATTRIBUTES = re.compile(rf"(?<![!\]\\])(\[)[^\[\]\n]+(\]{_KEYED_ATTRIBUTES})")
CODE_ATTRIBUTES = re.compile(_KEYED_ATTRIBUTES)
# A MyST directive fence: ```{note} or ````{admonition} Title
DIRECTIVE = re.compile(r"\{([\w-]+)\}(.*)")
DIRECTIVE_OPTION = re.compile(r"[ \t]*:[\w-]+:.*")
PROSE_DIRECTIVES = frozenset(
    {
        "admonition", "attention", "caution", "danger", "error", "hint", "important", "note",
        "seealso", "tip", "warning", "topic", "sidebar", "margin", "dropdown", "card", "tab-set",
        "tab-item", "grid", "grid-item", "grid-item-card", "div", "epigraph", "versionadded",
        "versionchanged", "deprecated", "rubric",
    }
)  # fmt: skip
# Diagrams (`sphinx.ext.graphviz`, `sphinx.ext.inheritance_diagram`, sphinxcontrib's mermaid,
# plantuml and blockdiag): pictures whose source is not what the page shows, in reStructuredText
# (`kb.rst.sphinx`) and MyST alike
PICTURE_DIRECTIVES = frozenset(
    {
        "graphviz", "graph", "digraph", "inheritance-diagram", "mermaid", "uml", "plantuml",
        "blockdiag", "seqdiag", "actdiag", "nwdiag",
    }
)  # fmt: skip
HIDDEN_DIRECTIVES = frozenset({"toctree", "contents", "include", "literalinclude"}) | (
    PICTURE_DIRECTIVES
)
# Directives whose content is code whatever it reads like; any other MyST directive we do not
# know is read as its content reads (`kb.chunking.prose`)
CODE_DIRECTIVES = frozenset(
    {
        "code-block", "code", "sourcecode", "code-cell", "doctest", "testcode", "testoutput",
        "math", "raw", "eval-rst", "ipython", "jupyter-execute", "csv-table",
    }
)  # fmt: skip
INCLUDES = frozenset({"include", "literalinclude", "readfile", "partial", "include-markdown"})
# `> [!NOTE]`, `> [!tip]- Title`: a GitHub alert or an Obsidian callout, a box in a quote. The
# marker goes and the title stays, as an admonition's does.
CALLOUT = re.compile(r"[ \t]*(?:>[ \t]?)+(\[![\w-]+\][+-]?[ \t]*)(.*)")
# `[^1]` and its definition `[^1]: text` (GitHub, Hugo, Obsidian): read as `[1]` and `1: text`.
# An inline code span (CommonMark: a run of backticks closed by a run of the same length).
CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)")
FOOTNOTE = re.compile(r"\[\^([^\]\s]+)\](:?)")
# `==highlighted==` (Obsidian, MkDocs' pymdownx.mark): the page shows a <mark>, a reader of the
# text the words. No space inside either end, no `=` around: `x == y == z` is not one.
HIGHLIGHT = re.compile(r"(?<![=\w])==(?=[^\s=])([^=\n]*[^\s=])==(?!=)")
# What is left of any markup after these rules is found by `kb.chunking.leftovers`.


class Spans:
    """Spans of one line, merged and in order, asked in log time whether one holds a position
    or meets a span: asked once a tag, a line of thousands of tags and code spans read in
    quadratic time (a 220 kB line of shortcodes between code spans: 90 s)."""

    def __init__(self, spans: Sequence[tuple[int, int]]) -> None:
        merged: list[tuple[int, int]] = []
        for start, end in sorted(spans):
            # overlapping spans merge; touching ones stay two, so an empty span at their seam
            # meets neither, as it meets neither of the spans given
            if merged and start < merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((start, end))
        self.merged = merged
        self._starts = [start for start, _ in merged]
        self._ends = [end for _, end in merged]

    @classmethod
    def of(cls, spans: Sequence[tuple[int, int]]) -> Spans:
        """The spans, the one empty instance for none: most lines have no markup at all."""
        return cls(spans) if spans else _NO_SPANS

    def holds(self, position: int) -> bool:
        found = bisect.bisect_right(self._starts, position) - 1
        return found >= 0 and position < self._ends[found]

    def meets(self, start: int, end: int) -> bool:
        """Whether a span overlaps ``start``..``end``."""
        found = bisect.bisect_right(self._ends, start)
        return found < len(self._starts) and self._starts[found] < end


_NO_SPANS = Spans(())


@dataclass(frozen=True)
class Cut:
    """What of one line is markup: spans of `text` to drop, and what the line says about itself."""

    drop: tuple[tuple[int, int], ...]
    anchor: str = ""  # an explicit heading id, `{#install}`
    warning: str = ""
    breaks: tuple[tuple[int, int], ...] = ()  # spans read as one space: tags between two words
    title: bool = False  # what is left is a box's title, which the page shows on its own line


def inline_markup(
    text: str,
    *,
    code_spans: list[tuple[int, int]],
    components: frozenset[str] = frozenset(),
    keep_highlights: bool = False,
) -> Cut:
    """Shortcodes, Liquid and ERB tags, component tags and trailing attributes on a line outside
    code.

    A link shortcode keeps its target (`{{< relref "x.md" >}}` reads `x.md`) so the link around
    it still points somewhere; every other tag is dropped and its inner text stays, as are the
    tags of `components`, the names the page imported (a tag alone on its line keeps its title).
    A highlight's `==` go too, unless `keep_highlights` (the page renders them as a <mark>).
    """
    drop: list[tuple[int, int]] = []
    warnings: list[str] = []

    in_code = Spans.of(code_spans).holds

    for match in SHORTCODE.finditer(text):
        if in_code(match.start()):
            continue
        name = match.group(3)
        argument = _QUOTED.search(match.group(4)) if name in LINK_SHORTCODES else None
        if argument is not None:
            group = next(number for number in (1, 2, 3) if argument.group(number) is not None)
            start = match.start(4) + argument.start(group)
            drop += [(match.start(), start), (start + len(argument.group(group)), match.end())]
            continue
        if name in INCLUDES and not match.group(2):
            warnings.append(f"{match.group()} not resolved (its text is not included)")
        drop.append(match.span())
    shortcodes = Spans.of(drop)
    # template tags, Liquid's and ERB's: `{% include x %}`, `<%= partial "x" %>`, `<% end %>`
    titled = False
    # where the line's text starts and ends: a tag with this span is alone on its line
    bounds = (len(text) - len(text.lstrip()), len(text.rstrip()))
    tag_names: tuple[frozenset[str], frozenset[str]] | None = None
    for match in itertools.chain(LIQUID_TAG.finditer(text), ERB_TAG.finditer(text)):
        if in_code(match.start()) or shortcodes.meets(*match.span()):
            continue
        name, rest = match.group(1), match.group(2)
        if name in INCLUDES or (name == "render" and re.search(r"\bpartial\b", rest)):
            warnings.append(f"{match.group()} not resolved (its text is not included)")
        # a tab's or a code block's title (GitBook's `{% tab title="…" %}`) shows over it
        # (an ERB tag's arguments are Ruby's; an include's are its file's)
        boxed = match.group().startswith("{%") and name not in INCLUDES
        title = _box_title(match, 2, alone=match.span() == bounds) if boxed else None
        if title is not None:
            drop += [(0, title[0]), (title[1], len(text))]
            titled = True
            continue
        drop.append(match.span())
    taken = Spans.of(drop)
    for match in COMPONENT_TAG.finditer(text):
        if in_code(match.start()):
            continue
        tag_names = tag_names or _tag_names(text)
        if not _is_component(match, components, alone=match.span() == bounds, named=tag_names):
            continue
        if taken.meets(*match.span()):
            continue
        title = _box_title(match, 3, alone=match.span() == bounds) if not match.group(1) else None
        if title is not None:
            drop += [(0, title[0]), (title[1], len(text))]
            titled = True
            continue
        drop += _around_shown_words(match, alone=match.span() == bounds)
    html = _html_tags(text, taken=Spans.of(drop), in_code=in_code)
    drop += html.drop
    if "{" in text:  # most lines hold none of these, and every line is read
        drop += _braced_marks(text, code_spans, in_code)
    if ":" in text:
        drop += [match.span() for match in ICON.finditer(text) if not in_code(match.start())]
    if ")=" in text and MYST_TARGET.fullmatch(text):
        drop.append((0, len(text)))
    for match in FOOTNOTE.finditer(text):
        if in_code(match.start()):
            continue
        if match.group(2) and not text[: match.start()].strip():  # a definition: `1: text`
            drop += [(match.start(), match.start() + 2), (match.end(1), match.end(1) + 1)]
        else:
            drop.append((match.start() + 1, match.start() + 2))
    if not keep_highlights:
        for match in HIGHLIGHT.finditer(text):
            if not in_code(match.start()):
                drop += [(match.start(), match.start() + 2), (match.end() - 2, match.end())]
    # `## Will I lose units? <a id="cutter"></a>`: the heading's id, as `{#cutter}` would be
    anchor = next(
        (named.group(1) for tag in html.tags if (named := _HTML_ANCHOR.search(tag.group()))), ""
    )
    attributes = ATTRIBUTES.search(text)
    if attributes is not None and not in_code(attributes.start()):
        drop.append(attributes.span())
        found = _ATTRIBUTE_ID.search(attributes.group(1))
        anchor = found.group(1) if found else anchor
    return Cut(tuple(sorted(drop)), anchor, "; ".join(warnings), tuple(html.breaks), titled)


def _braced_marks(
    text: str, code_spans: list[tuple[int, int]], in_code: Callable[[int], bool]
) -> list[tuple[int, int]]:
    """What of ``text`` is attributes in braces after a link, a span or a code span, or the
    markup of a MyST role (``_myst_role_marks``)."""
    drop = [match.span(1) for match in LINK_ATTRIBUTES.finditer(text) if not in_code(match.start())]
    for match in SPAN_ATTRIBUTES.finditer(text):
        if not in_code(match.start()):
            drop += [match.span(1), match.span(2)]
    for _, end in code_spans:
        if after := CODE_ATTRIBUTES.match(text, end):
            drop.append(after.span())
    for match in MYST_ROLE.finditer(text):
        if not in_code(match.start()):
            drop += _myst_role_marks(match)
    return drop


def _myst_role_marks(role: re.Match[str]) -> list[tuple[int, int]]:
    """What of a MyST role Sphinx does not show: its name, an explicit target (`Title <x>`),
    and, for a role naming code, the module path a `~` hides; a role that names no code reads
    as plain text, without its backticks."""
    content, start, end = role.group(3), role.start(3), role.end(3)
    code = role.group(1).split(":")[-1] in CODE_ROLES  # `py:class` as `class`
    drop = [(role.start(), role.start(2))]  # `{ref}`
    explicit = EXPLICIT_TARGET.fullmatch(content)
    if explicit is not None and explicit.group(1):
        drop.append((start + explicit.end(1), end))
    elif code and content.startswith("~"):
        drop.append((start, start + content.rfind(".") + 1 if "." in content else start + 1))
    if not code:
        drop += [(role.start(2), start), (end, role.end())]
    return drop


@dataclass(frozen=True)
class _HtmlTags:
    tags: list[re.Match[str]]  # every tag read
    drop: list[tuple[int, int]]  # spans that go
    breaks: list[tuple[int, int]]  # spans read as one space


def _html_tags(text: str, *, taken: Spans, in_code: Callable[[int], bool]) -> _HtmlTags:
    """The HTML tags of ``text`` a reader never sees (``HTML_TAG``), outside code and outside
    what is dropped already. Tags side by side are read together: where they stand between two
    words and one of them is a break or a box (a cell, a line break), the reader sees the words
    apart, so they read as one space ("Time<br>limit": "Time limit"; `<td>a</td><td>b`: "a b");
    elsewhere they go. A line where a tag carries an event handler (`onerror=`) keeps every tag
    as written: hostile markup is shown as text, never hidden."""
    if "<" not in text:
        return _HtmlTags([], [], [])
    tags = [
        match
        for match in HTML_TAG.finditer(text)
        if not in_code(match.start()) and not taken.meets(*match.span())
    ]
    if any(
        name.casefold().startswith("on")
        for match in tags
        for name in _HTML_NAMES.findall(match.group(3))
    ):
        return _HtmlTags([], [], [])
    drop: list[tuple[int, int]] = []
    breaks: list[tuple[int, int]] = []
    group_start = 0
    for index, match in enumerate(tags):
        if index + 1 < len(tags) and tags[index + 1].start() == match.end():
            continue
        group, group_start = tags[group_start : index + 1], index + 1
        start, end = group[0].start(), group[-1].end()
        between_words = text[start - 1 : start].strip() and text[end : end + 1].strip()
        if between_words and any(_HTML_BLOCK_NAME.fullmatch(tag.group(2)) for tag in group):
            breaks.append((start, end))
        else:
            drop += [tag.span() for tag in group]
    return _HtmlTags(tags, drop, breaks)


# A component's name as pages write one they did not import (`Note`, `AccordionGroup`): a
# capital, then a small letter somewhere; `<KEYID>` and `<API_TOKEN>` are placeholders
_UNIMPORTED_COMPONENT = re.compile(r"[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*")


def unimported_component(name: str) -> bool:
    """Whether ``name`` is written as a component's (a capital, a small letter), not as a
    placeholder's (`KEYID`): what a tag not imported must be to be read as a component."""
    return bool(_UNIMPORTED_COMPONENT.fullmatch(name))


def title_value(text: str) -> tuple[int, int] | None:
    """The span of a title attribute's value in ``text`` (`title="Log in"`), or None."""
    return _title_span(f" {text}", -1)


def _box_title(match: re.Match[str], group: int, *, alone: bool) -> tuple[int, int] | None:
    """The span of the title a tag ``alone`` on its line gives in its attributes (``match``'s
    ``group``): what the page shows as its box's title, as an admonition's, or None."""
    return _title_span(match.group(group), match.start(group)) if alone else None


def _title_span(attributes: str, offset: int) -> tuple[int, int] | None:
    """Where the value of the title attribute among ``attributes`` stands, ``offset`` added."""
    found = _TITLE_ATTRIBUTE.search(attributes)
    if found is None:
        return None
    group = next(number for number in (1, 2, 3, 4) if found.group(number) is not None)
    return found.start(group) + offset, found.end(group) + offset


# An attribute whose quoted value is a word or a few (`k="enter"`, `icon="check"`), not an
# address, a path or code: what a component closed on itself inside a sentence shows there.
_SHOWN_WORDS = re.compile(_JSX_NAME + r"""[ \t]*=[ \t]*(["'])(\w[\w -]{0,39})\1""")


def _around_shown_words(match: re.Match[str], *, alone: bool) -> list[tuple[int, int]]:
    """What to drop of a component's tag (``COMPONENT_TAG``): all of it, unless it is closed on
    itself inside a sentence (`Press <Key k="enter" /> to…`, `the <Icon icon="check" /> mark`),
    where the page shows something the sentence reads through; then the words its attributes
    give are kept, one space apart ("ctrl c" for `<Key mod="ctrl" k="c" />`)."""
    if alone or match.group(1) or not match.group().endswith("/>"):
        return [match.span()]
    start = match.start(3)
    values = [
        (start + found.start(2), start + found.end(2))
        for found in _SHOWN_WORDS.finditer(match.group(3))
    ]
    if not values:
        return [match.span()]
    drop = [(match.start(), values[0][0])]
    for (_, end), (following, _) in itertools.pairwise(values):
        drop += [(end, end + 1), (end + 2, following)]  # the space after the closing quote stays
    return [*drop, (values[-1][1], match.end())]


_TAG_NAME = re.compile(r"<(/?)([A-Z][\w$]*)")


def _tag_names(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """The names of the capitalised tags ``text`` opens and closes, read once a line: asking
    each tag whether its partner is on the line made a line of many tags cost its square."""
    opened: set[str] = set()
    closed: set[str] = set()
    for found in _TAG_NAME.finditer(text):
        (closed if found.group(1) else opened).add(found.group(2))
    return frozenset(opened), frozenset(closed)


def _is_component(
    match: re.Match[str],
    components: frozenset[str],
    *,
    alone: bool,
    named: tuple[frozenset[str], frozenset[str]],
) -> bool:
    """Whether a capitalised tag (``COMPONENT_TAG``) is an MDX component: a name the page
    imported, or one written as JSX, which a placeholder never is: ``alone`` on its line
    (`<Note>`, `</Steps>`), with attributes (`<Step title="Log in">`, `<Icon icon="x" />`), or
    closed on its line (`<Badge>New</Badge>`; ``named``: the names the line opens and closes).
    Mintlify's pages use their components without importing them. `<Token>` in a sentence
    stays: the reader must replace it."""
    name = match.group(2)
    if name in components:
        return True
    if not unimported_component(name):
        return False
    partner = named[0] if match.group(1) else named[1]
    return alone or "=" in match.group(3) or name in partner


def block_marker(text: str) -> tuple[Cut, int | None] | None:
    """A line that opens or closes a box (admonition, colon fence, callout, snippet), or None.

    Returns what to drop, keeping a title if the box has one, and for an MkDocs admonition the
    indent its content has.
    """
    admonition = ADMONITION.fullmatch(text)
    if admonition is not None:
        title = next((group for group in (2, 3, 4) if admonition.group(group) is not None), 2)
        return _keep_only(text, admonition.span(title)), _columns(admonition.group(1)) + 4
    colon = COLON_FENCE.fullmatch(text)
    if colon is not None:
        title = 1 if colon.group(1) else 2
        return _keep_only(text, colon.span(title)), None
    callout = CALLOUT.fullmatch(text)
    if callout is not None:
        return Cut((callout.span(1),), title=bool(callout.group(2).strip())), None
    snippet = SNIPPET.fullmatch(text)
    if snippet is not None:
        warning = (
            f"snippet {snippet.group(1) or '(unnamed)'} not resolved (its text is not included)"
        )
        return Cut(((0, len(text)),), warning=warning), None
    return None


# MDX: an export, which opens a block of JavaScript that runs to the next blank line
MDX_EXPORT = re.compile(
    r"export[ \t]+(?:const|let|var|function|class|default|async[ \t]+function)\b|export[ \t]*[{*]"
)


def mdx_import(text: str) -> tuple[Cut, frozenset[str]] | None:
    """An MDX import line, which is not text, and the names it binds (`X`, `{ A as B }`,
    `* as NS`), or None. Importing an `.md`/`.mdx` file includes it: reported, like includes."""
    # An import is one short line; the length cap keeps a runaway line from costing quadratic time
    found = MDX_IMPORT.fullmatch(text) if len(text) <= 500 and text.startswith("import") else None
    if found is None or (found.group(1) is None and not _FILE_SUFFIX.search(found.group(3))):
        return None  # `import "fmt"` is Go; MDX imports bind a name or load a file (`x.css`)
    names = frozenset(_IMPORT_BINDING.findall(found.group(1) or ""))
    warning = ""
    if _MDX_PARTIAL.search(found.group(3)):
        warning = f"{text.strip()} not resolved (its text is not included)"
    return Cut(((0, len(text)),), warning=warning), names


def _keep_only(text: str, span: tuple[int, int]) -> Cut:
    """Only ``span`` of ``text`` kept: a box's title, shown on its own line (or nothing)."""
    start, end = span
    if start < 0 or not text[start:end].strip():
        return Cut(((0, len(text)),))
    return Cut(((0, start), (end, len(text))), title=True)


def _columns(indent: str) -> int:
    return len(indent.expandtabs(4))


def indent_chars(text: str, columns: int) -> int | None:
    """How many leading characters of `text` make up `columns` of indent (tab = 4), or None."""
    width = 0
    for index, character in enumerate(text):
        if width >= columns:
            return index
        if character == " ":
            width += 1
        elif character == "\t":
            width += 4 - width % 4
        else:
            return None
    return len(text) if width >= columns or not text.strip() else None


def code_span(text: str) -> str:
    """``text`` as an inline code span: on one line, fenced by one backtick more than the longest
    run it holds, padded with a space when it starts or ends with one ("" for no text)."""
    text = " ".join(text.split())
    if not text:
        return ""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    padding = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{padding}{text}{padding}{ticks}"


def outside_code_spans(text: str, change: Callable[[str], str]) -> str:
    """``text`` with ``change`` applied to what lies between its inline code spans (``CODE_SPAN``);
    the spans themselves are left as written: `only_with_files` is a name, not emphasis. A span
    is read within one line, as the chunker reads lines: give a paragraph with its lines joined
    (``assistant.units`` does) to keep a span that wraps."""
    pieces, start = [], 0
    for span in CODE_SPAN.finditer(text):
        pieces += [change(text[start : span.start()]), span.group()]
        start = span.end()
    return "".join([*pieces, change(text[start:])])
