"""What an answer can quote (`assistant.units`): the pieces a passage is cut into and the signals
each is scored by, on passages shaped like real help-center pages."""

from __future__ import annotations

import dataclasses
import datetime

import numpy as np
import pytest

from assistant.generators.base import Source
from assistant.units import (
    FEATURES,
    QuestionShape,
    UnitWeights,
    brought_units,
    continued,
    continuing_unit,
    following_unit,
    lexemes,
    preceding_sentence,
    question_as_read,
    question_lexemes,
    unit_features,
    units_of,
    units_score,
)
from kb.chunking import ChunkLimits, chunk_markdown


def _source(
    text: str,
    *,
    number: int = 1,
    section: str = "Guide",
    document: int | None = None,
    ordinal: int = -1,
) -> Source:
    document = number if document is None else document
    return Source(
        number=number,
        chunk_id=number,
        document_id=document,
        path=f"page-{document}.md",
        title="Page",
        section=section,
        updated_on=datetime.date(2026, 1, 1),
        text=text,
        char_start=0,
        char_end=len(text),
        ordinal=ordinal,
    )


def _feature(name: str, row: np.ndarray) -> float:
    return float(row[FEATURES.index(name)])


def test_a_numbered_procedure_is_one_unit_with_its_lead_in_beside_its_steps() -> None:
    # given
    source = _source(
        "To turn on two-factor authentication:\n\n"
        "1. Go to **Settings > Security**.\n"
        "2. Click [Enable](https://example.com/enable).\n"
        "3. Scan the QR code.\n\n"
        "You can turn it off later."
    )

    # when
    units = units_of([source])

    # then
    procedure = [unit for unit in units if unit.kind == "procedure"]
    assert [unit.text for unit in procedure] == [
        "To turn on two-factor authentication: 1. Go to Settings > Security. 2. Click Enable. "
        "3. Scan the QR code."
    ]
    steps = [unit for unit in units if unit.kind == "item"]
    assert len(steps) == 3 and set(procedure[0].holds) == {unit.position for unit in steps}
    assert "You can turn it off later." in [unit.text for unit in units]


def test_a_page_section_read_beside_the_passages_gets_a_share_of_its_pages_rank_credit() -> None:
    # given: passages 1-3 retrieved (1 and 3 of one page), then two sections read beside them,
    # one of page 1 and one of a page with no retrieved passage among the units
    sentence = "Volumes can be extended at any time."
    retrieved = [_source(sentence, number=number) for number in (1, 2, 3)]
    retrieved[2] = dataclasses.replace(retrieved[2], document_id=1)
    beside = [
        dataclasses.replace(_source(sentence, number=4), document_id=1, page_section=True),
        dataclasses.replace(_source(sentence, number=5), document_id=9, page_section=True),
    ]

    # when
    rows = unit_features(question="extend a volume", units=units_of([*retrieved, *beside]))

    # then: 1 / (1 + place) for the retrieved, three quarters of page 1's first passage's for its
    # section, and three quarters of the last place's for the other
    assert [round(_feature("rank", row), 4) for row in rows] == [1.0, 0.5, 0.3333, 0.75, 0.1875]


@pytest.mark.parametrize(
    "indent",
    [
        pytest.param("   ", id="indented under the step (Plausible)"),
        pytest.param("", id="listed right after it (Fly.io)"),
    ],
)
def test_the_options_listed_under_a_step_are_read_into_it_and_each_under_it(indent: str) -> None:
    # given: a step that promises a choice, then its options (Plausible's "Transfer account
    # ownership")
    source = _source(
        "If you still have access to the account email:\n\n"
        "1. Reset the password using the account email address\n"
        "2. Log in to the account\n"
        "3. Choose what suits you. From there you can either:\n"
        f"{indent}- [Change the account email address](change-email.md) to one you control\n"
        f"{indent}- Transfer individual sites out to another account\n\n"
        "Contact support if neither works for you."
    )

    # when
    units = units_of([source])

    # then: the procedure states the choice it promises, each option is read under its step,
    # and quoting the procedure quotes every unit of its list, not the sentence after it
    procedure = next(unit for unit in units if unit.kind == "procedure")
    assert procedure.text == (
        "If you still have access to the account email: 1. Reset the password using the account "
        "email address 2. Log in to the account 3. Choose what suits you. From there you can "
        "either: Change the account email address to one you control; Transfer individual "
        "sites out to another account"
    )
    items = [unit for unit in units if unit.kind == "item"]
    assert [unit.text for unit in items][-2:] == [
        "From there you can either: Change the account email address to one you control",
        "From there you can either: Transfer individual sites out to another account",
    ]
    assert set(procedure.holds) == {unit.position for unit in items}


@pytest.mark.parametrize("indent", ["  ", "    ", "\t"])
def test_an_item_nested_under_another_is_read_under_it_not_under_the_list_s_lead_in(
    indent: str,
) -> None:
    # given: Argo CD's "Application Pruning & Resource Deletion": two items nested under the
    # third, which they explain, and a nested list that its item introduces
    source = _source(
        "The end result is that when an ApplicationSet is deleted, the following occurs:\n\n"
        "- The `ApplicationSet` resource itself is deleted\n"
        "- Any deployed resources on the managed cluster will be deleted.\n"
        f"{indent}- Argo CD is responsible for handling this deletion, via the finalizer.\n"
        f"{indent}- To preserve deployed resources, set `preserveResourcesOnDeletion` to true.\n"
        "- Its events are recorded in one of these places:\n"
        f"{indent}- the controller's log when the deletion starts\n"
        "- Nothing else is deleted."
    )

    # when
    items = [unit.text for unit in units_of([source]) if unit.kind == "item"]

    # then: what the page shows under an item is read under it: alone where the item states
    # something, under it where it introduces them; the list's own lead-in never reaches them
    # ("…the following occurs: To preserve deployed resources…" is not what the page says)
    lead_in = "The end result is that when an ApplicationSet is deleted, the following occurs:"
    assert items == [
        f"{lead_in} The `ApplicationSet` resource itself is deleted",
        f"{lead_in} Any deployed resources on the managed cluster will be deleted.",
        "Argo CD is responsible for handling this deletion, via the finalizer.",
        "To preserve deployed resources, set `preserveResourcesOnDeletion` to true.",
        f"{lead_in} Its events are recorded in one of these places: the controller's log when "
        "the deletion starts",
        f"{lead_in} Nothing else is deleted.",
    ]


def test_an_option_that_promises_more_leads_into_the_ones_under_it() -> None:
    source = _source(
        "1. Add a Prometheus data source\n"
        "2. Fill the form with the following:\n"
        "- URL: `https://api.fly.io/prometheus/<org-slug>/`\n"
        "- Custom HTTP Headers -> Add Header:\n"
        "   - Header: `Authorization`\n"
        "   - Value: `FlyV1 <token>`\n\n"
        "You're all set."
    )

    units = units_of([source])

    procedure = next(unit for unit in units if unit.kind == "procedure")
    assert procedure.text == (
        "1. Add a Prometheus data source 2. Fill the form with the following: URL: "
        "`https://api.fly.io/prometheus/<org-slug>/`; Custom HTTP Headers -> Add Header: "
        "Header: `Authorization`; Value: `FlyV1 <token>`"
    )


def test_a_numbered_list_a_table_broke_goes_on_from_the_number_the_page_shows() -> None:
    # given: steps around a table (the sample's "Setting up SAML"), or written "1." each
    source = _source(
        "1. Go to Settings > Security and click Configure SAML.\n"
        "2. Copy these values into your IdP:\n\n"
        "| Field | Value |\n|---|---|\n| Name ID format | `emailAddress` |\n\n"
        "3. Upload your IdP's metadata XML.\n"
        "1. Click Test connection and sign in.\n"
    )

    units = units_of([source])

    assert [unit.text for unit in units if unit.kind == "procedure"][-1] == (
        "3. Upload your IdP's metadata XML. 4. Click Test connection and sign in."
    )


def test_a_bulleted_list_is_no_procedure() -> None:
    units = units_of([_source("Included in every plan:\n\n- Invoices and receipts\n- Webhooks")])

    assert [unit.kind for unit in units] == ["item", "item"]


