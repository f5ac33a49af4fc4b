"""Specification of site-generator markup in a body (issue 15): what a reader of the page sees.

Fixtures are written here in each tool's syntax (Hugo, MkDocs, Docusaurus, MyST, Pandoc). The
markup must never reach a chunk's heading path or text; the text inside a box is prose; offsets
still point at the original body.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from kb.chunking import ChunkDraft, ChunkLimits, chunk_markdown, embedding_text
from kb.chunking.lines import markup_left, markup_warnings, scan_lines
from kb.chunking.markup import Spans, outside_code_spans
from kb.chunking.structure import split_sections

LIMITS = ChunkLimits(target_tokens=200, max_tokens=300, overlap_tokens=0)
MARKUP = ("{#", "{{<", "{{%", ":::", "!!!", "{%", "```{")


def chunk(body: str) -> list[ChunkDraft]:
    return chunk_markdown(
        title="Guide", body=body, limits=LIMITS, count_tokens=lambda text: len(text.split())
    )


def assert_no_markup(drafts: list[ChunkDraft]) -> None:
    for draft in drafts:
        for mark in MARKUP:
            assert mark not in draft.heading_path and mark not in draft.text, (mark, draft)


def visible(body: str) -> str:
    return "\n".join(line.text for line in scan_lines(body))


# --- heading attributes ------------------------------------------------------------------------

PANDOC_HEADINGS = """\
# Text {#text}

Intro.

## Links {#links .wide}

See the list.

### Setext heading {data-level=3}
"""


def test_heading_attributes_never_reach_the_heading_path() -> None:
    drafts = chunk(PANDOC_HEADINGS)

    assert [draft.heading_path for draft in drafts] == ["Text", "Text > Links"]
    assert_no_markup(drafts)


def test_heading_attributes_become_the_sections_anchor() -> None:
    sections = split_sections(PANDOC_HEADINGS)

    assert [(section.heading_text, section.anchor) for section in sections] == [
        ("Text", "text"),
        ("Links", "links"),
        ("Setext heading", ""),
    ]


def test_a_heading_id_with_a_dot_is_the_headings_anchor() -> None:
    # given: Plausible's Stats API reference names a parameter's section `{#include.imports}`
    sections = split_sections("#### include.imports {#include.imports}\n\nCounts imports.\n")

    # then: the id is the anchor, never part of the heading
    assert [(section.heading_text, section.anchor) for section in sections] == [
        ("include.imports", "include.imports")
    ]
    assert markup_left("#### include.imports {#include.imports}") != []


def test_kramdown_attribute_line_is_not_text() -> None:
    assert visible("A paragraph.\n{: .note}\n") == "A paragraph.\n\n"


def test_a_links_and_a_pictures_attributes_are_not_text() -> None:
    # given: MkDocs (attr_list), kramdown and Pandoc give a link or a picture attributes in
    # braces right after it (CSC's guide: 56 links and pictures)
    body = (
        "| [`a-put`](#a-put) | [GitHub](https://github.com/x/a-put.md){ target=_blank }| Upload |\n"
        "![The form](img/form.png){ width=80% }\n"
        'See [the guide](guide.md "Guide"){:target="_blank"} first.\n'
        "Open [the page](a.md){: .button #go data-x=1 }.\n"
    )

    # then: the page and the chunks read the link and the picture, not their attributes
    assert visible(body) == (
        "| [`a-put`](#a-put) | [GitHub](https://github.com/x/a-put.md)| Upload |\n"
        "![The form](img/form.png)\n"
        'See [the guide](guide.md "Guide") first.\n'
        "Open [the page](a.md).\n"
    )
    # and: the check for markup left finds them where they were not read
    assert markup_left("Read [GitHub](https://github.com/x){ target=_blank } first.") != []
    assert markup_left(visible(body)) == []


def test_an_icon_and_its_attributes_are_not_text() -> None:
    # given: MkDocs Material's icons (pymdownx.emoji), as CSC's guide and Material's docs write
    # them, some with attributes
    body = (
        "_File_ :material-arrow-right: _Load private key_\n"
        '| :material-check:{ style="color: #4DB6AC" } __Clear__ | Index front matter |\n'
        "- :fontawesome-brands-mastodon:{ .lg .middle } __Mastodon__\n"
        "[Learn more :octicons-arrow-right-24:](roihu.md) or :simple-github:.\n"
    )

    # then: the page shows a picture there, and the text reads on without its name
    assert visible(body) == (
        "_File_  _Load private key_\n"
        "|  __Clear__ | Index front matter |\n"
        "-  __Mastodon__\n"
        "[Learn more ](roihu.md) or .\n"
    )
    assert markup_left(body) != []
    # a box's or a tab's title reads as any text does
    tab = '=== ":octicons-mark-github-16: Octicons"\n\n    Text.\n'
    assert visible(tab) == " Octicons\n\nText.\n"
    assert visible('!!! tip ":material-pencil: Edit <kbd>E</kbd>"\n    Text.\n') == (
        " Edit E\nText.\n"
    )
    # an emoji's or a word's colons are not an icon
    assert visible("Time: 10:30 :smile: and :material:\n") == "Time: 10:30 :smile: and :material:\n"


def test_a_spans_or_a_code_spans_attributes_are_not_text() -> None:
    # given: Pandoc's and MyST's attributes on a bracketed span or a code span
    body = (
        "This is a [span with an `id` attribute]{#span-target}.\n"
        "Write `[*emphasis*](#syntax/emphasis)`{l=md} or [warn]{.bg-warning key=v}.\n"
    )

    assert visible(body) == (
        "This is a span with an `id` attribute.\nWrite `[*emphasis*](#syntax/emphasis)` or warn.\n"
    )
    # a placeholder in braces is text
    assert visible("Pass [0, 1]{n} or `f`{x} to it.\n") == "Pass [0, 1]{n} or `f`{x} to it.\n"


def test_braces_that_follow_no_link_are_text() -> None:
    body = "Set {width=80%} by hand, or write [x](y) {as text}.\n"

    assert visible(body) == body


def test_myst_roles_and_targets_read_as_sphinx_shows_them() -> None:
    # given: MyST pages (Markdown read by Sphinx) refer with roles and mark targets
    body = (
        "(syntax/referencing)=\n"
        "See {ref}`syntax/referencing`, {ref}`the guide <syntax/guide>` and {term}`my term`.\n"
        "Call {py:class}`~mypackage.MyClass` or {py:func}`setup <mypackage.setup>`, "
        "not ``{ref}`x` ``.\n"
    )

    # then: a reference reads as its text, a role naming code as code, a target is no text
    assert visible(body) == (
        "\n"
        "See syntax/referencing, the guide and my term.\n"
        "Call `MyClass` or `setup`, not ``{ref}`x` ``.\n"
    )
    assert markup_left(visible(body)) == []
    assert markup_left(body) != []


def test_a_formula_that_ends_in_braces_is_not_a_heading_attribute() -> None:
    # given: MkDocs Material's maths page writes LaTeX as prose lines; the end-of-line attribute
    # rule read `{k=0}^{\infty}…{2k}` as one `{key=value}` and dropped it
    line = "\\cos x=\\sum_{k=0}^{\\infty}\\frac{(-1)^k}{(2k)!}x^{2k}\n"

    assert visible(line) == line
    assert visible("## Install {data-level=3}\n") == "## Install\n"


def test_braces_inside_inline_code_are_kept() -> None:
    assert visible("Use `{#id}` in a heading to name it.") == (
        "Use `{#id}` in a heading to name it."
    )


# --- Hugo shortcodes ---------------------------------------------------------------------------

HUGO_HINT = """\
## Before you start

