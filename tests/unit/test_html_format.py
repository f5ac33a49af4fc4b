"""HTML articles as CommonMark (kb.formats.html) and as documents (kb.parsing), issue 29."""

from __future__ import annotations

import pytest

from kb.chunking.structure import split_sections
from kb.formats.html import html_article, html_left, html_to_markdown
from kb.parsing import DocumentParseError, parse_document

PAGE = """<!DOCTYPE html>
<html><head><title>Refunds - Acme Help Center</title>
<meta name="description" content="How  refunds work.">
<link rel="canonical" href="/hc/articles/refunds">
<script>window.tracking = "script text";</script><style>p { color: red }</style></head>
<body>
<nav><a href="/">Home</a> <a href="/hc">All articles</a></nav>
<header class="site-header">Acme support</header>
<main>
  <h1>Refunds <a class="headerlink" href="#refunds">¶</a></h1>
  <p>Ask for a <strong>refund</strong> within 30&nbsp;days; see <a href="terms">the terms</a>.</p>
  <h2 id="cards"><code>Card</code> payments <em>today</em></h2>
  <ol><li>Open <b>Billing</b>.</li>
  <li>Choose a plan:<ul><li>Monthly</li><li>Yearly</li></ul></li></ol>
  <table><thead><tr><th>Plan</th><th>Refund window</th></tr></thead>
  <tbody><tr><td>Monthly | Pro</td><td><p>30 days</p><p>from payment</p></td></tr></tbody></table>
  <h3>From the API</h3>
  <pre><code class="language-bash">curl -X POST /refunds  # a ``` inside
echo done</code></pre>
  <p><img src="/img/refund-button.png" alt="The Refund button"> Click it.</p>
  <dl><dt>Proration</dt><dd>A partial refund for the unused days.</dd></dl>
  <div hidden>Internal note, never shown</div>
  <p>Write the &lt;br&gt; tag as text, and my_setting_name stays one word.</p>
</main>
<aside>Related articles</aside>
<footer>© Acme</footer>
</body></html>
"""


def test_a_page_becomes_its_main_content_as_markdown_with_title_and_description() -> None:
    # when
    article = html_article(PAGE, base_url="https://help.acme.test/hc/articles/refunds")

    # then
    assert article.title == "Refunds"
    assert article.description == "How refunds work."
    assert article.canonical_url == "https://help.acme.test/hc/articles/refunds"
    assert article.extractor == "main"
    markdown = article.markdown
    assert markdown.startswith("# Refunds\n\n")
    assert (
        "Ask for a **refund** within 30 days; see [the terms](https://help.acme.test/hc/articles/terms)."
        in markdown
    )
    assert "\n## Card payments today\n" in markdown
    assert "1. Open **Billing**.\n2. Choose a plan:\n   - Monthly\n   - Yearly" in markdown
    assert (
        "| Plan | Refund window |\n| --- | --- |\n| Monthly \\| Pro | 30 days from payment |"
        in markdown
    )
    assert "````bash\ncurl -X POST /refunds  # a ``` inside\necho done\n````" in markdown
    assert (
        "![The Refund button](https://help.acme.test/img/refund-button.png) Click it." in markdown
    )
    assert "**Proration**\n\nA partial refund for the unused days." in markdown
    assert "\\<br> tag" in markdown and "my_setting_name" in markdown
    for dropped in ("script text", "color: red", "All articles", "Acme support", "Internal note",
                    "Related articles", "© Acme", "¶"):  # fmt: skip
        assert dropped not in markdown


def test_the_sections_are_the_pages_headings() -> None:
    markdown = html_article(PAGE).markdown
    paths = [" > ".join(section.path) for section in split_sections(markdown) if section.path]
    assert paths == [
        "Refunds",
        "Refunds > Card payments today",
        "Refunds > Card payments today > From the API",
    ]


def test_a_fragment_is_converted_whole_without_guessing_an_article() -> None:
    # given an article body as a help-center API returns it
    body = '<h2>Before you start</h2><p>You need <a href="/hc/en-us/articles/1">an account</a>.</p>'

    # when
    markdown = html_to_markdown(body, base_url="https://acme.zendesk.test/hc/en-us/articles/2")

    # then
    assert markdown == (
        "## Before you start\n\nYou need [an account](https://acme.zendesk.test/hc/en-us/articles/1).\n"
    )
    assert html_article(body).extractor == "body"


def test_a_page_without_landmarks_but_with_chrome_goes_through_the_extractor() -> None:
    page = (
        "<html><body><div id='menu'><nav><a href='/a'>A</a><a href='/b'>B</a></nav></div>"
        "<div class='content'><h1>Exporting data</h1>"
        + "<p>Exports are written as CSV files once a day, with one row per invoice line.</p>" * 5
        + "</div><div class='footer'><footer>Contact us</footer></div></body></html>"
    )
    article = html_article(page)
    assert article.extractor == "readability"
    assert "Exports are written as CSV files" in article.markdown
    assert "Contact us" not in article.markdown


def test_raw_html_left_outside_code_is_reported() -> None:
    text = (
        "A <span>tag</span> here\n\n```html\n<div>code is fine</div>\n```\n\nA `<b>` span, &nbsp; x"
    )
    assert html_left(text) == ["A <span>tag</span> here", "A `<b>` span, &nbsp; x"]
    # a template's tags that a site generator should have rendered are markup too; a literal
    # `{#}` or an escaped `\<Lib>` is what the page shows its reader
    assert html_left("{% include note.html %}\n\n{{ page.title }}\n\nSend {#}, {{} or \\<Lib>") == [
        "{% include note.html %}",
        "{{ page.title }}",
    ]
    assert html_left(html_article(PAGE).markdown) == []
    # a fence is closed only by a bare fence: a "```python" line inside one is code
    assert html_left("```\nfirst\n```python\n<div>in code</div>\n```\n") == []


def test_an_html_file_is_a_document_with_its_title_and_markdown_body() -> None:
    # when
    document = parse_document(path="hc/refunds.html", raw=PAGE.encode())

    # then
    assert document.title == "Refunds"
    assert document.description == "How refunds work."
    assert document.status == "published"
    assert document.body.startswith("# Refunds\n")
    assert document.unknown_keys == ()


def test_front_matter_above_html_wins_over_the_page() -> None:
    raw = b"---\ntitle: Refund policy\naudience: internal\n---\n<h1>Refunds</h1><p>Text.</p>\n"
    document = parse_document(path="refunds.htm", raw=raw)
    assert (document.title, document.audience) == ("Refund policy", "internal")
    assert document.body == "# Refunds\n\nText.\n"


def test_an_untitled_html_file_takes_its_file_name() -> None:
    document = parse_document(path="guides/getting-started.html", raw=b"<p>Hello.</p>")
    assert document.title == "Getting started"


def test_html_in_a_declared_encoding_is_read_and_undeclared_bytes_are_refused() -> None:
    latin = '<meta charset="iso-8859-1"><h1>Café</h1>'.encode("latin-1")
    assert parse_document(path="cafe.html", raw=latin).title == "Café"
    with pytest.raises(DocumentParseError, match="declares no encoding"):
        parse_document(path="cafe.html", raw="<h1>Café</h1>".encode("latin-1"))
    with pytest.raises(DocumentParseError, match="NUL"):
        parse_document(path="x.html", raw=b"<p>\x00</p>")
