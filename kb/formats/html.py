"""HTML articles (help-center exports, a website's pages) as CommonMark for the Markdown path.

Zendesk and Intercom keep an article's body as HTML, and a website serves whole pages with
menus around the text. Both become Markdown here, which ``kb.parsing`` then reads like any
written page: headings (h1-h6) become ATX headings and so sections, lists stay lists, tables
become pipe tables, ``<pre>`` becomes a fenced block (its ``language-x`` class kept), links and
images keep their targets (resolved against ``base_url``) and images their alt text. Scripts,
styles, forms, hidden elements and the site's chrome (nav, header, footer, aside) are dropped.

Two entry points:

- ``html_to_markdown(html, base_url=...)``: a fragment or page converted whole (an article
  body from an API), only never-text elements dropped.
- ``html_article(html, base_url=...)``: a page read as an article: its title (``<h1>``, else
  ``<title>``), description (``<meta name="description">``) and the Markdown of its main
  content only. The main content is the page's ``[role=main]``, ``<main>`` or single
  ``<article>``; a page with none of these but with site chrome goes through readability-lxml's
  extractor; a page with neither (an exported body) is taken whole.

The conversion is markdownify's (BeautifulSoup underneath), with the few rules a help center
needs changed: heading text is plain (no ``**`` or permalink ``¶`` in a heading path), code
fences grow past the backticks inside them, table cells escape ``|``, definition lists read as
a term and a paragraph (no ``:`` syntax the chunker would keep), and ``<`` in text is escaped
so a sentence about the ``<br>`` tag is not raw HTML in Markdown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

from bs4 import BeautifulSoup, Comment, Doctype, NavigableString, Tag
from bs4.dammit import EncodingDetector
from markdownify import MarkdownConverter

from kb.chunking.lines import prose_lines
from kb.chunking.markup import CODE_SPAN

# Elements that are never text a reader reads.
_NEVER_TEXT = (
    "script", "style", "noscript", "template", "iframe", "svg", "canvas", "object", "embed",
    "form", "button", "input", "select", "textarea", "link", "meta", "head", "dialog",
)  # fmt: skip
# A site's chrome around the article: dropped when the article is picked from a page.
_CHROME = ("nav", "header", "footer", "aside")
_CHROME_ROLES = ("navigation", "banner", "contentinfo", "complementary", "search")
# What a heading's permalink shows: `<a class="headerlink">¶</a>`, `<a class="anchor">#</a>`.
_PERMALINK_TEXT = frozenset({"", "¶", "#", "§", "🔗", "link"})
_LANGUAGE_CLASS = re.compile(r"^(?:language|lang|highlight-source|highlight)-([\w+#.-]+)$")
_BACKTICKS = re.compile(r"`+")
_BLANK_LINES = re.compile(r"\n{3,}")
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")
# Raw HTML left in converted text: a tag of a known element or an entity not decoded.
_HTML_ELEMENTS = (
    "a|abbr|article|aside|b|blockquote|body|br|button|caption|code|col|colgroup|dd|details|div|"
    "dl|dt|em|figcaption|figure|font|footer|form|h[1-6]|head|header|hr|html|i|iframe|img|input|"
    "kbd|label|li|main|mark|meta|nav|ol|p|pre|script|section|small|span|strong|style|sub|"
    "summary|sup|table|tbody|td|tfoot|th|thead|tr|u|ul|video"
)
HTML_LEFTOVER = re.compile(
    rf"(?<!\\)</?(?:{_HTML_ELEMENTS})(?:[\s/>]|$)|&(?:[a-z]{{2,8}}|#\d{{2,6}}|#x[0-9a-f]{{2,5}});",
    re.IGNORECASE,
)


_TEMPLATE_TAG = re.compile(r"\{\{.*?\}\}|\{%.*?%\}")  # a whole tag: `{{}` is a key's name


@dataclass(frozen=True)
class HtmlArticle:
    """A page read as an article: what ``kb.parsing`` needs to make it a document."""

    title: str  # the main content's first <h1>, else <title>; "" when the page has neither
    description: str  # <meta name="description">, "" when absent
    markdown: str  # the main content as CommonMark
    canonical_url: str  # <link rel="canonical">, resolved; "" when absent
    extractor: str  # how the main content was found: "main", "article", "readability", "body"
    content_html: str = ""  # the main content's HTML, chrome dropped, links as written


def html_to_markdown(html: str, *, base_url: str | None = None) -> str:
    """``html`` (a fragment, such as an article body from a help-center API, or a whole page)
    as CommonMark. Never-text elements (scripts, styles, forms, hidden elements) are dropped;
    everything else is kept, site chrome included: use ``html_article`` to pick a page's
    article. Relative links and image sources are resolved against ``base_url`` (or the page's
    own ``<base href>``) when one is given."""
    soup = _soup(html)
    base = _base_url(soup, base_url)
    root = soup.body or soup
    _drop_never_text(root)
    _drop_permalinks(root)
    return _markdown(root, base_url=base)


def html_article(html: str, *, base_url: str | None = None) -> HtmlArticle:
    """A page's title, description and main content as CommonMark (see the module's doc)."""
    soup = _soup(html)
    base = _base_url(soup, base_url)
    page_title = _text(soup.title) if soup.title else ""
    description = _meta_content(soup, "description")
    canonical = _canonical(soup, base)
    root: Tag = soup.body or soup
    _drop_never_text(root)
    region, extractor = _main_region(root)
    if region is None:
        region, extractor = _readability_region(root)
    if region is None:
        region, extractor = root, "body"
    _drop_chrome(region)
    _drop_permalinks(region)
    heading = region.find("h1")
    title = _text(heading) if isinstance(heading, Tag) else ""
    return HtmlArticle(
        title=title or page_title,
        description=description,
        markdown=_markdown(region, base_url=base),
        canonical_url=canonical,
        extractor=extractor,
        content_html=str(region) if region is not root else "".join(map(str, root.contents)),
    )


def html_decode(raw: bytes) -> str | None:
    """The text of an HTML file: UTF-8 (with or without a BOM), else the encoding the page
    declares (``<meta charset>``, an XML declaration); None when neither decodes it."""
    try:
        return raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        pass
    declared = EncodingDetector.find_declared_encoding(raw[:4096], is_html=True)
    if declared:
        try:
            return raw.decode(declared)
        except (UnicodeDecodeError, LookupError):
            return None
    return None


def html_left(text: str) -> list[str]:
    r"""The lines of converted ``text`` that still hold markup outside code: raw HTML (a tag of
    a known element, an undecoded entity) or a template's tags (``{{ }}``, ``{% %}``: Jinja,
    Liquid, Handlebars, left in an HTML file a site generator was meant to render). What
    ``kb_sync --fail-on-markup`` counts for a page converted from HTML.

    The Markdown dialects' marks (``{#id}``, ``:::``, ``!!!``, MDX tags) are not looked for:
    an HTML page has no such syntax, so text like that is what the page shows its readers (a
    key list's ``{#}``), and ``<`` in text is escaped (``\<Lib>``) by the conversion. A fenced
    block and inline code are left out."""
    return [
        line.strip()
        for line in prose_lines(text)
        if HTML_LEFTOVER.search(outside := CODE_SPAN.sub("", line)) or _TEMPLATE_TAG.search(outside)
    ]


def _soup(html: str) -> BeautifulSoup:
    soup = BeautifulSoup(html, "lxml")
    for node in soup.find_all(string=lambda s: isinstance(s, Comment | Doctype)):
        node.extract()
    return soup


def _base_url(soup: BeautifulSoup, base_url: str | None) -> str | None:
    base = soup.find("base", href=True)
    if isinstance(base, Tag):
        return urljoin(base_url or "", str(base["href"])) or base_url
    return base_url


def _meta_content(soup: BeautifulSoup, name: str) -> str:
    for attribute in ("name", "property"):
        meta = soup.find("meta", attrs={attribute: name, "content": True})
        if isinstance(meta, Tag):
            return " ".join(str(meta["content"]).split())
    return ""


def _canonical(soup: BeautifulSoup, base: str | None) -> str:
    for link in soup.find_all("link", href=True):
        if "canonical" in (link.get("rel") or []):
            return urljoin(base or "", str(link["href"]))
    return ""


def _hidden(tag: Tag) -> bool:
    style = str(tag.get("style") or "").replace(" ", "").lower()
    return (
        tag.has_attr("hidden")
        or str(tag.get("aria-hidden") or "").lower() == "true"
        or "display:none" in style
        or "visibility:hidden" in style
    )


def _drop_never_text(root: Tag) -> None:
    for tag in root.find_all(_NEVER_TEXT):
        tag.decompose()
    for tag in root.find_all(_hidden):
        tag.decompose()


def _drop_chrome(region: Tag) -> None:
    """Drop site chrome inside the chosen region; a ``<header>`` that holds the article's own
    ``<h1>`` is the article's header, not the site's, and stays."""
    for tag in region.find_all(_is_chrome):
        if tag.decomposed:
            continue
        if tag.name == "header" and tag.find("h1") is not None and tag.find("nav") is None:
            continue
        tag.decompose()


def _is_chrome(tag: Tag) -> bool:
    return tag.name in _CHROME or str(tag.get("role") or "") in _CHROME_ROLES


def _drop_permalinks(region: Tag) -> None:
    for heading in region.find_all(re.compile(r"^h[1-6]$")):
        for link in heading.find_all("a"):
            if " ".join(link.get_text().split()).lower() in _PERMALINK_TEXT:
                link.decompose()


def _main_region(root: Tag) -> tuple[Tag | None, str]:
    found = root.find(lambda tag: tag.get("role") == "main") or root.find("main")
    if isinstance(found, Tag):
        return found, "main"
    articles = root.find_all("article")
    if len(articles) == 1:
        return articles[0], "article"
    return None, ""


def _readability_region(root: Tag) -> tuple[Tag | None, str]:
    """The article readability-lxml finds, for a page with chrome but no semantic landmark;
    None for a page without chrome (an exported body is the article, taken whole)."""
    chrome = root.find(_is_chrome)
    if chrome is None:
        return None, ""
    from readability import Document as ReadabilityDocument  # imported only where it is used

    summary = ReadabilityDocument(str(root)).summary(html_partial=True)
    region = BeautifulSoup(summary, "lxml")
    body = region.body or region
    if not body.get_text(strip=True):
        return None, ""
    return body, "readability"


def _text(tag: Tag) -> str:
    return " ".join(tag.get_text(" ").split())


class _Converter(MarkdownConverter):
    """markdownify with a help center's rules (see the module's doc). Its stub declares no
    ``convert_*`` methods, hence the ``type: ignore`` on each call of the original."""

    def __init__(self, *, base_url: str | None, **options: Any) -> None:
        self._base_url = base_url
        super().__init__(
            heading_style="atx",
            bullets="-",
            escape_underscores=False,  # `snake_case` names are words of a help page
            code_language_callback=_code_language,
            **options,
        )

    def _resolved(self, url: str) -> str:
        url = url.strip()
        if self._base_url and url and not url.startswith("#"):
            return urljoin(self._base_url, url)
        return url

    def escape(self, text: str, parent_tags: Any) -> str:
        text = super().escape(text, parent_tags)  # type: ignore[misc]
        if "_noformat" in parent_tags:
            return text
        return _TAG_START.sub(r"\\<", text)

    def convert_a(self, el: Tag, text: str, parent_tags: Any) -> str:
        href = str(el.get("href") or "")
        if href.lower().startswith(("javascript:", "data:")):
            del el["href"]
        elif href:
            el["href"] = self._resolved(href)
        return str(super().convert_a(el, text, parent_tags))  # type: ignore[misc]

    def convert_img(self, el: Tag, text: str, parent_tags: Any) -> str:
        alt = " ".join(str(el.get("alt") or "").split())
        src = str(el.get("src") or "")
        if not src or src.lower().startswith("data:"):
            return alt  # an inline picture: its alt text is what is left to read
        el["src"] = self._resolved(src)
        el["alt"] = alt.replace("[", "(").replace("]", ")")
        return str(super().convert_img(el, text, parent_tags))  # type: ignore[misc]

    def convert_hN(self, n: int, el: Tag, text: str, parent_tags: Any) -> str:
        plain = _text(el).rstrip("#").strip()
        if not plain:
            return ""
        if "_inline" in parent_tags:
            return plain
        return f"\n\n{'#' * max(1, min(6, n))} {plain}\n\n"

    def convert_pre(self, el: Tag, text: str, parent_tags: Any) -> str:
        if not text.strip("\n"):
            return ""
        language = _code_language(el) or ""
        code = text.strip("\n")
        longest = max((len(run) for run in _BACKTICKS.findall(code)), default=0)
        fence = "`" * max(3, longest + 1)
        return f"\n\n{fence}{language}\n{code}\n{fence}\n\n"

    def convert_td(self, el: Tag, text: str, parent_tags: Any) -> str:
        return str(super().convert_td(el, _cell(text), parent_tags))  # type: ignore[misc]

    def convert_th(self, el: Tag, text: str, parent_tags: Any) -> str:
        return str(super().convert_th(el, _cell(text), parent_tags))  # type: ignore[misc]

    def convert_dt(self, el: Tag, text: str, parent_tags: Any) -> str:
        term = " ".join(text.split())
        return f"\n\n**{term}**\n\n" if term else ""

    def convert_dd(self, el: Tag, text: str, parent_tags: Any) -> str:
        text = text.strip()
        return f"\n\n{text}\n\n" if text else ""


def _cell(text: str) -> str:
    return " ".join(text.replace("|", r"\|").split())


def _code_language(el: Tag) -> str | None:
    for tag in (el, el.find("code")):
        if not isinstance(tag, Tag):
            continue
        for name in tag.get("class") or []:
            match = _LANGUAGE_CLASS.match(str(name))
            if match:
                return match.group(1)
    return None


def _markdown(region: Tag, *, base_url: str | None) -> str:
    for text in region.find_all(string=True):
        if isinstance(text, NavigableString) and "\xa0" in text:
            text.replace_with(text.replace("\xa0", " "))
    converted = _Converter(base_url=base_url).convert_soup(region)
    converted = converted.replace("\r", "")
    return _BLANK_LINES.sub("\n\n", converted).strip("\n") + "\n"
