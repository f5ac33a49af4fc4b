"""The check of what the chunker produced: syntax that survived into plain text (issue 29)."""

from __future__ import annotations

import pytest

from kb.chunking.leftovers import PATTERNS, line_leftovers
from kb.chunking.lines import markup_leftovers


@pytest.mark.parametrize("pattern", PATTERNS, ids=[pattern.kind for pattern in PATTERNS])
def test_each_pattern_finds_its_own_example(pattern) -> None:
    kinds = [leftover.kind for leftover in line_leftovers(pattern.example)]

    assert pattern.kind in kinds


@pytest.mark.parametrize("pattern", PATTERNS, ids=[pattern.kind for pattern in PATTERNS])
def test_no_pattern_reads_its_example_inside_code(pattern) -> None:
    text = f"```markdown\n{pattern.example}\n```\n"

    assert markup_leftovers(text) == []


PROSE = [
    "Refunds are paid within 30 days of the request.",
    "The product of a*b*c is commutative, and 2 * 3 * 4 = 24.",
    "Plans cost $5 a month, or $50 a year (save $10).",
    "See https://example.com/search?q==x==&a={{b}} for details.",
    "Read [the guide](https://example.com/a==b==c) first.",
    "Use `{{< hint >}}`, `[[Page]]`, `==x==` and `:ref:` in code spans.",
    "If x == y and y == z then x == z.",
    "A nested list [[1, 2], [3, 4]] in prose, and [[1]](https://example.com) is a link.",
    "Wow!!! That was fast. Is it done??? Yes.",
    "The ratio is 3:2, at 10:30 the job runs; C++ uses std::vector for this.",
    "An email to help@example.com, a price of 5% and 100% uptime.",
    "Tags like #billing and #setup/linux stay as words.",
    "Press Ctrl+C, then type y and Enter.",
    "- [ ] an open task, - [x] a done one",
    "The object {} is empty and [] is an empty list.",
    "x^2 + y^2 = z^2, and 2^10 is 1024.",
    # a PyPI classifier is not a Dataview field (Flask's docs: "packages tagged with")
    "Search PyPI for packages tagged with [Framework :: Flask](https://pypi.org/search/).",
]


@pytest.mark.parametrize("line", PROSE)
def test_ordinary_prose_is_not_markup(line: str) -> None:
    assert line_leftovers(line) == []


def test_json_in_a_code_block_is_not_a_template() -> None:
    text = 'Send:\n\n```json\n{"a": {"b": {{1}}}, "c": "{% x %}"}\n```\n\nDone.'

    assert markup_leftovers(text) == []


def test_a_fence_inside_a_quote_is_code() -> None:
    # an Obsidian callout's example: the scanner marks no fence inside a quote
    text = "> [!example]\n> ```text\n> {{date:YYYY-MM-DD}} ==x==\n> ```\n> After ==this==."

    assert [(leftover.kind, leftover.line) for leftover in markup_leftovers(text)] == [
        ("callout", "> [!example]"),
        ("highlight", "> After ==this==."),
    ]


def test_an_indented_code_block_is_code_but_a_list_continuation_is_not() -> None:
    text = "Template:\n\n    due before {{date}}\n\n- item\n\n    see [[Page]]\n"

    assert [leftover.kind for leftover in markup_leftovers(text)] == ["wiki link"]


def test_each_kind_on_a_line_is_reported_once() -> None:
    found = line_leftovers("> [!tip] Read [[A]] and [[B]], ==then== :ref:`x`")

    assert [leftover.kind for leftover in found] == [
        "wiki link",
        "highlight",
        "callout",
        "Sphinx role",
    ]


def test_a_toml_table_header_is_not_a_wiki_link_and_a_link_text_in_brackets_is_neither() -> None:
    assert [leftover.kind for leftover in line_leftovers("[[menus.main]]")] == ["TOML table"]
    assert line_leftovers("See the [[[services]]](/docs/reference/) section.") == []
    assert [leftover.kind for leftover in line_leftovers("see [[billing]]")] == ["wiki link"]
    assert [leftover.kind for leftover in line_leftovers("date = '{{ .Date }}'")] == [
        "template expression"
    ]


def test_an_erb_tag_spread_over_several_lines_is_reported() -> None:
    # given a page of Ruby components (Fly.io's Machines API reference) whose tag opens on one
    # line and closes lines later: the check reads a chunk's lines as written, and such a tag
    # left in one (by a chunker before version 8) must be named, not reported as no markup left
    text = (
        "Given the name of a Fly App, get a list of all its volumes.\n\n"
        "<% api_info = ApiInfoComponent.new(\n"
        "  heading: 'Path parameters',\n"
        "  name: 'app_name',\n"
        ") %>\n"
    )

    # when the chunk's text is checked
    found = markup_leftovers(text)

    # then the opening line is named as a tag left open
    assert [(leftover.kind, leftover.line) for leftover in found] == [
        ("ERB tag over several lines", "<% api_info = ApiInfoComponent.new(")
    ]