@pytest.mark.parametrize(
    "block",
    [
        pytest.param("```toml\n[services.rss]\nlimit = 42\n```\n", id="fence"),
        # Hugo's documentation shows its configuration in a shortcode, as TOML, YAML and JSON
        pytest.param(
            "{{< code-toggle file=hugo >}}\n[services.rss]\nlimit = 42\n{{< /code-toggle >}}\n",
            id="hugo code-toggle",
        ),
    ],
)
def test_a_short_configuration_block_is_quoted_with_the_sentence_that_introduces_it(
    block: str,
) -> None:
    # given
    source = _source(
        "By default each feed is unlimited. Change this in your project configuration:\n\n" + block
    )

    # when
    units = units_of([source])

    # then
    code = [unit for unit in units if unit.kind == "code"]
    assert len(code) == 1
    assert code[0].text == "Change this in your project configuration:"
    assert (code[0].language, code[0].code) == ("toml", "[services.rss]\nlimit = 42")
    assert "rss" in lexemes(code[0].words_text)


@pytest.mark.parametrize(
    "info",
    [
        pytest.param(
            'go-html-template {file="layouts/_markup/render-codeblock-mermaid.html"}', id="hugo"
        ),
        pytest.param('html title="layouts/_markup/render-codeblock-mermaid.html"', id="docusaurus"),
        pytest.param("html filename='layouts/_markup/render-codeblock-mermaid.html'", id="quoted"),
    ],
)
def test_a_code_block_keeps_the_file_name_its_fence_gives_it(info: str) -> None:
    # given: Hugo's, Docusaurus' and MkDocs' pages show a block's file name above it, and the
    # name is often what the reader must create ("render-codeblock-mermaid.html")
    source = _source(
        "Create your own using a code block render hook:\n\n"
        f'```{info}\n<pre class="mermaid">\n  {{{{ .Inner }}}}\n</pre>\n```\n'
    )

    # when
    (unit,) = units_of([source])

    # then
    assert unit.kind == "code"
    assert unit.caption == "layouts/_markup/render-codeblock-mermaid.html"
    assert unit.language in {"go-html-template", "html"}
    assert "render-codeblock-mermaid.html" in unit.words_text


@pytest.mark.parametrize(
    "info",
    [
        pytest.param('html {data-title="Example"}', id="another attribute's name ends so"),
        pytest.param('html subtitle="Example"', id="a longer word"),
    ],
)
def test_only_a_file_name_or_title_attribute_is_a_caption(info: str) -> None:
    # given: an attribute whose name merely ends in "title" or "file" names no file
    source = _source(f"Create your own using this template:\n\n```{info}\n<p>Hi</p>\n```\n")

    # when
    (unit,) = units_of([source])

    # then
    assert (unit.kind, unit.caption) == ("code", "")


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("Reply like this:\n\n```markdown\nRefunds take 365 days.\n```", id="prose"),
        pytest.param("Reply like this:\n\n```\nRefunds take 365 days.\n```", id="no language"),
        # a quoted reply starts with ">" as a PowerShell prompt does; it is still an example
        pytest.param(
            "Reply like this:\n\n```email\n> Refunds take 365 days?\nYes.\n```", id="e-mail"
        ),
        pytest.param(
            "Write the note like this:\n\n```markdown\n> Refunds take 365 days.\n```",
            id="markdown quote",
        ),
        pytest.param("Some text.\n\n```toml\nlimit = 42\n```", id="no lead-in"),
        pytest.param(
            "Set these:\n\n```yaml\n" + "\n".join(f"k{n}: {n}" for n in range(20)) + "\n```",
            id="too long",
        ),
    ],
)
def test_a_code_block_that_is_an_example_or_a_listing_is_never_a_unit(text: str) -> None:
    units = units_of([_source(text)])

    assert all(unit.kind != "code" for unit in units)
    assert all("365" not in unit.words_text for unit in units)


def test_code_fenced_under_a_list_item_is_never_read_into_the_item() -> None:
    # given: a MkDocs step with its command fenced four spaces in, and a note under it
    source = _source(
        "1. Create a multi-attach volume:\n\n"
        "    ```sh\n"
        "    openstack volume create --type standard.multiattach data\n"
        "    ```\n"
        "    Replace `data` by the name you want.\n"
    )

    # when
    units = units_of([source])

    # then
    assert all("```" not in unit.text for unit in units)
    assert [unit.text for unit in units] == [
        "Create a multi-attach volume: `openstack volume create --type standard.multiattach data`",
        "Replace `data` by the name you want.",
    ]


@pytest.mark.parametrize("indent", ["    ", "   "], ids=["mkdocs", "commonmark"])
def test_a_procedure_keeps_the_commands_fenced_under_its_steps(indent: str) -> None:
    # given: each step's command is fenced under it, as Fly.io's and VitePress' pages write
    source = _source(
        "1. Scale the app to zero Machines:\n\n"
        f"{indent}```cmd\n{indent}fly scale count 0\n{indent}```\n\n"
        "2. Scale back up to 2 or more Machines:\n\n"
        f"{indent}```cmd\n{indent}fly scale count 2\n{indent}```\n"
    )

    # when
    units = units_of([source])

    # then
    assert [(unit.kind, unit.text) for unit in units] == [
        ("item", "Scale the app to zero Machines: `fly scale count 0`"),
        ("item", "Scale back up to 2 or more Machines: `fly scale count 2`"),
        (
            "procedure",
            "1. Scale the app to zero Machines: `fly scale count 0` "
            "2. Scale back up to 2 or more Machines: `fly scale count 2`",
        ),
    ]


def test_a_long_block_under_an_item_is_not_read_into_it_and_the_list_goes_on() -> None:
    source = _source(
        "1. Create `deploy.yml` with this content:\n\n"
        "   ```yaml\n" + "".join(f"   key{n}: {n}\n" for n in range(8)) + "   ```\n\n"
        "2. Push your changes to the main branch.\n"
    )

    units = units_of([source])

    assert all("key1" not in unit.text for unit in units)
    assert units[-1].kind == "procedure"
    assert units[-1].text == (
        "1. Create `deploy.yml` with this content: 2. Push your changes to the main branch."
    )


def test_code_fenced_inside_a_quote_is_code() -> None:
    # given: Argo CD's upgrade notes fence a command inside a quoted warning
    source = _source(
        "> If the server only offers ssh-rsa, try to connect to it after removing the ssh-rsa "
        "algorithm from the allowed list:\n"
        ">\n"
        "> ```shell\n"
        ">   ssh -oHostKeyAlgorithms=-ssh-rsa user@host\n"
        "> ```\n"
        ">\n"
        "> If the host key verification fails, the server software should be upgraded.\n"
    )

    # when
    units = units_of([source])

    # then
    assert all("```" not in unit.text and "HostKey" not in unit.text for unit in units)
    [code] = [unit for unit in units if unit.kind == "code"]
    assert (code.language, code.code) == ("shell", "  ssh -oHostKeyAlgorithms=-ssh-rsa user@host")
    assert code.text.endswith("from the allowed list:")


def test_a_block_after_a_statement_is_quoted_with_it_and_the_statement_not_again() -> None:
    # given: Flask's docs, which put most code after a statement rather than a colon
    source = _source(
        "The `flask` command is implemented using Click.\n\n"
        "This example adds the command `create-user` that takes the argument `name`.\n\n"
        '```python\n@app.cli.command("create-user")\n@click.argument("name")\n'
        "def create_user(name):\n    ...\n```\n"
    )

    # when
    units = units_of([source])

    # then
    assert [(unit.kind, unit.text) for unit in units] == [
        ("sentence", "The `flask` command is implemented using Click."),
        ("code", "This example adds the command `create-user` that takes the argument `name`."),
    ]
    assert "app.cli.command" in units[1].code


CONSOLE_SESSION = (
    # a command written as plain text, as Sphinx's `code-block:: none` writes it
    "To measure the code coverage of your tests, use the `coverage` command to run pytest "
    "instead of running it directly.",
    "$ coverage run -m pytest",
    "console",
)
SETTINGS = (
    # Fly.io's pages give a `fly.toml` section in a fence that names no language
    "Configure in `fly.toml`:",
    '[http_service]\n  auto_stop_machines = "suspend"  # or "stop"\n  auto_start_machines = true',
    "toml",
)


@pytest.mark.parametrize("language", ["", "text", "none"])
@pytest.mark.parametrize(
    ("lead_in", "block", "read_as"),
    [pytest.param(*CONSOLE_SESSION, id="console"), pytest.param(*SETTINGS, id="settings")],
)
def test_a_plain_block_is_read_as_what_it_holds_a_console_session_or_settings(
    language: str, lead_in: str, block: str, read_as: str
) -> None:
    # given: a block whose fence names no language, or plain text
    source = _source(f"{lead_in}\n\n```{language}\n{block}\n```\n")

    # when
    code = [unit for unit in units_of([source]) if unit.kind == "code"]

    # then: it is quoted as code of what it holds, with the sentence that introduces it
    assert [(unit.language, unit.text, unit.code) for unit in code] == [(read_as, lead_in, block)]


