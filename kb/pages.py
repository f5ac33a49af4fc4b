"""A document's page body as readers get it: rendered once per content and index version.

Rendering is linear in the body but not free (30,000 headings take ~8 s), and a page is read far
more often than it changes, so the rendered result is cached under a key made of everything it
depends on: the document's text (``content_hash``), its path, the citation marks asked for, and
``document_paths_version`` (links resolve against which documents exist). An edit, a new or
deleted page or a move changes the key, so no one reads a stale page; a cache outage costs the
saving, never the page.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import structlog
from django.core.cache import cache

from kb.models import Document
from kb.rendering import RenderedDocument, document_render
from kb.selectors.paths import document_paths_present, document_paths_version

log = structlog.get_logger("groundwork.kb")

# Bump when the renderer's output changes, so a deploy never serves pages rendered by the old one.
RENDER_FORMAT = 1
PAGE_CACHE_SECONDS = 24 * 3600


def document_page_render(
    *,
    document: Document,
    cited_range: tuple[int, int] | None = None,
    quoted: Sequence[tuple[int, int]] = (),
) -> RenderedDocument:
    """``document_render`` of the page with links resolved, from the cache when it can be."""
    key = _cache_key(document=document, cited_range=cited_range, quoted=quoted)
    try:
        cached = cache.get(key)
    except Exception as exc:
        log.warning("page_cache_unavailable", operation="get", error=str(exc)[:200])
        cached = None
    if isinstance(cached, RenderedDocument):
        return cached
    rendered = document_render(
        body=document.body,
        cited_range=cited_range,
        quoted=quoted,
        title=document.title,
        path=document.path,
        existing=document_paths_present,
    )
    try:
        cache.set(key, rendered, timeout=PAGE_CACHE_SECONDS)
    except Exception as exc:
        log.warning("page_cache_unavailable", operation="set", error=str(exc)[:200])
    return rendered


def _cache_key(
    *,
    document: Document,
    cited_range: tuple[int, int] | None,
    quoted: Sequence[tuple[int, int]],
) -> str:
    marks = f"{cited_range}|{sorted(quoted)}"
    parts = [document.content_hash, document.path, marks, document_paths_version()]
    digest = hashlib.sha256("\x00".join(parts).encode()).hexdigest()
    return f"kb:page:{RENDER_FORMAT}:{digest}"
