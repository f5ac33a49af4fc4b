"""Retiring a page from the "Policies needing attention" page, in two steps and undoable.

A row's Retire button opens a confirmation page (``attention_retire_view``, a GET) that names
the page, its successor, and what would stop being answered from it: the recent customer
questions its answers cited and the test questions that expect it (``retire_impact``). Its
button retires through ``kb.services.document_retire``; the attention page then shows the
success message with an Undo button, which posts to ``attention_retire_undo_view``
(``kb.services.document_retire_undo``: the previous status and successor come back, recorded in
the history).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseNotAllowed,
    HttpResponseRedirect,
    QueryDict,
)
from django.template.response import TemplateResponse
from django.urls import reverse

from assistant.attention import retire_impact
from kb.models import Document
from kb.services import (
    DocumentActionError,
    DocumentPermissionDenied,
    document_retire,
    document_retire_undo,
    document_retirement_undoable,
    document_successor_check,
    may_retire,
)

# Parameters of the retire forms; every other one is the attention page's own (its sorting),
# carried through the confirmation so the steward comes back to the page as it was.
RETIRE_PARAMETERS = {"document", "successor", "csrfmiddlewaretoken", "retired"}


@dataclass(frozen=True)
class RetireAttempt:
    """What a steward typed in a row's form, kept to show it again with the error."""

    document_id: int
    successor: str
    error: str


@dataclass(frozen=True)
class RetireChoice:
    document: Document
    successor: Document | None


@dataclass(frozen=True)
class RetiredNotice:
    """The attention page's success message after a retirement, with its Undo button while
    the retirement can still be undone."""

    document: Document
    successor: Document | None
    history_id: int
    undoable: bool


def attention_url(query: QueryDict | dict[str, str] | None = None, **extra: str) -> str:
    """The attention page, keeping its own parameters from ``query`` (sorting), plus ``extra``."""
    kept = {
        key: value
        for key, value in (query.items() if query is not None else [])
        if key not in RETIRE_PARAMETERS
    }
    parameters = urlencode({**kept, **extra})
    return reverse("admin:attention") + (f"?{parameters}" if parameters else "")


def retire_choice_read(data: QueryDict) -> RetireChoice | RetireAttempt:
    """The page and successor (by path; blank for none) a retire form names, or what is wrong
    with them, for people."""
    typed = data.get("successor", "").strip()
    try:
        document_id = int(data.get("document", ""))
    except ValueError:
        return RetireAttempt(document_id=0, successor=typed, error="No page was chosen.")
    document = Document.objects.select_related("superseded_by").filter(pk=document_id).first()
    if document is None:
        return RetireAttempt(document_id, typed, "That page no longer exists.")
    if document.status == Document.Status.RETIRED:
        return RetireAttempt(document_id, typed, f"{document.path} is already retired.")
    successor = None
    if typed:
        successor = Document.objects.filter(path=typed).first()
        if successor is None:
            return RetireAttempt(document_id, typed, f"No page has the path {typed!r}.")
    try:
        document_successor_check(document=document, successor=successor)
    except DocumentActionError as exc:
        return RetireAttempt(document_id, typed, f"{document.path} was not retired: {exc}.")
    return RetireChoice(document=document, successor=successor)


def attention_retire_view(request: HttpRequest) -> HttpResponse:
    """GET: the confirmation of retiring the chosen page; POST: retire it, then back to the
    attention page with the success message and its Undo."""
    # Imported here: the attention page's module imports this one for its success message.
    from assistant.attention_admin import policies_attention_response

    if not may_retire(actor=request.user):
        raise PermissionDenied
    data = request.POST if request.method == "POST" else request.GET
    choice = retire_choice_read(data)
    if isinstance(choice, RetireAttempt):
        return policies_attention_response(request, attempt=choice, status=400)
    if request.method == "POST":
        try:
            document_retire(
                document=choice.document, actor=request.user, successor=choice.successor
            )
        except DocumentPermissionDenied as exc:
            raise PermissionDenied(str(exc)) from exc
        except DocumentActionError as exc:
            attempt = RetireAttempt(
                choice.document.pk,
                data.get("successor", ""),
                f"{choice.document.path} was not retired: {exc}.",
            )
            return policies_attention_response(request, attempt=attempt, status=400)
        record = choice.document.history.first()
        assert record is not None  # the retirement's own save
        return HttpResponseRedirect(attention_url(data, retired=str(record.history_id)))
    context = {
        **admin.site.each_context(request),
        "title": f"Retire {choice.document.path}?",
        "choice": choice,
        "impact": retire_impact(document=choice.document),
        "may_read_messages": request.user.has_perm("assistant.view_message"),
        "carried": [(k, v) for k, v in request.GET.dict().items() if k not in RETIRE_PARAMETERS],
        "cancel_url": attention_url(request.GET),
    }
    return TemplateResponse(request, "admin/kb/attention_retire_confirm.html", context)


def retired_notice(request: HttpRequest) -> RetiredNotice | None:
    """The notice for ``?retired=<history id>`` (the redirect after a retirement), if that
    record is a retirement."""
    try:
        history_id = int(request.GET.get("retired", ""))
    except ValueError:
        return None
    record = (
        Document.history.filter(history_id=history_id, status=Document.Status.RETIRED)
        .select_related("superseded_by")
        .first()
    )
    document = Document.objects.filter(pk=record.id).first() if record is not None else None
    if record is None or document is None:
        return None
    return RetiredNotice(
        document=document,
        successor=Document.objects.filter(pk=record.superseded_by_id).first(),
        history_id=history_id,
        undoable=document_retirement_undoable(document=document, history_id=history_id),
    )


def attention_retire_undo_view(request: HttpRequest) -> HttpResponse:
    """Undo a retirement made from the attention page (a POST from its success message)."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    if not may_retire(actor=request.user):
        raise PermissionDenied
    try:
        document_id, history_id = int(request.POST["document"]), int(request.POST["retired"])
    except (KeyError, ValueError):
        messages.error(request, "Nothing to undo: the form named no retirement.")
        return HttpResponseRedirect(attention_url(request.POST))
    document = Document.objects.filter(pk=document_id).first()
    if document is None:
        messages.error(request, "Nothing to undo: that page no longer exists.")
        return HttpResponseRedirect(attention_url(request.POST))
    try:
        document = document_retire_undo(
            document=document, actor=request.user, history_id=history_id
        )
    except DocumentPermissionDenied as exc:
        raise PermissionDenied(str(exc)) from exc
    except DocumentActionError as exc:
        messages.error(request, f"Not undone: {exc}.")
        return HttpResponseRedirect(attention_url(request.POST))
    messages.success(
        request,
        f"Undone: {document.path} is {document.get_status_display().lower()} again, as before "
        "it was retired"
        + (", and answers can quote it again." if document.status == "published" else "."),
    )
    return HttpResponseRedirect(attention_url(request.POST))