def test_a_table_s_lead_in_is_quoted_with_its_rows() -> None:
    # given: the retry count is stated only in the sentence that introduces the schedule, and
    # a second table's lead-in only promises it
    source = _source(
        "By default, Acme retries a failed payment **4 times**:\n\n"
        "| Retry | When |\n|---|---|\n| 1st retry | 1 day after the original failure |\n"
        "| **2nd** retry | 3 days after the [original failure](f.md) |\n\n"
        "The schedule is as follows:\n\n"
        "| Retry | When |\n|---|---|\n| 3rd retry | 5 days after the original failure |\n"
    )

    # when
    units = units_of([source])

    # then: each lead-in is a unit with its rows, as the page shows them, and holds their units
    assert [(unit.kind, unit.text) for unit in units] == [
        ("table", "By default, Acme retries a failed payment 4 times:"),
        ("row", "Retry: 1st retry; When: 1 day after the original failure"),
        ("row", "Retry: 2nd retry; When: 3 days after the original failure"),
        ("table", "The schedule is as follows:"),
        ("row", "Retry: 3rd retry; When: 5 days after the original failure"),
    ]
    assert units[0].code == (
        "| Retry | When |\n|---|---|\n"
        "| 1st retry | 1 day after the original failure |\n"
        "| 2nd retry | 3 days after the original failure |"
    )
    assert units[0].holds == (1, 2)
    assert units[3].holds == (4,)


def test_a_statement_before_a_table_is_a_sentence_not_its_lead_in() -> None:
    # given: the sample's API versions, whose paragraph states the current one and ends
    source = _source(
        "The current version is **`2026-06-01`**.\n\n"
        "| Version | Status |\n|---|---|\n| `2026-06-01` | Current |\n"
    )

    # when
    units = units_of([source])

    # then: it announces no rows; a quote of it shows none
    assert [(unit.kind, unit.code) for unit in units] == [("sentence", ""), ("row", "")]


def test_a_table_too_long_to_quote_leaves_its_lead_in_unquoted() -> None:
    # given: a lead-in stating an amount over more rows than an answer can show
    rows = "".join(f"| {n}. retry | {n} days after the original failure |\n" for n in range(30))
    source = _source(
        "By default, Acme retries a failed payment 30 times:\n\n"
        f"| Retry | When |\n|---|---|\n{rows}"
    )

    # when
    units = units_of([source])

    # then: it promises what a quote cannot show; the rows are read one by one
    assert {unit.kind for unit in units} == {"row"}
    assert len(units) == 30


def test_a_table_unit_escapes_a_pipe_its_cell_shows() -> None:
    # given: a cell that shows a pipe, written escaped
    source = _source(
        "Acme accepts 2 operators in a filter:\n\n"
        "| Operator | Meaning |\n|---|---|\n| `a \\| b` | either |\n| `a & b` | both |\n"
    )

    # when
    table = next(unit for unit in units_of([source]) if unit.kind == "table")

    # then: the table it quotes has two columns, the pipe escaped in its cell
    assert table.code.splitlines()[2] == "| `a \\| b` | either |"


@pytest.mark.parametrize(
    "after",
    [
        pytest.param(
            "would allow the `app-team-one` and `app-team-two` namespaces for managing "
            "`Application` resources.",
            id="argo-cd",
        ),
        pytest.param("and then serving the `asgi_app` with the ASGI server.", id="flask"),
    ],
)
def test_half_a_sentence_after_the_code_block_that_interrupted_it_is_not_a_unit(after: str) -> None:
    # given: Argo CD's and Flask's pages, whose sentence runs on past the block it introduces
    source = _source(
        "The namespaces can also be set in the `argocd-cmd-params-cm` ConfigMap. For example:\n\n"
        "```yaml\ndata:\n  application.namespaces: app-team-one, app-team-two\n```\n\n"
        f"{after} After a change, the workloads need to be restarted.\n"
    )

    # when
    units = units_of([source])

    # then: its next sentence is one; the half before it is not
    assert [unit.text for unit in units if unit.kind == "sentence"] == [
        "The namespaces can also be set in the `argocd-cmd-params-cm` ConfigMap.",
        "After a change, the workloads need to be restarted.",
    ]


def test_a_sentence_after_a_code_block_that_opens_with_a_name_in_small_letters_is_one() -> None:
    # given: Fly.io's page, whose sentence after the command opens with the program's name
    source = _source(
        "Run the app with a file:\n\n```\nfly machine run . --file-local /x=y\n```\n\n"
        "flyctl Base64-encodes the file contents and stores the result in the property.\n"
    )

    # when
    units = units_of([source])

    # then
    assert [unit.text for unit in units] == [
        "flyctl Base64-encodes the file contents and stores the result in the property."
    ]


def test_a_pipe_escaped_in_a_cell_is_the_cells_text() -> None:
    # given: AutoHotkey's operator table and the reST reader write a pipe in a cell as `\|`
    source = _source(
        "| Operator | Description |\n|---|---|\n"
        "| OR \\|\\| | Both of these are logical-OR. |\n"
        "| IfEqual | Synonymous with: `if Var = Value` \\| `if Var != Value`. |\n"
    )

    # when
    units = units_of([source])

    # then: each row has its two cells, each escaped pipe read as the pipe it shows
    assert [unit.text for unit in units if unit.kind == "row"] == [
        "Operator: OR ||; Description: Both of these are logical-OR.",
        "Operator: IfEqual; Description: Synonymous with: `if Var = Value` | `if Var != Value`.",
    ]


def test_a_table_written_without_its_outer_pipes_is_read_row_by_row() -> None:
    # given: GFM lets a table leave out its outer pipes, as 55 of Hugo's pages do
    source = _source(
        "Path|Pattern|Match\n:--|:--|:--\n"
        "`images/foo/a.jpg`|`images/foo/*.jpg`|`true`\n"
        "`images/foo/a.jpg`|`images/*/*.png`|`false`\n\n"
        "A pattern matches a path when every part of it does.\n\n"
        "Sizes go in pixels | or in ems, as the theme says.\n"
    )

    # when
    units = units_of([source])

    # then: the line under the table, and a line with a pipe that no delimiter row follows, are
    # sentences
    assert [(unit.kind, unit.text) for unit in units] == [
        ("row", "Path: `images/foo/a.jpg`; Pattern: `images/foo/*.jpg`; Match: `true`"),
        ("row", "Path: `images/foo/a.jpg`; Pattern: `images/*/*.png`; Match: `false`"),
        ("sentence", "A pattern matches a path when every part of it does."),
        ("sentence", "Sizes go in pixels | or in ems, as the theme says."),
    ]


def test_a_sentence_that_goes_on_into_a_code_block_after_a_comma_introduces_it() -> None:
    # given: Sphinx pages run a sentence through its code ("by wrapping the Flask app," then
    # the code, then "and then serving the `asgi_app` …, e.g. using Hypercorn," and a command)
    source = _source(
        "The WsgiToAsgi adapter is recommended. You can use the adapter by wrapping the app,\n\n"
        "```python\nasgi_app = WsgiToAsgi(app)\n```\n\n"
        "and then serving the `asgi_app` with the ASGI server, e.g. using Hypercorn,\n\n"
        "```text\n$ hypercorn module:asgi_app\n```\n"
    )

    # when
    units = units_of([source])

    # then: each half of the sentence is quoted with the code it leads into, never alone
    assert [(unit.kind, unit.text, unit.code) for unit in units] == [
        ("sentence", "The WsgiToAsgi adapter is recommended.", ""),
        (
            "code",
            "You can use the adapter by wrapping the app,",
            "asgi_app = WsgiToAsgi(app)",
        ),
        (
            "code",
            "and then serving the `asgi_app` with the ASGI server, e.g. using Hypercorn,",
            "$ hypercorn module:asgi_app",
        ),
    ]


