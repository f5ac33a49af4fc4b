"""Syntax that survived into plain text: what CommonMark + GFM would not render as meant.

The markup rules (`kb.chunking.markup`, `kb.obsidian`) remove the dialects they know. This is
the check of their output, and it must know more than they do: a folder in a dialect nobody
taught the rules (an Obsidian vault, Sphinx, Jinja templates) otherwise reports "0 markup left"
while its chunks hold `[[Page|text]]` and `> [!note]` (issue 29: 987 of 1,882 chunks).

Each `Pattern` names one kind of leftover and gives an example that it must find (the tests
read every example); a line is read outside fenced code and with its inline code spans
blanked, because a tool's syntax in code is the example a reader came for. URLs and link
destinations are blanked first, so `?a==b==` in an address is not a highlight.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kb.chunking.markup import CODE_SPAN


@dataclass(frozen=True)
class Pattern:
    kind: str  # what a person fixing the folder calls it
    regex: re.Pattern[str]
    example: str  # a line the pattern must find
    unless: str = ""  # a kind that, found on the line first, explains this match


def _p(kind: str, pattern: str, example: str, *, unless: str = "") -> Pattern:
    return Pattern(kind, re.compile(pattern), example, unless)


PATTERNS: tuple[Pattern, ...] = (
    # Obsidian (and wikis): `[[Page]]`, `[[Page|text]]`; `[[1]](url)` is a CommonMark link and
    # `[[1, 2]]` a nested list, neither a wiki link.
    _p("embed", r"!\[\[[^\[\]\n]*\]\]", "See ![[Install#Steps]] below."),
    # `[[cascade]]` alone on a line is a TOML array of tables (Hugo's code-toggle examples,
    # which the page shows as prose), not a link.
    _p("TOML table", r"^[ \t]*\[\[[\w.-]+\]\][ \t]*(?:#.*)?$", "[[menus.main]]  # the menu"),
    _p(
        "wiki link",
        r"(?<![!\[])\[\[(?![\d\s,.\-+]*\]\]|['\"])[^\[\]\n]+\]\](?![(\]])",
        "Read [[Billing|the billing page]] first.",
        unless="TOML table",
    ),
    _p("highlight", r"(?<![=\w])==(?=[^\s=])[^=\n]*[^\s=]==(?!=)", "This is ==important==."),
    _p("callout", r"^[ \t]*(?:>[ \t]*)+\[![\w-]+\][+-]?", "> [!note] Before you start"),
    _p("Obsidian comment", r"%%", "Visible %%draft note%% text."),
    _p("block id", r"(?:^|[ \t])\^[A-Za-z0-9][\w-]*[ \t]*$", "A paragraph to link to ^intro-1"),
    # the key runs up to its `::` (a PyPI classifier, `Framework :: Flask`, spaces it out)
    _p(
        "Dataview field",
        r"(?:^|[\[(])[ \t]*[A-Za-z][\w -]{0,40}(?<![ \t])::[ \t]+\S",
        "due:: 2024-05-01",
    ),
    # Sphinx / reStructuredText / MyST
    _p(
        "Sphinx role",
        r"(?<![\w:]):[a-z][\w.+-]*(?::[a-z][\w.+-]*)?:`|(?<!\w)\{[a-z][\w:.+-]*\}`",
        "See :ref:`install` or {doc}`setup`.",
    ),
    _p("reST directive", r"^[ \t]*\.\.[ \t]+[\w:-]+::", ".. note::"),
    _p("reST target", r"^[ \t]*\.\.[ \t]+_[^:\n]+:|^\([\w-]+\)=[ \t]*$", ".. _install:"),
    _p("MyST directive", r"^[ \t]*(?:`{3,}|~{3,})[ \t]*\{[\w-]+\}", "```{note}"),
    # Templates and site generators
    _p("shortcode", r"\{\{[<%]|[>%]\}\}", "{{< hint info >}} or {{% notice %}}"),
    _p("Liquid/Jinja tag", r"(?<!\{)\{%-?[ \t]*\w", "{% include note.html %}"),
    _p("template expression", r"\{\{(?![<%])-?[ \t]*[\w.\"'(\[|-].*?\}\}", "Hi {{ page.title }}"),
    _p("Templater/ERB tag", r"<%[=_-]?[ \t].*?%>", "<% tp.date.now() %>"),
    # A tag the reading cannot drop: it closes on a later line (Ruby components' arguments).
    _p(
        "ERB tag over several lines",
        r"<%(?!%)[=_#-]?[ \t](?!.*%>)",
        "<% api_info = ApiInfoComponent.new(",
    ),
    _p("admonition", r"(?:^|[ \t])(?:!!!|\?\?\?\+?)[ \t]+[\w-]+", '!!! warning "Careful"'),
    _p("content tab", r"^[ \t]*===\+?[ \t]+\"", '=== "Linux"'),
    _p("colon fence", r":::", ":::tip Keep it short"),
    _p("snippet", r"-{1,2}8<-{1,2}", '--8<-- "snippets/x.md"'),
    _p(
        "attributes",
        r"(?<![{_^])\{:?[ \t]*(?:[#.][\w.-]+|[\w-]+=[^\s}]+)(?:[ \t]+[^}\n]*)?\}(?!\})"
        r"|\{:[ \t]*[^}\n]*\}",
        "## Install {#install .wide}",
    ),
    _p(
        "icon",
        r"(?<![\w:]):(?:material|fontawesome|octicons|simple)-[\w-]+:(?![\w:])",
        "Click :material-pencil: to edit.",
    ),
    _p("footnote", r"\[\^[^\]\s]+\]", "Fees apply.[^1]"),
    # MDX: an import or export line, a component's tag (`<Token>` placeholders are named too:
    # a reader of the rendered page would not see them either).
    _p(
        "MDX import/export",
        r"^[ \t]*(?:import[ \t](?:.*[ \t]from[ \t]*['\"]|[ \t]*['\"][^'\"]*\.\w+['\"])"
        r"|export[ \t]+(?:const|let|var|function|default|\{))",
        "import Tabs from '@theme/Tabs';",
    ),
    _p("JSX component", r"</?[A-Z][\w]*(?:\.[\w$]+)*(?:[\s/>]|$)", '<TabItem value="mac">'),
)

# Addresses are not text to read for markup: a bare URL, an autolink, a link's destination.
_ADDRESS = re.compile(r"<?\bhttps?://[^\s<>]*>?|\]\((?:<[^<>\n]*>|[^)\s]*)(?:[ \t]+\"[^\"]*\")?\)")


@dataclass(frozen=True)
class Leftover:
    kind: str
    line: str  # the line as written, stripped


def line_leftovers(written: str) -> list[Leftover]:
    """The kinds of leftover syntax on one line read as prose (not inside a code block)."""
    raw = _ADDRESS.sub(lambda match: " " * len(match.group()), written)
    # A code span keeps its opening backtick: a role is `:ref:` followed by one.
    outside_code = CODE_SPAN.sub(lambda match: "`" + " " * (len(match.group()) - 1), raw)
    found: list[Leftover] = []
    for pattern in PATTERNS:
        if pattern.unless and any(leftover.kind == pattern.unless for leftover in found):
            continue
        if pattern.regex.search(outside_code):
            found.append(Leftover(pattern.kind, written.strip()))
    return found
