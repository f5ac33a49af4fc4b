"""The admin "search lab": run one question through retrieval and see every leg's evidence.

``config.admin_site.GroundworkAdminSite`` (the default ``admin.site``) serves it at
``admin/search-lab/``, behind the admin's own login, staff check and ``never_cache``.
"""

from __future__ import annotations

from typing import Any

import structlog
from django.contrib import admin
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET

from kb.errors import one_line
from search.results import RetrievalUnavailable
from search.services import retrieve
from search.views import (
    SEARCH_DEFAULTS,
    SearchForm,
    retrieval_as_json,
    search_form_bind,
)

log = structlog.get_logger("groundwork.search")


@require_GET
def search_lab(request: HttpRequest) -> TemplateResponse:
    """GET only: a search is a read, and the lab's URL can be pasted into a bug report."""
    if "q" in request.GET:
        form = search_form_bind(request.GET, user=request.user)
    else:
        form = SearchForm(user=request.user, initial=SEARCH_DEFAULTS)
    retrieval: dict[str, Any] | None = None
    failure = ""
    if form.is_bound and form.is_valid():
        try:
            retrieval = retrieval_as_json(retrieve(**form.retrieve_arguments()), form=form)
        except RetrievalUnavailable as exc:
            failure = f"Retrieval unavailable: {exc}"
        except Exception as exc:  # the lab shows the reason; the log keeps the traceback
            log.exception("search_lab_failed", error=one_line(exc))
            failure = f"Search failed: {one_line(exc)}"
    context = {
        **admin.site.each_context(request),
        "title": "Search lab",
        "form": form,
        "retrieval": retrieval,
        "failure": failure,
    }
    return TemplateResponse(request, "search/search_lab.html", context)
