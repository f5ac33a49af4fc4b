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

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseNotAllowed,
    HttpResponseRedirect,
)
from django.template.response import TemplateResponse

from assistant.attention import retire_impact
from assistant.attention_admin import policies_attention_response
from assistant.attention_retiring import (
    RETIRE_PARAMETERS,
    RetireAttempt,
    attention_url,
    retire_choice_read,
)
from kb.models import Document
from kb.services import (
    DocumentActionError,
    DocumentPermissionDenied,
    document_retire,
    document_retire_undo,
    may_retire,
)


def attention_retire_view(request: HttpRequest) -> HttpResponse:
    """GET: the confirmation of retiring the chosen page; POST: retire it, then back to the
    attention page with the success message and its Undo."""
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
