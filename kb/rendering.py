"""Markdown to safe HTML, for previews in admin and (later) the public document pages.

markdown-it-py with raw HTML off turns any HTML in a document into text; nh3 then removes
whatever unsafe markup could still come out (javascript: links, event attributes). HTML
comments never reach the output, so the hidden instructions some pages carry are not shown.
"""

from __future__ import annotations

import nh3
from markdown_it import MarkdownIt

from kb.chunking import without_comments

_markdown = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def markdown_to_html(body: str) -> str:
    html = _markdown.render(without_comments(body))
    return nh3.clean(html, url_schemes={"http", "https", "mailto"})