{{< hint warning >}}
**Back up** the database first.
{{< /hint >}}

{{% notice tip %}}Use a staging server.{{% /notice %}}
"""


def test_hugo_shortcodes_render_as_their_inner_text() -> None:
    drafts = chunk(HUGO_HINT)

    assert [draft.text for draft in drafts] == [
        "**Back up** the database first.\n\nUse a staging server."
    ]
    assert_no_markup(drafts)


def test_shortcodes_in_code_are_the_example_and_stay() -> None:
    body = "```go-html-template\n{{< hint info >}}\n```\n\nWrite `{{< hint >}}` to open one.\n"

    assert visible(body) == body.rstrip("\n") + "\n"


def test_relref_keeps_its_target_so_the_link_still_points_somewhere() -> None:
    assert visible('See [the config]({{< relref "admin/config.md" >}}).') == (
        "See [the config](admin/config.md)."
    )


def test_offsets_still_point_at_the_original_text() -> None:
    body = "Intro.\n\n{{< hint >}}Keep **this** text.{{< /hint >}}\n"
    draft = chunk(body)[-1]

    assert body[draft.char_start : draft.char_end] == "Intro.\n\n{{< hint >}}Keep **this** text."
    for line in scan_lines(body):
        assert [body[line.source_offset(i)] for i in range(len(line.text))] == list(line.text)


def test_an_include_shortcode_is_reported() -> None:
    assert markup_warnings('# X\n\n{{< include file="parts/intro.md" >}}\n') == [
        'line 3: {{< include file="parts/intro.md" >}} not resolved (its text is not included)'
    ]


def test_a_liquid_include_is_reported_and_dropped() -> None:
    body = "Before.\n{% include callout.html text='x' %}\nAfter."

    assert visible(body) == "Before.\n\nAfter."
    assert markup_warnings(body)[0].startswith("line 2: {% include callout.html")


MIDDLEMAN_ERB = """\
## Access a volume

<%= partial "/docs/partials/docs/volumes_access", locals: { app: "my-app" } %>

<% if current_page.data.beta %>
Volumes are in beta. <%# a note for the docs team %>
<% end %>

Run `fly ssh console` and look under `/data`:

```erb
<%= ENV['FLY_MACHINE_ID'] %>
```
"""


def test_erb_tags_are_dropped_and_a_partial_is_reported() -> None:
    # Middleman pages (Fly.io's `.html.markerb`) are Markdown with ERB: the tags are template
    # code; a reader sees what they render, which a partial's file alone would tell
    drafts = chunk(MIDDLEMAN_ERB)

    assert [draft.text for draft in drafts] == [
        "Volumes are in beta.\n\nRun `fly ssh console` and look under `/data`:\n\n"
        "```erb\n<%= ENV['FLY_MACHINE_ID'] %>\n```"
    ]
    assert markup_warnings(MIDDLEMAN_ERB) == [
        'line 3: <%= partial "/docs/partials/docs/volumes_access", locals: { app: "my-app" } %> '
        "not resolved (its text is not included)"
    ]
    assert [markup_left(draft.text) for draft in drafts] == [[]]


def test_erb_in_inline_code_is_the_example_and_stays() -> None:
    body = 'Write `<%= partial "x" %>` to include a file.'

    assert visible(body) == body


# --- MkDocs admonitions ------------------------------------------------------------------------

MKDOCS = """\
## Upgrading

!!! warning "Read this first"
    Stop the workers before you upgrade.

    ```bash
    systemctl stop worker
    ```

??? note
    Collapsed by default.

