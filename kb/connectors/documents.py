"""An upstream article as the Markdown file a folder sync would read: front matter + body.

Writing it as a file lets the connector's articles go through the very parser, limits and
provenance rules of ``kb_sync``: the hash of these bytes is the "file changed" signal.
"""

from __future__ import annotations

import functools

import yaml

from kb.connectors.base import Connector, UpstreamArticle, article_path
from kb.document_choices import Audience, Status
from kb.formats.html import html_to_markdown
from kb.services.sync import Source


def article_body_markdown(body_html: str, *, base_url: str | None = None) -> str:
    """An article's HTML body as Markdown: the one place a connector converts a body
    (``kb.formats.html``: headings, lists, tables, code and links kept; links resolved against
    the article's upstream address)."""
    return html_to_markdown(body_html, base_url=base_url)


def article_markdown(article: UpstreamArticle) -> bytes:
    """The file of ``article``: front matter naming everything the row takes from upstream
    (an internal audience is always stated, so a file never widens a page by silence)."""
    front_matter: dict[str, object] = {
        "title": article.title,
        "category": article.category,
        "audience": str(
            Audience.INTERNAL if article.draft or article.restricted else Audience.PUBLIC
        ),
        "status": str(Status.DRAFT if article.draft else Status.PUBLISHED),
        "updated": article.updated_at.date().isoformat(),
    }
    header = yaml.safe_dump(front_matter, sort_keys=False, allow_unicode=True)
    body = article_body_markdown(article.body_html, base_url=article.url or None)
    return f"---\n{header}---\n\n{body}".encode()


def article_source(connector: Connector, article: UpstreamArticle) -> Source:
    """``article`` as a sync source: its document path and a reader of its file."""
    return (
        article_path(connector, article.article_id),
        functools.partial(article_markdown, article),
    )
