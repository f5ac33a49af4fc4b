"""The public document pages: ``/docs/`` and ``/docs/<path>``, where citations lead."""

from __future__ import annotations

from collections.abc import Mapping

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_cache_control
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_safe

from kb.models import Document
from kb.rendering import document_render
from kb.selectors import (
    document_for_reader,
    document_successor_for_reader,
    documents_by_category,
    reader_sees_internal,
)

# A table of contents earns its space only on a page with a few sections.
CONTENTS_MIN_HEADINGS = 3


@require_safe
def document_index(request: HttpRequest) -> HttpResponse:
    include_internal = reader_sees_internal(user=request.user)
    context = {"categories": documents_by_category(include_internal=include_internal)}
    response = render(request, "kb/document_index.html", context)
    if include_internal:
        patch_cache_control(response, private=True)
    return response


@require_safe
def document_detail(request: HttpRequest, path: str) -> HttpResponse:
    """One document, with the passage a citation points at highlighted.

    Drafts, and internal pages for anyone but staff, get the same 404 as a path that does not
    exist. ``?start=&end=`` are a chunk's offsets into the body; offsets that are not a valid
    range are ignored, because an old or hand-edited link should still open the page.
    """
    include_internal = reader_sees_internal(user=request.user)
    document = document_for_reader(path=path, include_internal=include_internal)
    if document is None:
        raise Http404("No document at this address.")
    rendered = document_render(
        body=document.body,
        cited_range=cited_range_from(request.GET, body_length=len(document.body)),
        title=document.title,
    )
    context = {
        "document": document,
        "body_html": mark_safe(rendered.html),  # sanitised by nh3 in document_render
        "cited": rendered.cited,
        "contents": [heading for heading in rendered.headings if heading.level == 2]
        if len(rendered.headings) >= CONTENTS_MIN_HEADINGS
        else [],
        "is_internal": document.audience == Document.Audience.INTERNAL,
        "is_retired": document.status == Document.Status.RETIRED,
        "successor": document_successor_for_reader(
            document=document, include_internal=include_internal
        ),
    }
    response = render(request, "kb/document_detail.html", context)
    if include_internal:
        patch_cache_control(response, private=True)
    return response


def cited_range_from(params: Mapping[str, str], *, body_length: int) -> tuple[int, int] | None:
    """``(start, end)`` from ``?start=&end=`` if both are integers with
    ``0 <= start < end <= body_length``, else None."""
    try:
        start, end = int(params["start"]), int(params["end"])
    except (KeyError, ValueError):
        return None
    if not 0 <= start < end <= body_length:
        return None
    return start, end