The end.
"""


def test_mkdocs_admonition_is_its_title_and_text_chunked_as_prose() -> None:
    drafts = chunk(MKDOCS)

    assert [draft.text for draft in drafts] == [
        "Read this first\n\nStop the workers before you upgrade.\n\n"
        "```bash\nsystemctl stop worker\n```\n\nCollapsed by default.\n\nThe end."
    ]
    assert_no_markup(drafts)


def test_a_box_title_is_a_line_of_its_own_not_the_start_of_its_first_sentence() -> None:
    # Plausible's `:::tip You can exclude internal traffic by IP address too` over "This is the
    # easiest way…": read as one paragraph, the page and the answers said "…too This is…".
    titled = {
        ":::tip Rotate often\nRotate keys every 90 days.\n:::\n": "Rotate often",
        ":::danger[Never share]\nRotate keys every 90 days.\n:::\n": "Never share",
        '!!! note "Rotate often"\n    Rotate keys every 90 days.\n': "Rotate often",
        "```{admonition} Rotate often\nRotate keys every 90 days.\n```\n": "Rotate often",
        "> [!tip] Rotate often\n> Rotate keys every 90 days.\n": "> Rotate often",
        (
            "import { Explainer } from '../components/Explainer';\n\n"
            '<Explainer title="Rotate often">\nRotate keys every 90 days.\n</Explainer>\n'
        ): "Rotate often",
    }
    for body, title in titled.items():
        quote = "> " if title.startswith("> ") else ""  # a callout's lines stay in its quote
        text = chunk(body)[0].text
        assert text.split("\n\n")[0] == title, body
        assert text == f"{title}\n\n{quote}Rotate keys every 90 days.", body
    # a paragraph whose first line is not a box title is still one paragraph
    assert chunk("Rotate often\nRotate keys every 90 days.\n")[0].text == (
        "Rotate often\nRotate keys every 90 days."
    )


def test_a_directives_attributes_are_not_its_title() -> None:
    # given: Starlight's asides take attributes after the type or the title (remark-directive)
    bodies = {
        ':::tip{icon="heart"}\nRotate keys every 90 days.\n:::\n': "Rotate keys every 90 days.",
        ':::caution[Never share]{icon="warning"}\nRotate keys every 90 days.\n:::\n': (
            "Never share\n\nRotate keys every 90 days."
        ),
    }

    # then: the attributes are neither the box's title nor text
    for body, text in bodies.items():
        assert chunk(body)[0].text == text, body
        assert markup_left(visible(body)) == [], body


def test_mkdocs_snippet_is_reported() -> None:
    assert markup_warnings('--8<-- "includes/abbreviations.md"\n') == [
        'line 1: snippet "includes/abbreviations.md" not resolved (its text is not included)'
    ]


# --- Docusaurus and MyST -----------------------------------------------------------------------

DOCUSAURUS = """\
## Keys

:::tip Rotate often

Rotate API keys every **90 days**.

:::

:::danger[Never share]
A key is a password.
:::
"""


def test_docusaurus_admonitions_render_as_their_text() -> None:
    drafts = chunk(DOCUSAURUS)

    assert [draft.text for draft in drafts] == [
        "Rotate often\n\nRotate API keys every **90 days**.\n\nNever share\n\nA key is a password."
    ]
    assert_no_markup(drafts)


MYST = """\
# Setup

```{note}
:class: dropdown
Run the installer as an administrator.
```

````{admonition} Ports
Open port 8443.

```yaml
port: 8443
```
````

```{toctree}
install
upgrade
```

```{literalinclude} ../examples/config.yaml
```
"""


def test_myst_directives_are_prose_and_code_inside_them_stays_code() -> None:
    drafts = chunk(MYST)

    assert [draft.text for draft in drafts] == [
        "Run the installer as an administrator.\n\nPorts\n\nOpen port 8443.\n\n"
        "```yaml\nport: 8443\n```"
    ]
    assert_no_markup(drafts)
    assert markup_warnings(MYST) == [
        "line 21: {literalinclude} ../examples/config.yaml not resolved (its text is not included)"
    ]


def test_a_myst_code_block_directive_is_still_code() -> None:
    drafts = chunk("```{code-block} python\nprint('hi')\n```\n")

    assert drafts[0].text == "```{code-block} python\nprint('hi')\n```"


def test_a_myst_directive_we_do_not_know_is_read_as_its_content_reads() -> None:
    # a project's own directive (Python's `impl-detail`, a `console` session): its prose is
    # text, as the same directive written in reStructuredText or a colon fence is, and a
    # command, or anything a code directive holds, stays code
    body = (
        "```{impl-detail}\n:class: note\n\nThe reference build caches up to 256 widgets per "
        "process.\n```\n\n```{console}\n$ pip install widgetkit\n```\n\n"
        "```{code-block} text\nRun the installer first.\n```\n"
    )

    drafts = chunk(body)

    assert [draft.text for draft in drafts] == [
        "The reference build caches up to 256 widgets per process.\n\n"
        "```{console}\n$ pip install widgetkit\n```\n\n"
        "```{code-block} text\nRun the installer first.\n```"
    ]


def test_a_myst_diagram_is_a_picture_as_in_restructuredtext() -> None:
    drafts = chunk("Before.\n\n```{mermaid}\ngraph TD; A-->B\n```\n\nAfter.\n")

    assert [draft.text for draft in drafts] == ["Before.\n\nAfter."]


# --- MDX (Docusaurus): imports and components ---------------------------------------------------

DOCUSAURUS_MDX = """\
---
title: Rotating keys
---
import { Explainer as Aside } from '../components/Explainer';
import VideoEmbed from "video-embed";
import RotationNote from './_rotation-note.mdx'

## Why rotate

<RotationNote />

<Aside title="In depth: what a leaked key allows">

A leaked key reads every **invoice**.

</Aside>

<VideoEmbed
  id="rotate-keys"
  title="Rotating a key"
/>

```jsx
import { Explainer } from '../components/Explainer'

<Explainer title="Example">Text</Explainer>
```

Keys expire after <Aside>90 days</Aside>. Replace <Token> with the new key.
"""


def test_mdx_imports_and_the_imported_components_tags_are_not_text() -> None:
    body = DOCUSAURUS_MDX.split("---\n", 2)[2]

    drafts = chunk(body)

    assert [draft.text for draft in drafts] == [
        "In depth: what a leaked key allows\n\nA leaked key reads every **invoice**.\n\n"
        "Rotating a key\n\n"  # the video's title, as a component's title on one line is kept
        "```jsx\nimport { Explainer } from '../components/Explainer'\n\n"
        '<Explainer title="Example">Text</Explainer>\n```\n\n'
        "Keys expire after 90 days. Replace <Token> with the new key."
    ]
    assert [draft.heading_path for draft in drafts] == ["Why rotate"]


MINTLIFY = """\
## Install

<Note>
  The CLI needs Node.js 20 or later.
</Note>

<Steps>
  <Step title="Install the CLI">
    Run the installer.
  </Step>
  <Step
    title="Log in"
    icon="key"
  >
    Paste your API key.
  </Step>
</Steps>

<AccordionGroup>
<Accordion title="Can I use Yarn?">
Yes, any package manager works.
</Accordion>
</AccordionGroup>

