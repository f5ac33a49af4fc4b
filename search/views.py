"""The debug search endpoint: everything retrieval knows about one question, as JSON, for staff.

It shows internal rankings and, with permission, internal documents, so anyone who is not staff
gets the same 404 as a URL that does not exist. The admin "search lab" (``search.admin``) reuses
the form and the serializer here, so the page and the JSON always show the same evidence.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

import structlog
from django import forms
from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, QueryDict
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from kb.errors import one_line
from kb.models import Document
from kb.selectors import PUBLIC_AUDIENCES, audiences_for
from search.hybrid import CANDIDATES
from search.results import LEGS, Hit, RetrievalResult, RetrievalUnavailable
from search.services import retrieve

log = structlog.get_logger("groundwork.search")

# retrieve() fuses CANDIDATES candidates: a larger limit could not return more hits.
MAX_LIMIT = CANDIDATES
PREVIEW_CHARS = 300

# What an absent query parameter means; the same as what the assistant asks for.
SEARCH_DEFAULTS = {"audience": "public", "legs": ",".join(LEGS), "rerank": "1", "limit": "5"}

User = AbstractBaseUser | AnonymousUser
View = Callable[..., HttpResponse]


def staff_or_404(view: View) -> View:
    """Answer anyone but active staff with a plain 404: the endpoint's existence stays private."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        user = request.user
        if not (user.is_active and user.is_staff):
            raise Http404
        return view(request, *args, **kwargs)

    return wrapper


class LegsWidget(forms.CheckboxSelectMultiple):
    """Checkboxes in the search lab, ``legs=vector,keyword`` in the JSON endpoint's query."""

    def value_from_datadict(self, data: Mapping[str, Any], files: Any, name: str) -> list[str]:
        values = data.getlist(name) if isinstance(data, QueryDict) else [data.get(name) or ""]
        return [leg.strip() for value in values for leg in value.split(",") if leg.strip()]

    # ChoiceWidget's format_value returns a list, unlike Widget's; django-stubs ignores it too.
    def format_value(self, value: Any) -> list[str]:  # type: ignore[override]
        if isinstance(value, str):
            value = value.split(",")
        return super().format_value(value)


class SearchForm(forms.Form):
    """The search parameters, validated the same way for the JSON endpoint and the search lab."""

    q = forms.CharField(
        label="Question",
        # The chat's limit: the lab judges a question as a customer's would be judged.
        max_length=settings.QUESTION_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 80}),
        error_messages={
            "required": "q is required: pass the question to search for.",
            "max_length": (
                "The question is too long: %(show_value)d characters, "
                "at most %(limit_value)d are allowed."
            ),
        },
    )
    audience = forms.ChoiceField(
        choices=[("public", "Public"), ("internal", "Internal (public and internal documents)")],
        error_messages={"invalid_choice": "audience must be public or internal."},
    )
    legs = forms.MultipleChoiceField(
        choices=[(leg, leg) for leg in LEGS],
        widget=LegsWidget,
        error_messages={
            "required": f"Choose at least one leg: {', '.join(LEGS)}.",
            "invalid_choice": f"Unknown leg %(value)s: the legs are {', '.join(LEGS)}.",
        },
    )
    rerank = forms.TypedChoiceField(
        label="Rerank",
        choices=[("1", "On"), ("0", "Off")],
        coerce=lambda value: value == "1",
        widget=forms.RadioSelect,
        error_messages={"invalid_choice": "rerank must be 0 or 1."},
    )
    limit = forms.IntegerField(
        label="Hits",
        min_value=1,
        max_value=MAX_LIMIT,
        error_messages={
            "invalid": f"limit must be a whole number from 1 to {MAX_LIMIT}.",
            "min_value": f"limit must be a whole number from 1 to {MAX_LIMIT}.",
            "max_value": f"limit must be a whole number from 1 to {MAX_LIMIT}.",
        },
    )

    def __init__(self, *args: Any, user: User, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user = user

    def clean_audience(self) -> str:
        audience = self.cleaned_data["audience"]
        if audience == "internal" and Document.Audience.INTERNAL not in audiences_for(self.user):
            raise forms.ValidationError(
                "Searching internal documents needs the kb.view_document permission.",
                code="permission_denied",
            )
        return audience

    def retrieve_arguments(self) -> dict[str, Any]:
        """Keyword arguments for ``retrieve``; only call after ``is_valid()``."""
        data = self.cleaned_data
        return {
            "question": data["q"],
            # "internal" searches what this user may read; "public" what a customer may.
            "audiences": (
                audiences_for(self.user) if data["audience"] == "internal" else PUBLIC_AUDIENCES
            ),
            "limit": data["limit"],
            "legs": tuple(data["legs"]),
            "rerank": data["rerank"],
        }


def search_form_bind(query: QueryDict, *, user: User) -> SearchForm:
    """A bound form where every absent parameter takes its default (``q`` has none)."""
    data = query.copy()
    for name, value in SEARCH_DEFAULTS.items():
        if name not in data:
            data[name] = value
    return SearchForm(data, user=user)


def hit_preview(text: str) -> str:
    if len(text) <= PREVIEW_CHARS:
        return text
    return text[:PREVIEW_CHARS].rstrip() + "…"


def hit_as_json(hit: Hit, *, rank: int) -> dict[str, Any]:
    return {
        "rank": rank,
        **hit.evidence(),
        "title": hit.title,
        "section": hit.heading_path,
        "preview": hit_preview(hit.text),
    }


def retrieval_as_json(result: RetrievalResult, *, form: SearchForm) -> dict[str, Any]:
    """The result with the parameters that produced it, so a pasted response is reproducible."""
    data = form.cleaned_data
    return {
        "question": result.question,
        "audience": data["audience"],
        "legs": list(data["legs"]),
        "rerank": data["rerank"],
        "limit": data["limit"],
        **result.evidence(),
        "timings_ms": result.timings_ms,
        "keyword_coverage": result.keyword_coverage,
        "hits": [hit_as_json(hit, rank=rank) for rank, hit in enumerate(result.hits, start=1)],
    }


@staff_or_404
@never_cache
@require_GET
def debug_search(request: HttpRequest) -> JsonResponse:
    form = search_form_bind(request.GET, user=request.user)
    if not form.is_valid():
        fields = {
            name: [error["message"] for error in errors]
            for name, errors in form.errors.get_json_data().items()
        }
        first = next(iter(fields.values()))[0]
        status = 403 if form.has_error("audience", code="permission_denied") else 400
        return JsonResponse({"error": first, "fields": fields}, status=status)
    try:
        result = retrieve(**form.retrieve_arguments())
    except RetrievalUnavailable as exc:
        return JsonResponse({"error": "retrieval unavailable", "reason": str(exc)}, status=503)
    except Exception as exc:  # a JSON client gets JSON, never an HTML traceback; the log has it
        log.exception("debug_search_failed", error=one_line(exc))
        return JsonResponse({"error": "search failed", "reason": one_line(exc)}, status=500)
    return JsonResponse(retrieval_as_json(result, form=form))