def test_a_footnote_mark_is_not_quoted_and_ends_no_sentence_of_its_own() -> None:
    # given: Hugo's pages mark footnotes ("pages.[^1] If…"), which the chunker reads as `[1]`; a
    # quote showing "[1]" would read as one of the answer's own citations
    source = _source(
        "The `target` key limits cascaded values to a subset of pages.[1] If a target is "
        "omitted, values cascade to all pages.\n\n"
        "To avoid a conflict[2], disable the Strikethrough extension.\n\n"
        "A regex such as `x[1]` reads the first group, as [the guide][1] says.\n\n"
        # an Obsidian vault's footnote, as its import writes it (``kb.obsidian``)
        "Fees are charged monthly.\\[2\\] Refunds take about a week.\n"
    )

    # when
    units = units_of([source])

    # then
    assert [unit.text for unit in units] == [
        "The `target` key limits cascaded values to a subset of pages.",
        "If a target is omitted, values cascade to all pages.",
        "To avoid a conflict, disable the Strikethrough extension.",
        "A regex such as `x[1]` reads the first group, as the guide says.",
        "Fees are charged monthly.",
        "Refunds take about a week.",
    ]


def test_a_label_stays_over_the_sentences_left_when_its_last_one_leads_into_a_list() -> None:
    # given: Plausible's scroll-depth page labels a part in bold, and its paragraph's last
    # sentence introduces a list
    source = _source(
        "**Finding underperforming pages**\n\n"
        "Open the Top Pages report and sort it by scroll depth. Then read these columns:\n\n"
        "- Scroll depth, the share of the page read\n- Visits, the people who came\n"
    )

    # when
    units = units_of([source])

    # then: the sentence before the lead-in is still read under the label
    assert units[0].text == (
        "Finding underperforming pages: Open the Top Pages report and sort it by scroll depth."
    )


def test_a_table_whose_header_names_no_column_reads_each_row_by_its_first_cell() -> None:
    # given: a table without a header (Sphinx's headerless tables get an empty one)
    source = _source(
        "|   |   |\n| --- | --- |\n"
        "| `string` | (default) accepts any text without a slash |\n"
        "| `path` | like `string` but also accepts slashes |\n"
    )

    # when
    units = units_of([source])

    # then
    assert [(unit.kind, unit.text) for unit in units] == [
        ("row", "`string`: (default) accepts any text without a slash"),
        ("row", "`path`: like `string` but also accepts slashes"),
    ]


def test_a_line_ending_in_a_backslash_breaks_there_and_shows_no_backslash() -> None:
    # given: CommonMark's hard line break, a backslash at the end of a line, which API
    # references put after each of a method's fields and Hugo's docs after a book's details
    source = _source(
        "**Returns:** [Status](/entities/status)\\\n"
        "**OAuth:** Public for public statuses, user token + `read:statuses` for private\\\n"
        "**Version history:**\\\n"
        "2.7.0 - public statuses no longer require a token\n\n"
        "### Content adapters\n\n"
        "- Step 2: inspect the remote data to map its keys to front matter fields.\\\n"
        "  The example feed lists 250 books\n\n"
        "A path may end in a backslash, as in `C:\\\\`, and the sentence goes on.\n\n"
        "Start the server with `make serve` \\\n"
        "  and the port it prints.\n"
    )

    # when
    units = units_of([source])

    # then: each broken line is read on its own, as the page shows it (a bold line is the
    # label of what follows it, as on a line of its own); an escaped backslash, or one after a
    # space (a shell's line continuation), is no break
    assert [(unit.kind, unit.text) for unit in units] == [
        ("sentence", "OAuth: Public for public statuses, user token + `read:statuses` for private"),
        ("sentence", "Version history: 2.7.0 - public statuses no longer require a token"),
        ("item", "Step 2: inspect the remote data to map its keys to front matter fields."),
        ("item", "The example feed lists 250 books"),
        ("sentence", "A path may end in a backslash, as in `C:\\\\`, and the sentence goes on."),
        ("sentence", "Start the server with `make serve` \\ and the port it prints."),
    ]


def test_each_sentence_of_a_definition_is_read_under_its_term() -> None:
    # given: a definition list (PHP Markdown Extra, Goldmark, Pandoc, MkDocs' def_list), the
    # way Hugo's settings reference and API references describe each setting or parameter
    source = _source(
        "`baseURL`\n: (`string`) The absolute URL of your published site. Default is `/`.\n\n"
        "buildDrafts\n: (`bool`) Whether to include draft content when building a site.\n"
        "  Default is `false`.\n\n"
        "status\n: {{<required>}} String. The text content of the status.\n"
        ": Optional when media is attached to the post.\n\n"
        "`lang`\n: {{< deprecated-in 0.153.0 />}}\n: Use the [`sites`](#sites) setting instead.\n\n"
        "`path`\n: (`string`) A [glob pattern](g) matching the page's [logical path](g).\n\n"
        "`defines`\n: (`map`) Replacements made when building. It must be a map of strings:\n\n"
        '  ```go\n  {{ $d := dict "a" "b" }}\n  ```\n\n'
        "Why is my paged list not filtered?\n: You are probably paginating it twice.\n\n"
        "This paragraph after the list reads on its own.\n"
    )

    # when
    units = units_of([source])

    # then: a sentence after the first still says what it is about, as the page shows it
    # under the term; a term's links are no pointer to another page, and a definition that was
    # only a shortcode adds nothing
    assert [unit.text for unit in units] == [
        "`baseURL`: (`string`) The absolute URL of your published site.",
        "`baseURL`: Default is `/`.",
        "buildDrafts: (`bool`) Whether to include draft content when building a site.",
        "buildDrafts: Default is `false`.",
        "status: The text content of the status.",
        "status: Optional when media is attached to the post.",
        "`lang`: Use the `sites` setting instead.",
        "`path`: (`string`) A glob pattern matching the page's logical path.",
        "`defines`: (`map`) Replacements made when building.",
        "`defines`: It must be a map of strings:",  # with the code block it leads into
        "Why is my paged list not filtered? You are probably paginating it twice.",
        "This paragraph after the list reads on its own.",
    ]


def test_a_paragraph_indented_less_than_a_list_item_s_text_is_not_that_item_s() -> None:
    # given: a definition whose list is followed by a paragraph of the definition (indented as
    # the definition, less than the items' text: CommonMark reads it outside the list), the way
    # Hugo's FAQ gives the fix after the cases it applies to; then a list whose item goes on in
    # a paragraph indented under its text
    source = _source(
        "Why does the server miss file changes?\n"
        ": The file watcher may miss changes when:\n\n"
        "  - Running within WSL with files on a Windows partition\n"
        "  - Running with files on a removable drive\n\n"
        "  In these cases, use the `--poll` command line flag. For example, poll every 700 "
        "milliseconds with `--poll 700ms`.\n\n"
        "Exports run when:\n\n"
        "- You click Export now in the dashboard.\n\n"
        "  The file is then emailed to the account owner.\n"
    )

    # when
    units = units_of([source])

    # then: the fix is the definition's paragraph, read as sentences; the indented paragraph
    # under the last item's text is still that item's
    assert [(unit.kind, unit.text) for unit in units] == [
        (
            "item",
            "The file watcher may miss changes when: Running within WSL with files on a Windows "
            "partition",
        ),
        ("item", "The file watcher may miss changes when: Running with files on a removable drive"),
        ("sentence", "In these cases, use the `--poll` command line flag."),
        ("sentence", "For example, poll every 700 milliseconds with `--poll 700ms`."),
        ("item", "Exports run when: You click Export now in the dashboard."),
        ("item", "The file is then emailed to the account owner."),
    ]


def test_turn_on_and_turn_off_are_told_apart_by_their_word_pairs() -> None:
    # given
    on = _source("Go to Settings and click Enable.", section="Two-factor > Turning on 2FA")
    off = _source(
        "Go to Settings and click Disable.", number=2, section="Two-factor > Turning off 2FA"
    )

    # when
    features = unit_features(question="How do I turn on 2FA?", units=units_of([on, off]))

    # then
    assert _feature("pairs", features[0]) > _feature("pairs", features[1]) == 0.0


def test_the_rarer_a_question_word_the_more_a_unit_holding_it_scores() -> None:
    # given: both units hold one of the question's two words
    units = units_of(
        [
            _source("Invoices list every plan you pay for."),
            _source("Proration applies to every change.", number=2),
        ]
    )
    idfs = {"invoic": 0.5, "prorat": 6.0}

    # when
    features = unit_features(question="invoices and proration", units=units, idfs=idfs)

    # then
    assert _feature("terms", features[1]) > 0.9 > 0.1 > _feature("terms", features[0]) > 0


def test_a_word_mistyped_in_the_question_is_read_as_the_passage_word_it_misses() -> None:
    units = units_of([_source("You can cancel your subscription at any time.")])

    wanted = question_lexemes("how do i cancle my subscribtion", units)

    assert {"cancel", "subscript"} <= wanted