Keys rotate every <Badge>90 days</Badge>. Look for the <Icon icon="check" /> mark. Replace
<Token> with your key, and <KEYID> with its id.
"""


def test_a_gitbook_tab_or_code_title_is_shown_as_its_title() -> None:
    # GitBook's `{% tab title="…" %}` (82 on GitBook's own docs) and `{% code title="…" %}`:
    # the tag goes, its title is what the page shows over the tab or the block
    body = (
        '{% tabs %}\n{% tab title="macOS" %}\nRun the installer.\n{% endtab %}\n{% endtabs %}\n\n'
        '{% code title="index.js" %}\n```js\nrun()\n```\n{% endcode %}\n'
    )

    (draft,) = chunk(body)

    assert draft.text == "macOS\n\nRun the installer.\n\nindex.js\n\n```js\nrun()\n```"
    # an include's arguments are for the file it includes, which is reported, not shown
    assert chunk('{% include card.html title="Plans" %}\n\nText.\n')[0].text == "Text."


def test_components_a_page_uses_without_importing_them_are_not_text() -> None:
    # Mintlify's pages use their components without an import (`<Note>`, `<Steps>`, `<Step
    # title="…">`, `<Accordion title="…">`): 1,278 chunks of Mintlify's own docs held the tags.
    # A tag alone on its line, one with attributes, or one closed on its line is a component;
    # `<Token>` in a sentence is a placeholder the reader must see.
    (draft,) = chunk(MINTLIFY)

    assert draft.text == (
        "The CLI needs Node.js 20 or later.\n\n"
        "Install the CLI\n\nRun the installer.\n\n"
        "Log in\n\nPaste your API key.\n\n"
        "Can I use Yarn?\n\nYes, any package manager works.\n\n"
        "Keys rotate every 90 days. Look for the check mark. Replace\n"
        "<Token> with your key, and <KEYID> with its id."
    )

    # an API reference's field is named by its `name` (416 `<ResponseField>` on Mintlify's docs)
    (field,) = chunk(
        '<ResponseField name="status" type="string" required>\n'
        "  Where the deployment stands.\n</ResponseField>\n"
    )
    assert field.text == "status\n\nWhere the deployment stands."

    # and the page shows it so: no tags, and text indented under a component is not code
    from kb.rendering import document_render

    html = document_render(body=MINTLIFY).html
    assert "&lt;Note" not in html and "&lt;Step" not in html and "title=" not in html
    assert "Install the CLI<br>\nRun the installer.</p>" in html and "<code>" not in html
    assert "&lt;Token&gt;" in html


def test_a_component_closed_on_itself_inside_a_sentence_reads_as_the_words_it_is_given() -> None:
    # Actual Budget's `<Key k="enter" />` shows a key: read without it, "Press  to hold all
    # available money" told the customer nothing (41 such tags on its pages, outside code). A
    # value that is not a word (an address, a path, code in braces) is not what the page shows.
    body = (
        '3. Press <Key k="enter" /> to hold all available money.\n\n'
        'Stop it with <Key mod="ctrl" k="c"/> and rerun it.\n\n'
        'A logo <Logo src="/img/logo.png" /> and a <Count value={items.length} /> here.\n'
    )

    assert [draft.text for draft in chunk(body)] == [
        "3. Press enter to hold all available money.\n\n"
        "Stop it with ctrl c and rerun it.\n\n"
        "A logo  and a  here."
    ]
    # alone on its line it is a block the page shows in its own place (a video, a banner)
    assert [draft.text for draft in chunk('<Banner kind="info" />\n\nText.\n')] == ["Text."]


def test_docusaurus_tabs_are_their_labels_and_their_code_stays_code() -> None:
    body = (
        "import Tabs from '@theme/Tabs';\nimport TabItem from '@theme/TabItem';\n\n"
        '<Tabs groupId="os">\n  <TabItem value="linux" label="Linux">\n\n'
        "```sh\nsystemctl restart agent\n```\n\n  </TabItem>\n"
        '  <TabItem value="mac" label="macOS" default>\n\nUse the menu bar.\n\n'
        "  </TabItem>\n</Tabs>\n"
    )

    assert [draft.text for draft in chunk(body)] == [
        "Linux\n\n```sh\nsystemctl restart agent\n```\n\nmacOS\n\nUse the menu bar."
    ]


def test_a_hugo_highlight_shortcode_is_a_code_block_in_its_language() -> None:
    # a Go import in it stays: it is code, not an MDX import
    body = (
        '{{< highlight go "linenos=table" >}}\npackage main\n\nimport "fmt"\n{{< /highlight >}}\n'
    )

    assert visible(body) == '```go\npackage main\n\nimport "fmt"\n```\n'
    assert [line.fence.value for line in scan_lines(body)] == [
        "open",
        "body",
        "body",
        "body",
        "close",
        "none",
    ]


HUGO_CONFIG = """\
## Lists

To keep a page out of every list, set in its front matter:

{{< code-toggle file=content/x.md fm=true >}}
[build]
list = 'never'
{{< /code-toggle >}}

Or in YAML:

  {{< code-toggle file=hugo >}}
  build:
    list: never
  {{< /code-toggle >}}

