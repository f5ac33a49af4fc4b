"""An upstream article as the Markdown file a folder sync would read: front matter + body.

Writing it as a file lets the connector's articles go through the very parser, limits and
provenance rules of ``kb_sync``: the hash of these bytes is the "file changed" signal.
"""

from __future__ import annotations

import functools
import html
import re

import nh3
import yaml

from kb.connectors.base import Connector, UpstreamArticle, article_path
from kb.document_choices import Audience, Status
from kb.services.sync import Source


def article_body_markdown(body_html: str) -> str:
    """An article's HTML body as Markdown: the one place a connector converts a body.

    Until the HTML→Markdown conversion of branch i29web is merged, this keeps the text and its
    paragraph breaks only (tags stripped by nh3, entities decoded): headings, lists, links and
    tables come out as plain paragraphs."""
    text = re.sub(r"(?i)<br\s*/?>|</(?:p|div|h[1-6]|li|tr|pre|blockquote)>", "\n\n", body_html)
    text = html.unescape(nh3.clean(text, tags=set()))
    paragraphs = (" ".join(part.split()) for part in re.split(r"\n\s*\n", text))
    return "\n\n".join(part for part in paragraphs if part) + "\n"


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
    return f"---\n{header}---\n\n{article_body_markdown(article.body_html)}".encode()


def article_source(connector: Connector, article: UpstreamArticle) -> Source:
    """``article`` as a sync source: its document path and a reader of its file."""
    return (
        article_path(connector, article.article_id),
        functools.partial(article_markdown, article),
    )