def test_the_embedder_reads_a_mistyped_question_spelt_as_the_passages_spell_it() -> None:
    # given: the passages hold several words of each stem
    units = units_of(
        [
            _source("Cancellation is effective at the end of the period. Cancelled plans stay."),
            _source("Click Cancel subscription to cancel your subscriptions.", number=2),
        ]
    )

    # when
    read = question_as_read("How do I cancle my subscribtion, is there a notice period?", units)

    # then: each slip is the word of its stem closest to what was typed; the rest is untouched
    assert read == "How do I cancel my subscription, is there a notice period?"


@pytest.mark.parametrize(
    ("question", "texts", "weights", "answer"),
    [
        # an amount is answered by a unit holding one, a price by a price
        (
            "How much does Growth cost?",
            (
                "Growth is our most popular plan for teams.",
                "| Plan | Price |\n| --- | --- |\n| Growth | $99 / month |",
            ),
            UnitWeights(terms=0, headings=0, pairs=0, quantity=0.2, procedure=0, rank=0),
            "Plan: Growth; Price: $99 / month",
        ),
        # a yes/no question by the sentence that decides it: what happens unless changed
        (
            "Does Acme send webhooks for every event?",
            (
                "Webhooks can be sent for invoices, payments and customers.",
                "By default, webhooks are sent for every event type.",
            ),
            UnitWeights(terms=0, headings=0, pairs=0, quantity=0, procedure=0, rank=0),
            "By default, webhooks are sent for every event type.",
        ),
        # any question by the rule rather than an example of it, which the asker's own
        # situation resembles
        (
            "Our days start at the wrong hour for our Berlin office. How do I fix the timezone?",
            (
                "For instance, if you select Berlin, each day of your reports starts at midnight"
                " in Berlin.",
                "You can change the timezone of your reports in the Site timezone field.",
            ),
            UnitWeights(terms=0, headings=0, pairs=0, quantity=0, procedure=0, rank=0),
            "You can change the timezone of your reports in the Site timezone field.",
        ),
    ],
)
def test_a_question_prefers_the_unit_that_answers_it_to_one_that_only_resembles_it(
    question: str, texts: tuple[str, str], weights: UnitWeights, answer: str
) -> None:
    # given: units the embedder cannot tell apart
    units = units_of([_source(text, number=number) for number, text in enumerate(texts, 1)])

    # when
    scores = units_score(
        question=question, units=units, similarities=np.zeros(len(units)), weights=weights
    )

    # then
    assert units[int(np.argmax(scores))].text == answer


@pytest.mark.parametrize(
    ("text", "example"),
    [
        ("For example, a trip could be tagged #Vacation2025.", True),
        ("E.g. tag a trip with #Vacation2025.", True),
        ("An example would be to tag a trip with #Vacation2025.", True),
        ("Suppose you tag some links with utm_source=fb.", True),
        ("Let's say your trip is tagged #Trip.", True),
        # a term a sentence is read under is not its opening: what follows it is
        ("`static`\n: For example: `favicon.ico` is copied as it is.", True),
        # the rule, an example named inside it, and a heading-like lead-in are not examples
        ("Tags are case-sensitive, for example #Trip and #trip differ.", False),
        ("Examples of tags are listed on the Tags page.", False),
        ("Say goodbye to spreadsheets.", False),
    ],
)
def test_a_unit_that_opens_as_an_example_is_marked_as_one(text: str, example: bool) -> None:
    units = units_of([_source(text)])

    features = unit_features(question="Are tags case-sensitive?", units=units)

    assert _feature("example", features[0]) == float(example)


@pytest.mark.parametrize(
    ("question", "shape"),
    [
        ("How long do refunds take?", (True, False, False)),
        ("how do i cancel my subscription?", (False, True, False)),
        ("My card failed. Will you retry the card automatically?", (False, False, True)),
        ("Can I change my data region later?", (False, False, True)),
        ("What is a webhook?", (False, False, False)),
        ("When does my trial end?", (True, False, False)),
        ("Until when can I still get a refund?", (True, False, False)),
        ("Is there a fee, and when is it charged?", (True, False, True)),
        ("I get an invalid_grant error when I connect Search Console", (False, False, False)),
        ("Can my servers sleep when nothing is calling them?", (False, False, True)),
        # the subject may be a name or any noun, not only a pronoun or an article
        ("Does Acme support Klarna?", (False, False, True)),
        ("Our team grew. Can Acme add seats in the middle of a cycle?", (False, False, True)),
        ("If I delete a coupon, do customers who have it lose the discount?", (False, False, True)),
        # an auxiliary inside a clause asks nothing of its own, nor does an order
        ("What does Acme do with my card number?", (False, False, False)),
        ("Do not mail me invoices. How do I get them by email?", (False, True, False)),
    ],
)
def test_the_kind_of_question_is_read_from_its_wording(
    question: str, shape: tuple[bool, bool, bool]
) -> None:
    found = QuestionShape.of(question)

    assert (found.quantity, found.how_to, found.yes_no) == shape


@pytest.mark.parametrize(
    ("question", "shape"),
    [
        ("¿Cuánto cuesta el plan Growth al mes?", (True, True, False, False)),
        ("¿Puedo cambiar la región de mis datos después?", (False, False, False, True)),
        ("Wie kündige ich mein Abonnement?", (False, False, True, False)),
        ("Wie lange dauert eine Rückerstattung?", (True, False, False, False)),
        ("Combien coûte le forfait Growth par mois ?", (True, True, False, False)),
        ("Hoe zeg ik mijn abonnement op?", (False, False, True, False)),
        ("Quanto custa o plano Growth por mês?", (True, True, False, False)),
        ("Come posso annullare l'abbonamento?", (False, False, True, False)),
    ],
)
def test_the_kind_of_question_is_read_in_the_language_it_is_asked_in(
    question: str, shape: tuple[bool, bool, bool, bool]
) -> None:
    # the help center is English, but "¿cuánto cuesta?" asks for a price as "how much" does
    found = QuestionShape.of(question)

    assert (found.quantity, found.money, found.how_to, found.yes_no) == shape


def test_a_question_is_read_with_its_own_language_s_cues_only() -> None:
    # "come" is Italian for "how" and English for arriving: English cues read English questions
    assert not QuestionShape.of("Will customers come back after a failed payment?").how_to
    assert QuestionShape.of("Come posso annullare?", language="it").how_to


def test_a_leading_sentence_or_item_brings_the_next_one_of_its_passage() -> None:
    # given
    units = units_of(
        [
            _source(
                "Paddle does not allow editing the VAT number on a subscription. To update it, "
                "cancel it and resubscribe with the new number.\n\n"
                "Invoices show the VAT number you gave at checkout.\n\n"
                "In Team Settings:\n\n"
                "- You'll find the Force Two-Factor Authentication option.\n"
                "- Click Enforce 2FA to make it mandatory for all team members.\n\n"
                "| Plan | Seats |\n|---|---|\n| Starter | 3 |\n| Growth | 10 |"
            )
        ]
    )
    rule, how, other, option, enforce, starter, growth = units
    assert [unit.kind for unit in units] == [
        "sentence",
        "sentence",
        "sentence",
        "item",
        "item",
        "row",
        "row",
    ]

    # then: the next sentence or item of the passage, across a paragraph or an item's end
    assert following_unit(rule, units) is how
    assert following_unit(how, units) is other
    assert following_unit(other, units) is option
    assert following_unit(option, units) is enforce
    # and never a row, nor after one: the next row is another plan's
    assert following_unit(enforce, units) is None
    assert following_unit(starter, units) is None
    assert following_unit(growth, units) is None


def test_a_following_item_is_quoted_without_the_lead_in_it_shares() -> None:
    # given
    first = "In Team Settings: You'll find the Force Two-Factor Authentication option."
    second = "In Team Settings: Click Enforce 2FA to make it mandatory."

    # then
    assert continued(first, second) == "Click Enforce 2FA to make it mandatory."
    assert continued("Paddle does not allow it.", "To update it, resubscribe.") == (
        "To update it, resubscribe."
    )