{{< code-toggle config=build />}}
"""


def test_a_code_toggle_shortcode_is_the_configuration_as_a_code_block() -> None:
    # Hugo shows its body as TOML, YAML and JSON tabs: the passage holds it as code in the
    # language it is written in, never as loose lines of a paragraph
    drafts = chunk(HUGO_CONFIG)

    assert [draft.text for draft in drafts] == [
        "To keep a page out of every list, set in its front matter:\n\n"
        "```toml\n[build]\nlist = 'never'\n```\n\n"
        "Or in YAML:\n\n  ```yaml\n  build:\n    list: never\n  ```"
    ]
    assert_no_markup(drafts)


def test_a_code_shortcode_closed_by_another_name_runs_on() -> None:
    body = "{{< code-toggle >}}\na = 1\n{{< /highlight >}}\nb = 2\n{{< /code-toggle >}}\nText."

    assert [line.fence.value for line in scan_lines(body)] == [
        "open",
        "body",
        "body",
        "body",
        "close",
        "none",
    ]


def test_an_mdx_export_is_not_text_up_to_the_blank_line_that_ends_it() -> None:
    # given: MDX pages define components and data with `export` (Mintlify's docs: 13 chunks of
    # JavaScript; Starlight's: 3); an import or export runs to the next blank line
    body = (
        "export const Fruit = ({ name }) => (\n"
        '  <span className="fruit">{name}</span>\n'
        ");\n\n"
        "# Fruits\n\n"
        "Apples are red.\n\n"
        "export const fileName = 'example.js';\n\n"
        "```js\nexport const x = 1;\n```\n"
    )

    # then: the page reads as shown, code keeps its exports
    assert [draft.text for draft in chunk(body)] == [
        "Apples are red.\n\n```js\nexport const x = 1;\n```"
    ]
    assert markup_left(visible(body)) == []
    # and: a sentence that starts with the word is text, as is a line of a paragraph
    assert visible("export the data first.\nThen import it.\n") == (
        "export the data first.\nThen import it.\n"
    )
    assert visible("Tools can\nexport default values.\n") == "Tools can\nexport default values.\n"


def test_an_imported_mdx_file_is_reported_as_not_included() -> None:
    body = DOCUSAURUS_MDX.split("---\n", 2)[2]

    assert markup_warnings(body, first_line=4) == [
        "line 6: import RotationNote from './_rotation-note.mdx' not resolved "
        "(its text is not included)"
    ]


def test_markup_left_names_an_mdx_import_or_component_left_in_the_text() -> None:
    assert markup_left(DOCUSAURUS_MDX) == [
        "import { Explainer as Aside } from '../components/Explainer';",
        'import VideoEmbed from "video-embed";',
        "import RotationNote from './_rotation-note.mdx'",
        "<RotationNote />",
        '<Aside title="In depth: what a leaked key allows">',
        "</Aside>",
        "<VideoEmbed",
        "Keys expire after <Aside>90 days</Aside>. Replace <Token> with the new key.",
    ]


# --- HTML comments -----------------------------------------------------------------------------


def test_html_comments_are_not_text() -> None:
    drafts = chunk("Visible.\n<!-- hidden {{< hint >}} -->\n")

    assert [draft.text for draft in drafts] == ["Visible."]


# --- the page: anchors and links between pages --------------------------------------------------


def test_a_heading_attribute_is_the_headings_id_on_the_page() -> None:
    from kb.rendering import document_render

    rendered = document_render(body="## Proxy settings {#proxy .wide}\n\nText.\n")

    assert [(heading.text, heading.anchor) for heading in rendered.headings] == [
        ("Proxy settings", "proxy")
    ]
    assert '<h2 id="proxy">Proxy settings' in rendered.html and "{#" not in rendered.html


def test_shortcodes_and_admonitions_never_reach_the_page() -> None:
    from kb.rendering import document_render

    html = document_render(body=HUGO_HINT + "\n" + MKDOCS + "\n" + DOCUSAURUS).html

    assert not any(mark in html for mark in ("{{", ":::", "!!!"))
    # the admonition's text is prose, not an indented code block
    assert "Stop the workers before you upgrade.</p>" in html and "<code>Stop" not in html


def test_the_page_shows_a_box_title_on_its_own_line() -> None:
    from kb.rendering import document_render

    html = document_render(body=":::tip Rotate often\nRotate keys every 90 days.\n:::\n").html

    assert "<p>Rotate often<br>\nRotate keys every 90 days.</p>" in html
    # a title with nothing under it, and a plain paragraph, get no break
    assert "<br" not in document_render(body=":::tip Rotate often\n:::\n\nText.\n").html
    assert "<br" not in document_render(body="Rotate often\nRotate keys.\n").html


def test_links_between_pages_point_at_their_docs_pages() -> None:
    from kb.rendering import document_render

    body = (
        '[a](../admin/config.md#tls) [b]({{< relref "billing/refunds.md" >}}) [c](/docs/faq/)'
        " [d](https://example.com/x.md) [e](#local)\n"
    )
    pages = {"admin/config.md", "faq/_index.md", "billing/refunds.md"}

    html = document_render(body=body, path="guides/install.md", existing=pages.intersection).html

    assert [href.split('"')[1] for href in html.split("href=")[1:]] == [
        "/docs/admin/config.md#tls",
        "/docs/billing/refunds.md",
        "/docs/faq/_index.md",
        "https://example.com/x.md",
        "#local",
    ]


def test_a_page_address_is_relative_to_the_linking_page() -> None:
    from kb.rendering import document_link

    # MkDocs writes `../upgrade/` on the page served at /guides/install/
    assert document_link(href="../upgrade/", document_path="guides/install.md") == (
        "/docs/guides/upgrade.md"
    )
    assert document_link(href="upgrade/", document_path="guides/_index.md") == (
        "/docs/guides/upgrade.md"
    )


def test_a_link_to_an_mdx_file_points_at_its_docs_page() -> None:
    from kb.rendering import document_link

    assert document_link(href="./writing-thunks.mdx#usage", document_path="usage/index.md") == (
        "/docs/usage/writing-thunks.mdx#usage"
    )


def test_the_document_a_link_points_at_is_the_one_the_page_view_links_to() -> None:
    from kb.rendering import document_link, linked_document

    pages = {"configuration/ugly-urls.md", "guides/upgrade/_index.md", "faq.md"}
    # a Hugo page address, a folder's index page, a file with an anchor: as the view links them
    for href, path in [
        ("/configuration/ugly-urls/", "content-management/urls.md"),
        ("../upgrade/", "guides/install.md"),
        ("faq.md#sync", "index.md"),
    ]:
        found = linked_document(href=href, document_path=path, exists=pages.__contains__)
        assert found in pages
        linked = document_link(href=href, document_path=path, exists=pages.__contains__)
        assert linked.partition("#")[0] == f"/docs/{found}"
    # a page not in the corpus, a site, an anchor of the page itself: none
    for href in ["billing.md", "https://docs.python.org/3/", "#retries"]:
        assert linked_document(href=href, document_path="faq.md", exists=pages.__contains__) is None


def test_a_link_that_leaves_the_corpus_is_left_alone() -> None:
    from kb.rendering import document_link

    assert document_link(href="../../x.md", document_path="a.md") == "../../x.md"


def test_mkdocs_content_tabs_are_their_titles_and_their_code_stays_code() -> None:
    body = (
        '=== "Linux"\n\n    ``` sh\n    {% include "x" %}\n    ```\n\n'
        '=== "macOS"\n\n    Use brew.\n'
    )

    drafts = chunk(body)

    assert [draft.text for draft in drafts] == [
        'Linux\n\n``` sh\n{% include "x" %}\n```\n\nmacOS\n\nUse brew.'
    ]
    assert markup_warnings(body) == []  # the tag is an example inside code


def test_a_content_tab_inside_an_admonition_is_its_title_and_text() -> None:
    # given: MkDocs Material's tutorials put tabs in an example box, each indented four more
    body = (
        '!!! example "Adding a tags index"\n'
        '    === "Basic tag index"\n\n'
        "        To configure a tag index, add a `tags_file` entry.\n\n"
        "        ```yaml\n        plugins:\n          - tags\n        ```\n"
    )

    # when
    lines = scan_lines(body)

    # then: the tab's text is text and its code is code, each as far in as the tab's content
    assert [(line.text, line.fence.value) for line in lines if line.text.strip()] == [
        ("Adding a tags index", "none"),
        ("Basic tag index", "none"),
        ("To configure a tag index, add a `tags_file` entry.", "none"),
        ("```yaml", "open"),
        ("plugins:", "body"),
        ("  - tags", "body"),
        ("```", "close"),
    ]


def test_an_admonition_inside_a_definition_is_its_text() -> None:
    body = "`note`\n\n:   !!! note\n\n        Lorem ipsum.\n"

    assert visible(body) == "`note`\n\n\n\nLorem ipsum.\n"


def test_a_shortcode_tag_written_over_several_lines_is_dropped_whole() -> None:
    body = '{{< asciinema\n  cast="demo.cast"\n  loop=true >}}\nAfter the demo.\n'

    assert visible(body) == "\n\n\nAfter the demo.\n"


def test_an_erb_tag_written_over_several_lines_is_dropped_whole() -> None:
    # Fly.io's Machines API pages call Ruby components with their arguments on the lines below
    body = (
        "Get a list of all the volumes of an app.\n"
        "<% api_info = ApiInfoComponent.new(\n"
        "  heading: 'Path parameters',\n"
        "  name: 'app_name'\n"
        ") %>\n"
        "<%= render(api_info) %>\n"
        "After the parameters. `<% not a tag` stays, <%% is a literal.\n"
    )

    assert visible(body) == (
        "Get a list of all the volumes of an app.\n\n\n\n\n\n"
        "After the parameters. `<% not a tag` stays, <%% is a literal.\n"
    )


def test_a_tag_that_nothing_closes_leaves_the_rest_of_the_page_as_text() -> None:
    body = "Templates open with <% and the page goes on.\nNext line.\n{{< hint\nLast line.\n"

    assert visible(body) == body


class _SearchCountingText(str):
    """A page that counts how often the text after a line is searched for a tag's close."""

    searches = 0

    def find(self, sub, *args):  # type: ignore[override]
        if sub == "%>":
            _SearchCountingText.searches += 1
        return super().find(sub, *args)

    def rfind(self, sub, *args):  # type: ignore[override]
        if sub == "%>":
            _SearchCountingText.searches += 1
        return super().rfind(sub, *args)


