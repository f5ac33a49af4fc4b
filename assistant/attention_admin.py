"""The stewards' "Policies needing attention" admin page: six lists of pages to look at, each
with its count, sortable by its columns, every row linking to the page and carrying a small
form that asks to retire it in favour of a successor: the confirmation, the retirement through
``kb.services.document_retire`` and its undo are ``attention_retire_admin``'s (what both read
is ``attention_retiring``'s).

It lives in ``assistant`` because two of its lists read the chat's records; the others come
from ``kb.attention``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse

from assistant.attention import thumbed_down_pages, uncited_pages
from assistant.attention_retiring import RETIRE_PARAMETERS, RetireAttempt, retired_notice
from kb.attention.contradictions import probable_contradictions
from kb.attention.documents import index_failures, reviews_due
from kb.models import Document
from kb.services import may_retire
from kb.test_questions.selectors import flagged_results


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    sort_key: Callable[[Any], Any] | None = None  # None: not sortable


@dataclass
class HeaderCell:
    label: str
    url: str = ""  # empty: not sortable
    sorted: str = ""  # "ascending" / "descending" when the list is sorted by it


@dataclass
class AttentionList:
    key: str
    title: str
    description: str
    columns: Sequence[Column]
    default_sort: str  # a column key, "-" first for descending
    rows: list[Any] = field(default_factory=list)
    headers: list[HeaderCell] = field(default_factory=list)


def _last(value: Any) -> tuple[bool, Any]:
    """Sort key that puts missing values after every present one."""
    return (value is None, value)


def _lists() -> list[AttentionList]:
    """The page's six lists, in the order it shows them."""
    return [
        _review_list(),
        _thumbs_list(),
        _test_questions_list(),
        _contradictions_list(),
        _uncited_list(),
        _failed_list(),
    ]


def _document_path(row: Any) -> str:
    return row.document.path


def _review_list() -> AttentionList:
    return AttentionList(
        key="review",
        title="Review date passed or due within 30 days",
        description="Pages whose review-by date has passed or comes within a month.",
        columns=[
            Column("path", "Page", _document_path),
            Column("review_by", "Review by", lambda row: row.review_by),
            Column("status", "Status", lambda row: row.document.status),
            Column("retire", "Retire"),
        ],
        default_sort="review_by",
        rows=reviews_due(),
    )


def _thumbs_list() -> AttentionList:
    return AttentionList(
        key="thumbs",
        title="Cited by thumbed-down answers",
        description="Pages that answers with a thumbs down cited: the latest such "
        "question and its comment.",
        columns=[
            Column("path", "Page", _document_path),
            Column("answers", "Answers", lambda row: row.answers),
            Column("last_at", "Last thumbs down", lambda row: row.last_at),
            Column("question", "Last question and comment"),
            Column("retire", "Retire"),
        ],
        default_sort="-answers",
        rows=thumbed_down_pages(),
    )


def _test_questions_list() -> AttentionList:
    return AttentionList(
        key="tests",
        title="Test questions an edit broke",
        description="Test questions whose answer, after the page's last indexing, no longer "
        "states their facts, cites another page or is refused: the answer before and after.",
        columns=[
            Column("path", "Page", lambda row: row.test_question.document.path),
            Column("flagged_at", "Flagged", lambda row: row.latest.created_at),
            Column("question", "Question, before and after"),
            Column("retire", "Retire"),
        ],
        default_sort="-flagged_at",
        rows=flagged_results(),
    )


def _contradictions_list() -> AttentionList:
    return AttentionList(
        key="contradictions",
        title="Probable contradictions",
        description="Passages of two published pages about the same thing that state "
        "different numbers, durations or amounts (marked). The older page is on the left.",
        columns=[
            Column("similarity", "Similarity", lambda row: row.similarity),
            Column("first", "Older page", lambda row: row.first.path),
            Column("second", "Newer page", lambda row: row.second.path),
            Column("retire", "Retire the older page"),
        ],
        default_sort="-similarity",
        rows=probable_contradictions(),
    )