@pytest.mark.parametrize(
    ("page", "quoted"),
    [
        pytest.param(
            # help centers exported from other tools write links and lists as HTML in Markdown
            'For site settings, see <a href="/docs/website-settings">website settings</a>.</p>\n'
            "<ul> <li>Two-factor authentication: secure your account with a code</li> </ul>",
            [
                "For site settings, see website settings.",
                "Two-factor authentication: secure your account with a code",
            ],
            id="inline HTML",
        ),
        pytest.param(
            # a page embeds an illustration as HTML and writes a dash and a space as character
            # references, as Markdown allows (Fly.io's docs; the answers quoted both as written):
            # the image is no statement; the references read as their characters, except in code
            # and where no ";" closes them (a query string's "&param=")
            '<img src="/static/images/networks.png" alt="Illustration of two apps on clouds">\n\n'
            "You can extend a volume&mdash;manually or automatically&nbsp;&#8212; but never "
            "shrink it. Pass `&mdash;` to the template, or open /search?q=volumes&param=size to "
            "see it.",
            [
                "You can extend a volume\u2014manually or automatically \u2014 but never "
                "shrink it.",
                "Pass `&mdash;` to the template, or open /search?q=volumes&param=size to see it.",
            ],
            id="embedded media and character references",
        ),
        pytest.param(
            # a help center asks the reader's question before it answers it (Plausible's answers
            # quoted "Have you lost your recovery codes?" as if it said something)
            "Have you lost your recovery codes? You can generate new codes at any time.\n\n"
            "- Forgot your password?\n- Click Send reset link on the login page.",
            ["You can generate new codes at any time.", "Click Send reset link on the login page."],
            id="a sentence that asks",
        ),
        pytest.param(
            # a page says what it is about before it says anything ("How do webhook retries
            # work?" led with "This page explains what counts as a failure and how the retry
            # schedule works."); a sentence whose subject is a page but that states a fact is one
            "If your endpoint doesn't accept a delivery, Acme tries again. This page explains "
            "how the retry schedule works.\n\n"
            "This guide walks you through setting up your first app.\n\n"
            "Prices on this page exclude taxes. This page is updated every quarter.",
            [
                "If your endpoint doesn't accept a delivery, Acme tries again.",
                "Prices on this page exclude taxes.",
                "This page is updated every quarter.",
            ],
            id="a sentence about the page",
        ),
        pytest.param(
            # a reference entry gives its default in a short line of its own (Flask's and
            # Django's settings: "Default: ``None``"; Flask's cookie warning answered every
            # question about its size but its "Defaults to 4093."); a word or a code span alone
            # names nothing
            "Warn if cookie headers are larger than this many bytes.\n\n"
            "Defaults to `4093`.\n\nDefault: `None`\n\n- `merge`\n- Seen twice\n\nSee it.",
            [
                "Warn if cookie headers are larger than this many bytes.",
                "Defaults to `4093`.",
                "Default: `None`",
            ],
            id="a short line that names a value",
        ),
        pytest.param(
            # a page that labels its parts with bold lines instead of headings (Plausible's
            # "Cancel your subscription" does): each sentence and item is read under its label,
            # the labels are no units, a heading ends the last label, and a bold sentence states
            # something
            "**Until the billing period ends**\n\n"
            "Your stats keep being counted.\n\n"
            "**Once the billing period ends**\n\n"
            "Your dashboard is locked. You can still export your data.\n\n"
            "**Use this when:**\n\n"
            "- You run one site for many teams\n"
            "- You need separate billing\n\n"
            "## Deleting your data\n\n"
            "Data is deleted sixty days after cancellation.\n\n"
            "**Deleted data cannot be restored.**",
            [
                "Until the billing period ends: Your stats keep being counted.",
                "Once the billing period ends: Your dashboard is locked.",
                "Once the billing period ends: You can still export your data.",
                "Use this when: You run one site for many teams",
                "Use this when: You need separate billing",
                "Data is deleted sixty days after cancellation.",
                "Deleted data cannot be restored.",
            ],
            id="bold labels",
        ),
        pytest.param(
            # a label right over a list introduces that list only: the paragraph after it is
            # read on its own, as the page shows it (Plausible's "Scheduled raw event exports"
            # read "Use this when: Raw event exports are not self-serve…"); a label over a
            # paragraph first heads the list after that paragraph and what follows the list
            "**Use this when:**\n\n"
            "- You need event-level data\n"
            "- Aggregated stats do not meet your needs\n\n"
            "Raw event exports are not self-serve and are not real-time.\n\n"
            "**Settings**\n\n"
            "The server clones each repository.\n\n"
            "- It keeps a cache of manifests\n\n"
            "It runs one process per repository.",
            [
                "Use this when: You need event-level data",
                "Use this when: Aggregated stats do not meet your needs",
                "Raw event exports are not self-serve and are not real-time.",
                "Settings: The server clones each repository.",
                "Settings: It keeps a cache of manifests",
                "Settings: It runs one process per repository.",
            ],
            id="a label that introduces a list ends with it",
        ),
        pytest.param(
            # a page written with reference-style links, as Hugo's documentation is (27 of its 68
            # answers quoted "[Staticman][]" as written, 4 quoted the definitions themselves)
            "Open-source commenting systems include [Staticman][] and [Talkyard][talk].\n\n"
            "Use the [`js.Build`][build] function to bundle your modules.\n\n"
            "[Staticman]: https://staticman.net/\n"
            "[talk]: https://www.talkyard.io/\n"
            "[build]: /functions/js/build/",
            [
                "Open-source commenting systems include Staticman and Talkyard.",
                "Use the `js.Build` function to bundle your modules.",
            ],
            id="reference-style links",
        ),
        pytest.param(
            # CommonMark's backslash escapes read as their characters (Fly.io's Django guide
            # writes "CSRF\\_TRUSTED\\_ORIGINS"), outside code; a link's label may hold brackets
            # (Fly.io's "[[http_service.concurrency]](…)") and its address parentheses; a linked
            # or a reference picture (MkDocs Material's badges) reads as nothing; and a stop in
            # a link's label ends no sentence ("a.k.a.", a video's title)
            "Update the ALLOWED_HOSTS and CSRF\\_TRUSTED\\_ORIGINS settings, not `a\\_b`.\n\n"
            "Set how many requests each Machine takes at once in the "
            "[[http_service.concurrency]](/docs/config/) section of "
            "[fly.toml](https://example.com/wiki/Toml_(file)).\n\n"
            "[![Material for MkDocs][badge]](#usage)\n\n"
            "[![Creating your site]][Creating your site]\n\n"
            "- [Session Affinity (a.k.a. Sticky Sessions)](/docs/sticky/) keeps a user on one "
            "Machine.\n"
            "- [DITCH Google Analytics. Use Plausible!](https://youtu.be/x) is a video review.",
            [
                "Update the ALLOWED_HOSTS and CSRF_TRUSTED_ORIGINS settings, not `a\\_b`.",
                "Set how many requests each Machine takes at once in the "
                "[http_service.concurrency] section of fly.toml.",
                "Session Affinity (a.k.a. Sticky Sessions) keeps a user on one Machine.",
                "DITCH Google Analytics. Use Plausible! is a video review.",
            ],
            id="escapes, bracketed labels, linked pictures",
        ),
        pytest.param(
            # a code span in a link's label is read whole: its brackets are not the label's
            # (Fly.io's "…specify the `web` process in the [`[[services]]` section](…)" was
            # quoted with its markup)
            "Specify the `web` process in the [`[[services]]` section](/docs/reference/#svc).\n\n"
            "Open [`app/audio/[name]/route.js`](https://example.com/route) to see how each "
            "audio file is streamed to the browser, after pressing [the ` key](/keys) once.",
            [
                "Specify the `web` process in the `[[services]]` section.",
                "Open `app/audio/[name]/route.js` to see how each audio file is streamed to the "
                "browser, after pressing the ` key once.",
            ],
            id="a code span in a link's label",
        ),
    ],
)
def test_a_page_is_quoted_as_a_reader_sees_it(page: str, quoted: list[str]) -> None:
    # when
    texts = [unit.text for unit in units_of([_source(page)])]

    # then
    assert texts == quoted


def test_code_a_page_indents_is_never_quoted_as_a_sentence() -> None:
    # given: Argo CD's GoTemplate page indents YAML under list items behind codehilite's
    # `::yaml` line, and pages of commands indent them; read as text, the YAML was quoted as an
    # item ("::yaml apiVersion: argoproj.io/v1alpha1 kind: ApplicationSet…") and the commands
    # as a sentence
    page = (
        "Here are some examples of what is not possible with Go text templates:\n\n"
        "- Templating a boolean field.\n\n"
        "        ::yaml\n        spec:\n          goTemplate: true\n\n"
        "- Templating an object field.\n\n"
        '        ::yaml\n        syncPolicy: "{{.syncPolicy}}"\n\n'
        "Run the commands below:\n\n    pip install flask\n    flask run --debug\n\n"
        "The server starts on port 5000.\n"
    )
    [passage] = chunk_markdown(
        title="Go Template",
        body=page,
        limits=ChunkLimits.for_window(256),
        count_tokens=lambda text: len(text.split()),
    )

    # when
    texts = [unit.text for unit in units_of([_source(passage.text)])]

    # then
    assert texts == [
        "Here are some examples of what is not possible with Go text templates: "
        "Templating a boolean field.",
        "Here are some examples of what is not possible with Go text templates: "
        "Templating an object field.",
        "The server starts on port 5000.",
    ]