def test_a_page_of_unclosed_tags_searches_for_their_close_once_not_once_a_line() -> None:
    # given: a page whose every line opens a tag that nothing closes (a search from each line
    # to the end made a 2 MB page of them take 30 s to read)
    page = _SearchCountingText("Templates open with <% and the page goes on.\n" * 1000)
    _SearchCountingText.searches = 0

    # when
    lines = scan_lines(page)

    # then: every line is read as text, and the rest of the page was searched once
    assert [line.text for line in lines[:2]] == ["Templates open with <% and the page goes on."] * 2
    assert _SearchCountingText.searches == 1


# --- the check: markup left in what the chunker produced ----------------------------------------


def test_markup_left_names_each_line_that_still_holds_markup() -> None:
    text = (
        "## Install {#install}\n\nPlain prose.\n\n{{< hint info >}}\nSee {{% notice %}}.\n"
        ":::tip\n!!! note\n{% raw %}\n```{note}\nBoxed.\n```\n"
    )

    assert markup_left(text) == [
        "## Install {#install}",
        "{{< hint info >}}",
        "See {{% notice %}}.",
        ":::tip",
        "!!! note",
        "{% raw %}",
        "```{note}",
    ]


def test_markup_left_leaves_out_code_blocks_and_inline_code() -> None:
    text = (
        "Write `{{< hint >}}` or ``:::tip`` to open a box.\n\n"
        "```markdown\n!!! note\n## Title {#id}\n```\n\n"
        "~~~\n{{< hint >}}\n~~~\n\n```{code-block} python\nprint('{{< hint >}}')\n```\n"
    )

    assert markup_left(text) == []


def test_markup_left_finds_the_fixtures_markup_before_chunking_and_none_after() -> None:
    # given: every fixture above, in its tool's syntax
    fixtures = (PANDOC_HEADINGS, HUGO_HINT, MKDOCS, DOCUSAURUS, MYST)

    for body in fixtures:
        # when
        drafts = chunk(body)

        # then: the check sees the markup the chunker removed, so it can fail
        assert markup_left(body), body
        for draft in drafts:
            assert markup_left(draft.heading_path) == []
            assert markup_left(embedding_text("Guide", draft.heading_path, draft.text)) == []


# --- GitHub alerts and Obsidian callouts, footnotes, highlights (issue 29) ----------------------


def test_an_alert_or_callout_marker_goes_and_its_title_stays() -> None:
    body = "> [!NOTE]\n> Restart after upgrading.\n\n> [!tip]- Before you start\n> Back up.\n"

    assert visible(body) == "> \n> Restart after upgrading.\n\n> Before you start\n> Back up.\n"


def test_footnote_marks_read_as_numbers() -> None:
    assert visible("Fees apply.[^1]\n\n[^1]: Per month.\n") == "Fees apply.[1]\n\n1: Per month.\n"


def test_a_highlight_is_its_words_and_code_keeps_its_marks() -> None:
    assert visible("Paid ==within 30 days==, `a==b==c`.\n") == "Paid within 30 days, `a==b==c`.\n"


def test_only_the_text_between_code_spans_is_changed() -> None:
    # a span is a run of backticks closed by a run of the same length, as CommonMark reads it
    text = "a_b `c_d` and ``e`f`` then g"

    assert outside_code_spans(text, str.upper) == "A_B `c_d` AND ``e`f`` THEN G"


# --- HTML a Markdown page uses for layout and emphasis -----------------------------------------

