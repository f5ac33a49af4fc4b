"""The public document pages, ``/docs/`` and ``/docs/<path>`` where citations lead."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, HttpResponsePermanentRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.cache import patch_cache_control
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_safe

from kb.models import Document
from kb.pages import document_page_render
from kb.runtime.db_router import replica_reads
from kb.selectors.access import (
    audiences_for,
    document_for_alias,
    document_for_reader,
    document_successor_for_reader,
    reader_is_staff,
)
from kb.selectors.categories import document_category_label, documents_by_category

# A table of contents earns its space only on a page with a few sections.
CONTENTS_MIN_HEADINGS = 3


def _pages_from_replica(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Read the page from the read replica, if there is one (``kb.runtime.db_router``), and the
    reader (session, user) from the primary first: a sign-in just made may not be there yet."""

    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        request.user.is_authenticated  # noqa: B018 (resolves the lazy user on the primary)
        with replica_reads():
            return view(request, *args, **kwargs)

    return wrapped


@require_safe
@_pages_from_replica
def document_index(request: HttpRequest) -> HttpResponse:
    audiences = audiences_for(request.user)
    context = {"categories": documents_by_category(audiences=audiences)}
    response = render(request, "kb/document_index.html", context)
    if Document.Audience.INTERNAL in audiences:
        patch_cache_control(response, private=True)
    return response


@require_safe
@_pages_from_replica
def document_detail(request: HttpRequest, path: str) -> HttpResponse:
    """One document, with the passage a citation points at highlighted.

    Drafts, and internal pages for anyone but staff, get the same 404 as a path that does not
    exist. A retired page is a 410 for customers: the notice and its successor, never the text
    that no longer applies; staff still read it under the notice. ``?start=&end=`` are a chunk's
    offsets into the body and ``?quote=`` the sentences the answer drew on (``start-end``
    pairs); offsets that are not a valid range are ignored, because an old or hand-edited link
    should still open the page.
    """
    audiences = audiences_for(request.user)
    staff = reader_is_staff(request.user)
    document = document_for_reader(path=path, audiences=audiences)
    if document is None:
        moved = document_for_alias(path=path, audiences=audiences)
        if moved is not None:  # the page's earlier address (its front matter's `aliases`)
            redirect = HttpResponsePermanentRedirect(reverse("kb:document", args=[moved.path]))
            if staff:
                patch_cache_control(redirect, private=True)
            return redirect
        raise Http404("No document at this address.")
    successor = document_successor_for_reader(document=document, audiences=audiences)
    if document.status == Document.Status.RETIRED and not staff:
        context: dict[str, object] = {
            "document": document,
            "category_label": document_category_label(document),
            "successor": successor,
        }
        return render(request, "kb/document_retired.html", context, status=410)
    rendered = document_page_render(
        document=document,
        cited_range=cited_range_from(request.GET, body_length=len(document.body)),
        quoted=quoted_spans_from(request.GET),
    )
    context = {
        "document": document,
        "category_label": document_category_label(document),
        "body_html": mark_safe(rendered.html),  # sanitised by nh3 in document_render
        "cited": rendered.cited,
        "quoted": rendered.quoted,
        "quoted_section": rendered.quoted_section,
        "contents": [heading for heading in rendered.headings if heading.level == 2]
        if len(rendered.headings) >= CONTENTS_MIN_HEADINGS
        else [],
        "is_internal": document.audience == Document.Audience.INTERNAL,
        "is_retired": document.status == Document.Status.RETIRED,
        "successor": successor,
    }
    response = render(request, "kb/document_detail.html", context)
    if staff:
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


def quoted_spans_from(params: Mapping[str, str]) -> list[tuple[int, int]]:
    """``[(start, end), ...]`` from ``?quote=12-80,95-140``; pairs that are not two integers
    are skipped (the renderer drops those outside the body)."""
    spans = []
    for pair in params.get("quote", "").split(","):
        start, dash, end = pair.partition("-")
        if dash and start.isdigit() and end.isdigit():
            spans.append((int(start), int(end)))
    return spans