def test_a_procedure_without_a_lead_in_is_read_under_its_heading() -> None:
    # given: the steps under "Turning on 2FA", and another page's procedure naming "turn on"
    steps = _source(
        "1. Go to **Settings > Security**.\n2. Click **Enable** and scan the QR code.\n",
        section="Two-Factor Authentication > Turning on 2FA",
    )
    other = _source(
        "Owners can make 2FA mandatory:\n\n1. Go to **Settings > Team**.\n"
        "2. Turn on **Require 2FA**.\n",
        number=2,
        section="Team > Requiring 2FA",
    )

    # when
    units = [unit for unit in units_of([steps, other]) if unit.kind == "procedure"]
    features = unit_features(question="How do I turn on 2FA?", units=units)

    # then: the heading's "turning" counts for the steps as the lead-in's "turn" does for the other
    assert _feature("terms", features[0]) == _feature("terms", features[1]) == 1.0


def test_a_sentence_is_read_after_the_sentence_before_it_in_its_paragraph_or_item() -> None:
    # given: Acme's webhook page answers "how long may my endpoint take?" in a sentence that
    # opens with "This"
    units = units_of(
        [
            _source(
                "Return `200` as soon as the signature is verified, and handle the event later. "
                "This keeps you well inside the 10-second timeout.\n\n"
                "It is retried after one minute. There are no fees for retries at all.\n\n"
                "Volumes do not sync their data. And there is no built-in replication. But a "
                "database cluster can replicate itself.\n\n"
                "- Retries are signed again.\n- This means a new timestamp each time.\n"
                "- Query parameters are discarded from the path. This means that `?page=2` is "
                "reported as the page itself.\n\n"
                "If your flow is longer, split it into two funnels. For example, a signup flow "
                "can be split into two. For instance two funnels of four steps.\n\n"
                "`static`\n: The `static` directory holds files that are copied as they are. "
                "For example: `favicon.ico` and `robots.txt` files."
            )
        ]
    )
    texts = [unit.text for unit in units]

    # when
    preceding = {
        text: None if (found := preceding_sentence(unit, units)) is None else found.text
        for text, unit in zip(texts, units, strict=True)
    }

    # then: the sentence before it in its own paragraph or list item, pointing back to it or
    # not ("There are no fees…" after "It is retried…"); none for the sentence that opens its
    # paragraph ("It is retried…"), nor for an item's first sentence, which is never read
    # after the item before it
    assert preceding == {
        "Return `200` as soon as the signature is verified, and handle the event later.": None,
        "This keeps you well inside the 10-second timeout.": (
            "Return `200` as soon as the signature is verified, and handle the event later."
        ),
        "It is retried after one minute.": None,
        "There are no fees for retries at all.": "It is retried after one minute.",
        # a sentence that opens with a conjunction goes on from the one before it
        "Volumes do not sync their data.": None,
        "And there is no built-in replication.": "Volumes do not sync their data.",
        "But a database cluster can replicate itself.": "And there is no built-in replication.",
        "Retries are signed again.": None,
        "This means a new timestamp each time.": None,
        # an item's second sentence points back to its first
        "Query parameters are discarded from the path.": None,
        "This means that `?page=2` is reported as the page itself.": (
            "Query parameters are discarded from the path."
        ),
        # an example is read after the statement it illustrates
        "If your flow is longer, split it into two funnels.": None,
        "For example, a signup flow can be split into two.": (
            "If your flow is longer, split it into two funnels."
        ),
        "For instance two funnels of four steps.": (
            "For example, a signup flow can be split into two."
        ),
        # a definition's sentences are read under its term, and point back by what follows it
        "`static`: The `static` directory holds files that are copied as they are.": None,
        "`static`: For example: `favicon.ico` and `robots.txt` files.": (
            "`static`: The `static` directory holds files that are copied as they are."
        ),
    }


def test_a_sentence_under_another_term_does_not_go_on_from_the_one_before() -> None:
    # given: Hugo's search tools, a definition list whose definitions open with "This gist…",
    # about their own term, and a definition whose second sentence goes on from its first
    source = _source(
        "hugo-lunr\n: A simple way to add site search with lunr.js. It indexes your pages.\n\n"
        "Fuse.js gist\n: This gist builds a JSON index that Fuse.js searches.\n\n"
        "`static`\n: The `static` directory holds files copied as they are. For example: "
        "`favicon.ico` and `robots.txt` files.\n"
    )
    units = units_of([source])
    by_text = {unit.text: unit for unit in units}

    # when
    going_on = {
        unit.text: None if (found := continuing_unit(unit, units)) is None else found.text
        for unit in units
    }

    # then: "This gist…" is about its own term, not about hugo-lunr; within one term a
    # sentence still goes on from the one before it
    assert going_on["hugo-lunr: It indexes your pages."] is None
    assert going_on["`static`: The `static` directory holds files copied as they are."] == (
        "`static`: For example: `favicon.ico` and `robots.txt` files."
    )
    assert "Fuse.js gist: This gist builds a JSON index that Fuse.js searches." in by_text


def test_the_units_that_go_on_from_a_brought_one_are_those_that_point_back() -> None:
    # given: a rule, what it means, then what to do instead, in the next paragraph
    units = units_of(
        [
            _source(
                "Using `@celery_app.task` requires the `celery_app` object, which a factory "
                "does not have. It also means the tasks are tied to one app instance.\n\n"
                "Instead, use Celery's `@shared_task` decorator. Tasks are then found by "
                "their name.\n\n"
                "```python\nfrom celery import shared_task\n```\n\n"
                "Workers read the broker URL from the config.\n\n"
                "If the port is taken, the server stops. It may show one of these messages:\n\n"
                "- `Address already in use` on Linux and macOS\n"
                "- `An attempt was made to access a socket` on Windows\n"
            )
        ]
    )

    # when
    going_on = {
        unit.text: None if (found := continuing_unit(unit, units)) is None else found.text
        for unit in units
    }

    # then: "Instead, …" goes on from the sentence before it, across the paragraph's end;
    # "Tasks are…" points nowhere; nothing goes on from a code block or into the next topic
    assert going_on["It also means the tasks are tied to one app instance."] == (
        "Instead, use Celery's `@shared_task` decorator."
    )
    assert going_on["Instead, use Celery's `@shared_task` decorator."] is None
    assert going_on["Tasks are then found by their name."] is None
    assert all(unit.kind != "code" or going_on[unit.text] is None for unit in units)
    # an item is judged by its own words, not by the lead-in ("It may show…") it shares with
    # the item before it
    assert (
        going_on["It may show one of these messages: `Address already in use` on Linux and macOS"]
        is None
    )


DOTENV = (
    "Rather than passing options every time you run a command, you can use Flask's dotenv "
    "support to set environment variables automatically."
)
PYTHON_DOTENV = (
    "If `python-dotenv` is installed, running the `flask` command will set environment "
    "variables defined in the files `.env` and `.flaskenv`."
)


@pytest.mark.parametrize(
    ("second", "repeats"),
    [
        # the chunker opened the next chunk with the last block of the one before
        (f"{DOTENV}\n\n{PYTHON_DOTENV}", True),
        # the block was too long to repeat: the next chunk opens after it
        (PYTHON_DOTENV, False),
    ],
)
def test_a_passage_s_last_unit_is_followed_by_the_passage_that_continues_it(
    second: str, repeats: bool
) -> None:
    # given: a long section of one page cut into two chunks, one after the other, both among
    # the passages (the second ranked lower), and the section's next chunk but one
    first = "The `flask` command supports setting any option from the environment.\n\n" + DOTENV
    passages = [
        _source(first, number=1, document=7, section="CLI > dotenv", ordinal=11),
        _source("Variables set on the command line win.", number=2, document=7, ordinal=13),
        _source(second, number=3, document=7, section="CLI > dotenv", ordinal=12),
    ]
    units = units_of(passages)
    options, dotenv = (unit for unit in units if unit.source.number == 1)
    python_dotenv = next(unit for unit in units if unit.text == PYTHON_DOTENV)

    # then: the page goes on in the next passage, after what it repeats; the end of that one
    # goes on nowhere (its next chunk is not among the passages)
    assert dotenv.last and not options.last
    assert following_unit(dotenv, units) is python_dotenv
    assert following_unit(options, units) is dotenv
    assert following_unit(python_dotenv, units) is None
    if repeats:  # and the second passage's copy is the one after the first's last but one
        copy = next(unit for unit in units if unit.source.number == 3 and unit.text == DOTENV)
        assert following_unit(copy, units) is python_dotenv