DOCUSAURUS_HTML = """\
<div class="browser">
<img alt="Track file downloads" src={useBaseUrl('img/track-file-downloads.png')} />
</div>

| <div style={{minWidth: '200px'}}>Channel</div> | Definition |
| :--- | :--- |
| Audio | `Medium` is "audio" <br> or "podcast" |

Press <kbd>Ctrl</kbd>+<kbd>C</kbd> to copy, or read <a href="https://example.com/x">the guide</a>.

<hr / >
<aside class="callout">Back up your data first.</aside>
<h3>Verify the element</h3>
"""


def test_html_a_page_uses_for_layout_and_emphasis_is_not_text() -> None:
    # given: Docusaurus and Fly.io pages wrap images in boxes and style table headers with
    # HTML (Plausible's "Channel" header carries a JSX style object); the page shows what the
    # tags wrap, never the tags
    lines = visible(DOCUSAURUS_HTML).split("\n")

    assert lines[:3] == ["", "", ""]
    assert lines[4] == "| Channel | Definition |"
    assert lines[6] == '| Audio | `Medium` is "audio"  or "podcast" |'
    assert lines[8] == "Press Ctrl+C to copy, or read the guide."
    assert lines[10:] == ["", "Back up your data first.", "Verify the element", ""]


@pytest.mark.parametrize(
    ("line", "read"),
    [
        ("| Time<br>limit | Cores<br/>per node |", "| Time limit | Cores per node |"),
        ("<b>Time</b><br>limit", "Time limit"),
        ("<tr><td>Growth</td><td>$99</td></tr>", "Growth $99"),
        ("Ship <b>fast</b>er", "Ship faster"),
    ],
)
def test_tags_read_as_a_space_only_where_the_page_shows_two_words_apart(
    line: str, read: str
) -> None:
    # a break or a cell between two words keeps them apart on the page (CSC's table headers
    # write "Memory<br/>(GiB)"); without a space the words would run together ("Timelimit").
    # Emphasis inside a word ("<b>fast</b>er") joins it, as the page does.
    assert visible(line) == read


def test_a_space_read_for_tags_points_at_where_the_tags_were() -> None:
    (line,) = scan_lines("Time<br>limit")

    assert line.text == "Time limit"
    assert [line.source_offset(index) for index in range(len(line.text))] == [
        0, 1, 2, 3, 4, 8, 9, 10, 11, 12
    ]  # fmt: skip


def test_html_with_an_event_handler_or_in_code_stays_as_written() -> None:
    body = (
        "<img src=x onerror=alert(1)>\n\n<b onmouseover='x'>bold</b>\n\n<script>alert(1)</script>"
        '\n\nWrite `<br>` for a break.\n\n```html\n<div class="x">Hi</div>\n```\n'
    )

    assert visible(body) == body


def test_a_placeholder_in_angle_brackets_is_not_an_html_tag() -> None:
    assert visible("Replace <token> and <KEYID> with yours.") == (
        "Replace <token> and <KEYID> with yours."
    )


def test_the_page_shows_what_the_html_wraps_and_never_the_tags() -> None:
    from kb.rendering import document_render

    html = document_render(body="# Channels\n\n" + DOCUSAURUS_HTML).html

    assert "&lt;" not in html and "useBaseUrl" not in html and "minWidth" not in html
    assert "<th>Channel</th>" in html and "Press Ctrl+C to copy" in html


def test_html_tags_never_reach_a_chunk() -> None:
    (draft,) = chunk("## Channels\n\n" + DOCUSAURUS_HTML)

    assert "<" not in draft.text and "useBaseUrl" not in draft.text
    assert "| Channel | Definition |" in draft.text


HTML_LISTS = """<div class="card">
<h3>Not supported</h3>
<p>Products we do not support.</p>
<ul class="list">
  <li><b>LiteFS</b></li>
  <li>Unmanaged <a href="/pg">Postgres</a> apps</li>
</ul>
</div>

<ol>
<li>Click Connect.</li>
<li>Add a password.</li>
</ol>
"""


def test_an_html_list_is_a_list_and_an_html_heading_a_line_of_its_own() -> None:
    # given: Plausible's introduction cards and Fly.io's lists of products are HTML; without
    # their tags a card read as one run-on sentence ("Not supported Products we do not support.
    # LiteFS Unmanaged Postgres apps", "Register for an account Add your website…")
    (draft,) = chunk(HTML_LISTS)

    # then: each item is an item of its list, numbered where the list is, and the heading a
    # block of its own
    assert [block.strip("\n") for block in draft.text.split("\n\n") if block.strip()] == [
        "Not supported",
        "Products we do not support.",
        "- LiteFS\n- Unmanaged Postgres apps",
        "1. Click Connect.\n1. Add a password.",
    ]
    # and the page shows them so
    from kb.rendering import document_render

    html = document_render(body=HTML_LISTS).html
    assert "<ul>\n<li>LiteFS</li>" in html and "<ol>\n<li>Click Connect.</li>" in html


HTML_TABLE = """First make sure your stats are still tracking.

<table>
  <tr>
    <th>Installation type</th>
    <th>Required action</th>
  </tr>
  <tr>
    <td><b>WordPress plugin</b></td>
    <td>
      Update the site domain in your [plugin settings](/wp) | now
    </td>
  </tr>
  <tr>
    <td>NPM package</td>
    <td>Update the <code>init</code> options</td>
  </tr>
</table>

After 72 hours the old domain is cleared.
"""


def test_an_html_table_is_read_as_the_pipe_table_it_shows_a_row_per_line() -> None:
    # given: Plausible's domain-change checklist writes its table in HTML, a cell per line; without
    # its tags each cell read as a line of its own, no row under its column's name
    (draft,) = chunk(HTML_TABLE)

    # then: one line per row, under the header and its rule, the cells' Markdown kept
    assert [block.strip("\n") for block in draft.text.split("\n\n") if block.strip()] == [
        "First make sure your stats are still tracking.",
        "| Installation type | Required action |\n| --- | --- |\n"
        "| **WordPress plugin** | Update the site domain in your [plugin settings](/wp) \\| now |\n"
        "| NPM package | Update the `init` options |",
        "After 72 hours the old domain is cleared.",
    ]


