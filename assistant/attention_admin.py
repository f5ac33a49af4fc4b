"""The stewards' "Policies needing attention" admin page: six lists of pages to look at, each
with its count, sortable by its columns, every row linking to the page and carrying a small
form that retires it in favour of a successor through ``kb.services.document_retire`` (the
same service as the admin's own retire page, so history, audit and retrieval follow).

It lives in ``assistant`` because two of its lists read the chat's records; the others come
from ``kb.attention``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse

from assistant.attention import thumbed_down_pages, uncited_pages
from kb.attention.contradictions import probable_contradictions
from kb.attention.documents import index_failures, reviews_due
from kb.models import Document
from kb.services import DocumentActionError, DocumentPermissionDenied, document_retire, may_retire
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
        query = {**request.GET.dict(), parameter: flip}
        attention.headers.append(
            HeaderCell(
                label=each.label,
                url=f"?{urlencode(query)}#{attention.key}",
                sorted=("descending" if descending else "ascending") if current else "",
            )
        )


def _successor_choices() -> list[tuple[str, str]]:
    return list(Document.objects.current().order_by("path").values_list("path", "title"))


@dataclass(frozen=True)
class RetireAttempt:
    """What a steward typed in a row's form, kept to show it again with the error."""

    document_id: int
    successor: str
    error: str


def _retire(request: HttpRequest) -> RetireAttempt | None:
    """Retire the posted page with the named successor (by path; blank for none). Returns the
    attempt when it was refused, so the page can show the error next to what was typed."""
    typed = request.POST.get("successor", "").strip()
    try:
        document_id = int(request.POST.get("document", ""))
    except ValueError:
        return RetireAttempt(document_id=0, successor=typed, error="No page was chosen.")
    document = Document.objects.filter(pk=document_id).first()
    if document is None:
        return RetireAttempt(document_id, typed, "That page no longer exists.")
    successor = None
    if typed:
        successor = Document.objects.filter(path=typed).first()
        if successor is None:
            return RetireAttempt(document_id, typed, f"No page has the path {typed!r}.")
    try:
        document_retire(document=document, actor=request.user, successor=successor)
    except DocumentPermissionDenied as exc:
        raise PermissionDenied(str(exc)) from exc
    except DocumentActionError as exc:
        return RetireAttempt(document_id, typed, f"{document.path} was not retired: {exc}.")
    messages.success(
        request,
        f"Retired {document.path}"
        + (f", superseded by {successor.path}" if successor else "")
        + ": it is no longer retrieved or quoted.",
    )
    return None


def policies_attention_view(request: HttpRequest) -> HttpResponse:
    if not may_retire(actor=request.user):
        raise PermissionDenied
    attempt = None
    if request.method == "POST":
        attempt = _retire(request)
        if attempt is None:
            return HttpResponseRedirect(request.get_full_path())
    lists = _lists()
    for attention in lists:
        _sort(attention, request)
    context = {
        **admin.site.each_context(request),
        "title": "Policies needing attention",
        "lists": {attention.key: attention for attention in lists},
        "successors": _successor_choices(),
        "attempt": attempt,
        "may_read_messages": request.user.has_perm("assistant.view_message"),
    }
    return TemplateResponse(
        request, "admin/kb/attention.html", context, status=400 if attempt else 200
    )