# Flask's tutorial explains its factory in a numbered list, each item two sentences, and goes on
# after it
FACTORY_STEPS = (
    "1. `test_config` can also be passed to the factory.\n"
    "   It is used instead of the instance configuration.\n"
    "2. `os.makedirs()` ensures that `app.instance_path` exists.\n"
    "   Flask doesn't create the instance folder automatically.\n\n"
    "You'll add more to this factory later in the tutorial."
)


def test_a_numbered_item_is_followed_by_what_follows_its_list_not_by_the_steps_holding_it() -> None:
    # given: the list is read as its items and then, after them, as one procedure holding them
    units = units_of([_source(FACTORY_STEPS)])
    procedure = next(unit for unit in units if unit.kind == "procedure")
    folder, later = (
        next(unit for unit in units if unit.text.startswith(start))
        for start in ("Flask doesn't create", "You'll add more")
    )

    # then: the item's last sentence goes on with the paragraph after the list; the steps it
    # is one of would quote it again ("…automatically. 1. `test_config`… 2. … automatically.")
    assert folder.position in procedure.holds
    assert following_unit(folder, units) is later
    assert following_unit(units[0], units) is units[1]  # an item's next sentence, as before


def test_a_labelled_last_unit_goes_on_after_its_copy_that_the_next_chunk_holds_unlabelled() -> None:
    # given: Plausible's "What happens after you cancel", cut into two chunks; the first ends
    # with a paragraph under the bold label "Your data", the second opens with that paragraph
    # again without its label (the chunker repeats the last block, not the label over it)
    repeated = (
        "You can delete your data at any time, before or after canceling, from your site or "
        "account settings."
    )
    first = "**Your data**\n\nYour data is not deleted immediately.\n\n" + repeated
    second = (
        f"{repeated}\n\n**Resubscribing**\n\nYou can resubscribe from the Subscription section."
    )
    units = units_of(
        [
            _source(first, number=1, document=7, section="After you cancel", ordinal=1),
            _source(second, number=2, document=7, section="After you cancel", ordinal=2),
        ]
    )
    labelled = units[1]
    resubscribing = next(unit for unit in units if "resubscribe" in unit.text)

    # then: the page goes on after the copy, not with the copy (a quote said it twice: "Your
    # data: You can delete your data at any time… You can delete your data at any time…")
    assert labelled.last and labelled.text == f"Your data: {repeated}"
    assert following_unit(labelled, units) is resubscribing


@pytest.mark.parametrize(
    "elsewhere",
    [
        {"ordinal": 13},  # not the next chunk
        {"ordinal": 12, "section": "CLI > Shell"},  # the next chunk opens another section
        {"ordinal": 12, "document": 8},  # another page's
        {"ordinal": -1},  # a passage whose place is not known
    ],
)
def test_a_passage_is_continued_only_by_the_next_chunk_of_its_section(
    elsewhere: dict[str, object],
) -> None:
    # given
    place = {"document": 7, "section": "CLI > dotenv", **elsewhere}
    units = units_of(
        [
            _source(DOTENV, number=1, document=7, section="CLI > dotenv", ordinal=11),
            _source(PYTHON_DOTENV, number=2, **place),  # type: ignore[arg-type]
        ]
    )

    # then
    assert following_unit(units[0], units) is None


def test_a_quote_keeps_a_symbol_the_page_writes_spaced() -> None:
    # given: Flask's docs name a PyPI classifier; a removed image left a space before a period
    text = (
        "You can search PyPI for packages tagged with [Framework :: Flask](/search/?c=Flask).\n\n"
        "Click **Save** to keep the changes you made ![icon](/img/save.png) ."
    )

    # when
    quoted = [unit.text for unit in units_of([_source(text)])]

    # then: the classifier reads as written (the fact "Framework :: Flask" was never matched)
    assert quoted == [
        "You can search PyPI for packages tagged with Framework :: Flask.",
        "Click Save to keep the changes you made.",
    ]


def test_a_quote_keeps_code_spans_as_written() -> None:
    # given: Flask's docs name nested keys in a code span; a page names the tag to wrap with
    text = (
        "Separate nested keys with a double underscore (`__`), as in "
        "`MYAPI__CREDENTIALS__USERNAME`.\n\n"
        "Wrap the widget in a `<div>` with **no** margin, and write `**bold**` for bold."
    )

    # when
    quoted = [unit.text for unit in units_of([_source(text)])]

    # then: only the page's own emphasis goes, never the characters of its code
    assert quoted == [
        "Separate nested keys with a double underscore (`__`), as in "
        "`MYAPI__CREDENTIALS__USERNAME`.",
        "Wrap the widget in a `<div>` with no margin, and write `**bold**` for bold.",
    ]


@pytest.mark.parametrize("address", ["https://eventlet.readthedocs.io", ""])
def test_a_sentence_written_as_a_link_is_a_statement_and_a_pointer_is_not(address: str) -> None:
    # given: Flask's docs state a fact as the label of a link (an address elsewhere is cut, "")
    text = (
        f"[Eventlet is no longer maintained.]({address}) Use [gevent](gevent.md) instead.\n\n"
        "Read about it in [the gevent deployment guide](gevent.md)."
    )

    # when
    quoted = [unit.text for unit in units_of([_source(text)])]

    # then: the statement is quoted (with the short sentence its link ends in); the pointer not
    assert quoted == ["Eventlet is no longer maintained. Use gevent instead."]


def test_a_quote_brings_the_sentence_before_it_the_one_after_and_those_that_go_on_from_that() -> (
    None
):
    # given: a paragraph whose sentences each lean on the one before, then one that does not
    source = _source(
        "The proxy buffers responses before compressing them. That can break HTML streaming. "
        "It also delays the first byte. Instead, set `Content-Encoding: none` on those "
        "responses. Compression is on by default for text types."
    )
    rule, breaks, delays, instead, default = units_of([source])
    units = [rule, breaks, delays, instead, default]

    # when
    brought = brought_units(breaks, units)

    # then: the rule before it, the sentence after it and the two that point back from it, and
    # not the sentence that starts anew
    assert brought == [rule, delays, instead]
    assert default not in brought_units(rule, units)


def test_a_lead_brings_the_rest_of_its_paragraph_then_the_unit_after_it() -> None:
    # given: a paragraph that states a problem, its cause and its fix, then how to apply the
    # fix, then a paragraph about something else, and a list
    source = _source(
        "Checkout pages are not tracked by the theme snippet. They use a layout of their own. "
        "A custom pixel tracks them.\n\n"
        "To add the pixel, open Settings > Customer events.\n\n"
        "Pixels run in a sandbox of their own.\n\n"
        "Pixels can send:\n\n"
        "- page views of checkout steps\n"
        "- purchases with their revenue\n"
    )
    units = units_of([source])
    opening, layout, pixel, add, sandbox, views, purchases = units

    # when
    as_lead = brought_units(opening, units, lead=True)
    as_further_quote = brought_units(opening, units)

    # then: a lead brings its paragraph's later sentences and, after the last of them, the
    # unit after it, as any quote; a further quote only the sentence after it (the next one
    # does not point back)
    assert as_lead == [layout, pixel, add]
    assert as_further_quote == [layout]
    # the paragraph's last sentence has no rest; an item is no paragraph's sentence
    assert brought_units(pixel, units, lead=True) == [layout, add]
    assert brought_units(views, units, lead=True) == [purchases]
    assert sandbox not in as_lead


def test_an_html_tables_rows_are_quoted_under_their_columns_names() -> None:
    # given: Plausible's domain-change checklist, its table written in HTML a cell per line
    from tests.unit.test_markup import HTML_TABLE

    [passage] = chunk_markdown(
        title="Change your domain",
        body=HTML_TABLE,
        limits=ChunkLimits.for_window(256),
        count_tokens=lambda text: len(text.split()),
    )

    # when
    units = units_of([_source(passage.text)])

    # then: each row is one unit, read under its header, and no cell is one alone
    assert [unit.text for unit in units if unit.kind == "row"] == [
        "Installation type: WordPress plugin; Required action: Update the site domain in "
        "your plugin settings | now",
        "Installation type: NPM package; Required action: Update the `init` options",
    ]
    assert not any(unit.text == "Required action" for unit in units)
