from __future__ import annotations

from pathlib import Path

import pytest

from search.tooling.evalsets.cases import (
    cases_as_lines,
    cases_derive,
    clean_inline,
    how_to_question,
)
from search.tooling.evalsets.pages import pages_read

FAQ = """# FAQ

## Why is my app stuck in the Progressing state?

A health check that never passes keeps it there.

## Examples

Nothing to see.
"""

HOW_TO = """---
title: Installing the agent
description: Install the agent on a Linux host.
---

The agent runs as a service.

## Upgrade the agent

Stop it, replace the binary, start it.
"""

OPTIONS = """# Server settings

## Flags

| Name | Description |
|------|-------------|
| `--insecure` | Serve plain HTTP without TLS, for use behind a terminating proxy. |
| `--port` | Port. |

```
      --log-level string   The level of detail written to the server log file
```
"""

FUNCTION = """---
title: strings.Truncate
description: Returns the given string truncated to a maximum length without cutting words.
---

Since templates are HTML-aware, truncate handles HTML.

## Examples

`{{ truncate 10 .Content }}`
"""

# The same how-to heading on two pages: which page answers it is ambiguous.
DUPLICATE_A = "# Alpha\n\n## Configure the cache\n\nAlpha caches for a minute.\n"
DUPLICATE_B = "# Beta\n\n## Configure the cache\n\nBeta caches for an hour.\n"


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    (folder / "functions" / "strings").mkdir(parents=True)
    (folder / "faq.md").write_text(FAQ)
    (folder / "install.md").write_text(HOW_TO)
    (folder / "server.md").write_text(OPTIONS)
    (folder / "functions" / "strings" / "Truncate.md").write_text(FUNCTION)
    (folder / "alpha.md").write_text(DUPLICATE_A)
    (folder / "beta.md").write_text(DUPLICATE_B)
    (folder / "broken.md").write_text("---\ntitle: [unclosed\n---\n\nBody.\n")
    return folder


def _cases(folder: Path) -> dict[str, dict[str, object]]:
    derivation = cases_derive(pages_read(folder), reference_folders=["functions/"])
    return {line["question"]: line for line in cases_as_lines(derivation.cases)}


def test_faq_heading_asks_for_its_section(docs: Path) -> None:
    case = _cases(docs)["Why is my app stuck in the Progressing state?"]

    assert case["kind"] == "natural"
    assert case["relevant"] == ["faq.md"]
    assert case["relevant_sections"] == ["FAQ > Why is my app stuck in the Progressing state?"]


def test_how_to_title_heading_and_description_become_questions(docs: Path) -> None:
    cases = _cases(docs)

    # The title and the page description both point at the page's lead section ("" label).
    assert cases["How do I install the agent?"]["relevant_sections"] == [""]
    assert cases["How do I install the agent on a Linux host?"]["relevant"] == ["install.md"]
    assert cases["How do I upgrade the agent?"]["relevant_sections"] == ["Upgrade the agent"]


def test_option_table_and_flag_descriptions_are_definition_questions(docs: Path) -> None:
    cases = _cases(docs)

    table = cases["Serve plain HTTP without TLS, for use behind a terminating proxy."]
    flag = cases["The level of detail written to the server log file"]
    assert (table["kind"], table["relevant"]) == ("definition", ["server.md"])
    assert table["relevant_sections"] == flag["relevant_sections"] == ["Server settings > Flags"]
    assert "Port." not in cases  # fewer than six words


def test_reference_page_description_asks_for_the_page(docs: Path) -> None:
    question = "Returns the given string truncated to a maximum length without cutting words."
    case = _cases(docs)[question]

    assert case["kind"] == "definition"
    assert case["relevant"] == ["functions/strings/Truncate.md"]
    assert case["relevant_sections"] == [""]


def test_ambiguous_and_generic_questions_are_left_out(docs: Path) -> None:
    questions = set(_cases(docs))

    assert "How do I configure the cache?" not in questions
    assert not any("Examples" in question for question in questions)


def test_rejected_files_are_counted_and_output_is_stable(docs: Path) -> None:
    first = cases_derive(pages_read(docs), reference_folders=["functions/"])
    second = cases_derive(pages_read(docs), reference_folders=["functions/"])

    assert first.rejected_files == 1
    assert cases_as_lines(first.cases) == cases_as_lines(second.cases)


def test_sampling_caps_each_kind(docs: Path) -> None:
    derivation = cases_derive(pages_read(docs), reference_folders=["functions/"], per_kind=2)

    kinds = [case.kind for case in derivation.cases]
    assert kinds.count("natural") == 2 and kinds.count("definition") == 2


@pytest.mark.parametrize(
    ("title", "question"),
    [
        ("Installing Argo CD", "How do I install Argo CD?"),
        ("Deploy an app", "How do I deploy an app?"),
        ("Setting up `kubectl`", "How do I set up kubectl?"),
        ("How to configure TLS", "How do I configure TLS?"),
        ("Architecture", None),
        ("Install", None),
        ("Stop vs. suspend", None),
    ],
)
def test_how_to_titles_are_rephrased_by_one_rule(title: str, question: str | None) -> None:
    assert how_to_question(title) == question


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        # Starship's settings table: the option name is code, its underscores are not emphasis
        (
            "Which filenames should trigger this module (needs `only_with_files` to be true).",
            "Which filenames should trigger this module (needs only_with_files to be true).",
        ),
        ("Set `__init__.py` and *then* **restart**", "Set __init__.py and then restart"),
        ("An _emphasised_ word", "An emphasised word"),
    ],
)
def test_inline_markup_is_removed_but_code_keeps_its_characters(text: str, plain: str) -> None:
    assert clean_inline(text) == plain