def _uncited_list() -> AttentionList:
    return AttentionList(
        key="uncited",
        title="Not cited by any answer in the last 90 days",
        description="Published pages no answer cited in 90 days: not needed, or not found.",
        columns=[
            Column("path", "Page", _document_path),
            Column("last_cited", "Last cited", lambda row: _last(row.last_cited)),
            Column("updated_on", "Updated on", lambda row: _last(row.document.updated_on)),
            Column("retire", "Retire"),
        ],
        default_sort="last_cited",
        rows=uncited_pages(),
    )


def _failed_list() -> AttentionList:
    return AttentionList(
        key="failed",
        title="Indexing failed",
        description="Pages whose chunks could not be built: customers get their older "
        "text, or none of it.",
        columns=[
            Column("path", "Page", _document_path),
            Column("model", "Embedding model", lambda row: row.embedding_model),
            Column("failed_at", "Failed at", lambda row: row.failed_at),
            Column("error", "Error"),
            Column("retire", "Retire"),
        ],
        default_sort="-failed_at",
        rows=index_failures(),
    )


def _sort(attention: AttentionList, request: HttpRequest) -> None:
    """Sort the rows by ``?<list>_sort=<column>`` (``-`` first for descending) and build the
    header links, each keeping the other lists' sort."""
    sortable = {column.key: column for column in attention.columns if column.sort_key}
    parameter = f"{attention.key}_sort"
    wanted = request.GET.get(parameter, attention.default_sort)
    if wanted.removeprefix("-") not in sortable:
        wanted = attention.default_sort
    descending = wanted.startswith("-")
    column = sortable[wanted.removeprefix("-")]
    assert column.sort_key is not None
    attention.rows.sort(key=column.sort_key, reverse=descending)
    for each in attention.columns:
        if each.sort_key is None:
            attention.headers.append(HeaderCell(label=each.label))
            continue
        current = each.key == column.key
        flip = f"{'' if current and descending else '-'}{each.key}" if current else each.key
        query = {**_page_parameters(request), parameter: flip}
        attention.headers.append(
            HeaderCell(
                label=each.label,
                url=f"{reverse('admin:attention')}?{urlencode(query)}#{attention.key}",
                sorted=("descending" if descending else "ascending") if current else "",
            )
        )


def _page_parameters(request: HttpRequest) -> dict[str, str]:
    """The page's own parameters (its sorting), without a retire form's: the page is also shown
    at the confirmation's address, with the error of a refused choice."""
    return {key: value for key, value in request.GET.dict().items() if key not in RETIRE_PARAMETERS}


def _successor_choices() -> list[tuple[str, str]]:
    return list(Document.objects.current().order_by("path").values_list("path", "title"))


def policies_attention_view(request: HttpRequest) -> HttpResponse:
    if not may_retire(actor=request.user):
        raise PermissionDenied
    return policies_attention_response(request)


def policies_attention_response(
    request: HttpRequest, *, attempt: RetireAttempt | None = None, status: int = 200
) -> HttpResponse:
    """The page, with a refused retirement's error next to what was typed (``attempt``) or,
    after ``?retired=``, the retirement's success message and its Undo."""
    lists = _lists()
    for attention in lists:
        _sort(attention, request)
    context = {
        **admin.site.each_context(request),
        "title": "Policies needing attention",
        "lists": {attention.key: attention for attention in lists},
        "successors": _successor_choices(),
        "attempt": attempt,
        "retired": retired_notice(request),
        "carried": list(_page_parameters(request).items()),
        "undo_url": reverse("admin:attention-retire-undo"),
        "may_read_messages": request.user.has_perm("assistant.view_message"),
    }
    return TemplateResponse(request, "admin/kb/attention.html", context, status=status)