def test_an_html_table_indented_in_the_page_is_read_as_a_table_too() -> None:
    # given: Docusaurus pages indent their tables inside the JSX that holds them
    indented = "\n".join(f"  {line}" if line else "" for line in HTML_TABLE.splitlines())

    # when
    rows = [line.text for line in scan_lines(indented) if line.text.startswith("|")]

    # then
    assert rows[:2] == ["| Installation type | Required action |", "| --- | --- |"]
    assert len(rows) == 4


def test_an_html_tables_rows_stand_where_their_rows_are_on_the_page() -> None:
    rows = [line for line in scan_lines(HTML_TABLE) if line.text.startswith("|")]

    # each row's first character is its `<tr>`; the header's rule stands with the header
    first_row = HTML_TABLE.index("<tr>")
    npm_row = HTML_TABLE.index("<tr>", HTML_TABLE.index("NPM") - 30)
    assert [row.source_offset(0) for row in rows] == [
        first_row, first_row, HTML_TABLE.index("<tr>", first_row + 1), npm_row
    ]  # fmt: skip
    # and the lines after the table are where the page has them
    (after,) = (line for line in scan_lines(HTML_TABLE) if line.text.startswith("After"))
    assert after.source_offset(0) == HTML_TABLE.index("After 72 hours")


@pytest.mark.parametrize(
    "table",
    [
        pytest.param("<table>\n<tr><td>a</td></tr>\n", id="not closed"),
        pytest.param(
            "<table>\n<tr><td><table><tr><td>a</td></tr></table></td></tr>\n</table>\n",
            id="nested",
        ),
        pytest.param("<table>\n<tr><td>a</td></tr>\n<table>\n</table>\n", id="opened twice"),
    ],
)
def test_an_html_table_not_closed_or_nested_is_read_as_before(table: str) -> None:
    lines = scan_lines(table)

    # then: its tags go, its text stays, and no line is written in place of another
    assert all(not line.text.startswith("|") for line in lines)
    assert len(lines) == table.count("\n") + 1
    assert next(line.text.strip() for line in lines if line.text.strip()) == "a"
    assert all("<" not in line.text for line in lines)


def test_an_html_items_mark_points_at_where_its_text_starts() -> None:
    (line,) = (line for line in scan_lines(HTML_LISTS) if "LiteFS" in line.text)

    assert line.text == "- LiteFS"
    text_start = HTML_LISTS.index("LiteFS")
    assert [line.source_offset(index) for index in range(len(line.text))] == [
        text_start, text_start, *range(text_start, text_start + 6)
    ]  # fmt: skip


def test_an_html_anchor_in_a_heading_is_the_headings_id_not_its_text() -> None:
    from kb.rendering import document_render

    body = '## 6. Will I lose units to the cutter? <a id="cutter"></a>\n\nOnly unused ones.\n'

    rendered = document_render(body=body)

    assert [(heading.text, heading.anchor) for heading in rendered.headings] == [
        ("6. Will I lose units to the cutter?", "cutter")
    ]
    assert [draft.heading_path for draft in chunk(body)] == ["6. Will I lose units to the cutter?"]


SPAN = st.tuples(st.integers(0, 60), st.integers(0, 12)).map(lambda pair: (pair[0], sum(pair)))


@given(spans=st.lists(SPAN, max_size=12), position=st.integers(0, 80), other=SPAN)
@example(spans=[(20, 32), (32, 33)], position=0, other=(32, 32))  # found by Hypothesis: a seam
def test_spans_answer_as_a_search_through_every_span_would(
    spans: list[tuple[int, int]], position: int, other: tuple[int, int]
) -> None:
    # the reading asks these once a tag; a search through every span made a line of thousands
    # of tags and code spans take minutes (make bench: "reading a line of tags and code spans")
    found = Spans(spans)

    assert found.holds(position) == any(a <= position < b for a, b in spans)
    assert found.meets(*other) == any(a < other[1] and other[0] < b for a, b in spans)


def test_an_html_tag_written_over_several_lines_is_dropped_whole() -> None:
    body = (
        "While Fly.io provides a <a\n"
        '   href="https://fly.io/docs/machines/working-with-machines/">Machines API</a>,\n'
        'you build the rest.\n\n<img\n  src="/static/x.png"\n  alt="A tiger" />\n\nDone.\n'
    )

    assert visible(body).split("\n") == [
        "While Fly.io provides a ",
        "Machines API,",
        "you build the rest.",
        "",
        "",
        "",
        "",
        "",
        "Done.",
        "",
    ]


def test_a_comparison_at_a_lines_end_is_not_an_html_tag() -> None:
    body = "The loop runs while i<p\nholds, then stops.\n\nSee <b>the limits</b>.\n"

    assert visible(body) == "The loop runs while i<p\nholds, then stops.\n\nSee the limits.\n"


def test_a_pages_head_metadata_is_not_text() -> None:
    # given: Docusaurus pages set <head> metadata in MDX, here a search engine's copy of the
    # page's questions, which the reader never sees
    body = (
        "<head>\n"
        '  <script type="application/ld+json">{`\n'
        '    {"@type": "FAQPage", "name": "Is billing based per account?"}\n'
        "  `}</script>\n"
        "</head>\n\n"
        "## Is billing based per account?\n\nPer team.\n\nAdd the script to your <head> tag.\n"
    )

    # when
    drafts = chunk(body)

    # then
    assert [(draft.heading_path, draft.text) for draft in drafts] == [
        ("Is billing based per account?", "Per team.\n\nAdd the script to your <head> tag.")
    ]


def test_an_html_pre_block_is_a_code_block() -> None:
    # given: CSC's pages show console sessions in HTML <pre> blocks, the user's input in <b>
    body = (
        "Start the configuration:\n\n<pre>\n"
        "[kkayttaj@puhti-login11 ~]$ <b>rclone config</b>\nCurrent remotes:\n</pre>\n\n"
        "Then pick a name.\n"
    )

    # when
    (draft,) = chunk(body)

    # then: its lines stay lines, as written, and the prose around it is prose
    assert draft.text == (
        "Start the configuration:\n\n```\n"
        "[kkayttaj@puhti-login11 ~]$ <b>rclone config</b>\nCurrent remotes:\n```\n\n"
        "Then pick a name."
    )


def test_a_pre_tag_nothing_closes_is_text() -> None:
    body = "Use <pre> for listings:\n\n<pre>\n\nThe rest of the page.\n"

    assert "```" not in visible(body) and "The rest of the page." in visible(body)
