"""How a stored answer is shown: safe Markdown with its citation markers as links to the
numbered sources, and each source as a link to the cited passage of its page."""

from __future__ import annotations

import datetime
import re
from typing import Any

from django import template
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.safestring import SafeString, mark_safe

from assistant.citations import MARKER, marker_numbers
from assistant.injection import shown_heading_path, shown_title
from assistant.models import Message
from kb.rendering import markdown_to_html

register = template.Library()

_TAG = re.compile(r"(<[^>]*>)")


@register.filter
def answer_html(message: Message) -> SafeString:
    """The answer as HTML. Markdown is rendered with raw HTML off and then sanitised (so a
    ``<script>`` in an answer or in a quoted page is text), and only then are the markers in the
    text (never inside a tag) turned into links to the sources list."""
    html = markdown_to_html(message.answer)
    numbers = {source["number"] for source in message.citations}

    def link(match: re.Match[str]) -> str:
        cited = marker_numbers(match.group("body"))
        if not cited or not all(number in numbers for number in cited):
            return match.group()
        links = "".join(
            f'<a class="cite" href="#source-{message.public_id}-{number}" '
            f'aria-label="source {number}">[{number}]</a>'
            for number in cited
        )
        return match.group("space") + links

    parts = _TAG.split(html)
    linked = [part if part.startswith("<") else MARKER.sub(link, part) for part in parts]
    # Safe: sanitised HTML, plus links built from a UUID and digits.
    return mark_safe("".join(linked))


@register.filter
def source_url(source: dict[str, Any]) -> str:
    """The document page at the cited passage: the page marks the chunk's offsets lightly and
    the sentences the answer drew on (``quote``: ``start-end`` pairs in the body) strongly."""
    params = {"start": source["char_start"], "end": source["char_end"]}
    if source.get("quotes"):
        params["quote"] = ",".join(f"{start}-{end}" for start, end in source["quotes"])
    query = urlencode(params)
    return f"{reverse('kb:document', args=[source['path']])}?{query}#passage"


@register.filter
def source_label(source: dict[str, Any]) -> str:
    """The section the cited sentences are in, else the passage's own heading path, else its
    title: each as `assistant.injection` lets a customer see it. Answers are labelled safely
    when they are made; this also covers the ones stored (or cached) before that."""
    return (
        shown_heading_path(str(source.get("quote_section") or ""))
        or shown_heading_path(str(source.get("section") or ""))
        or shown_title(str(source.get("title") or ""), path=str(source["path"]))
    )


@register.filter
def iso_date(value: str | datetime.date | None) -> str:
    """A stored ISO date as "14 Sep 2026" (citations keep dates as strings in JSON)."""
    if not value:
        return ""
    date = value if isinstance(value, datetime.date) else datetime.date.fromisoformat(value)
    return date.strftime("%-d %b %Y")
