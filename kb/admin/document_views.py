"""The document admin's own pages beyond Django's: retire (or restore) one page, the editor's live
preview, the Markdown upload, and the comparison of a saved version with the one before it.

Each is a view function over the ``DocumentAdmin`` it is reached through (``get_urls`` binds
it), for that admin's permissions, messages and site context."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

from django.contrib import messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.utils.timezone import localtime

from kb.admin.document_forms import DocumentImportForm, RetireForm
from kb.chunking import ChunkingError
from kb.content_checks import reader_directed_lines, remote_references
from kb.embedders import EmbeddingError, active_embedder
from kb.models import Document
from kb.parsing import MAX_DOCUMENT_BYTES
from kb.rendering import markdown_to_html
from kb.selectors.paths import document_folders
from kb.selectors.versions import document_version_diff
from kb.services import (
    DocumentActionError,
    EmbeddingModelMismatch,
    chunk_limits_for,
    document_chunk,
    document_restore,
    document_retire,
    may_retire,
)
from kb.services.sync import documents_import
from kb.uploads import UploadRejected, UploadTargetRejected, upload_sources

if TYPE_CHECKING:
    from simple_history.admin import SimpleHistoryAdmin

    # The document admin these views are reached through (``DocumentAdmin.get_urls`` binds
    # them), named by its base class: this module needs nothing of the module importing it.
    DocumentAdmin: TypeAlias = SimpleHistoryAdmin


def document_retire_view(
    request: HttpRequest, *, model_admin: DocumentAdmin, object_id: str
) -> HttpResponse:
    """Retire one document, optionally naming its successor; or restore a retired one."""
    if not may_retire(actor=request.user):
        raise PermissionDenied
    document = model_admin.get_object(request, object_id)
    if document is None:
        return model_admin._get_obj_does_not_exist_redirect(request, model_admin.opts, object_id)
    change_url = reverse("admin:kb_document_change", args=[document.pk])
    form = RetireForm(request.POST or None, document=document)
    if request.method == "POST" and "restore" in request.POST:
        document_restore(document=document, actor=request.user)
        model_admin.message_user(request, f"Restored {document.path}: it is retrievable again.")
        return redirect(change_url)
    if request.method == "POST" and form.is_valid():
        successor = form.cleaned_data["successor"]
        try:
            document_retire(document=document, actor=request.user, successor=successor)
        except DocumentActionError as exc:
            form.add_error("successor", str(exc))
        else:
            model_admin.message_user(
                request,
                f"Retired {document.path}"
                + (f", superseded by {successor.path}" if successor else "")
                + ": it is no longer retrieved or quoted.",
            )
            return redirect(change_url)
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.opts,
        "title": f"Retire {document.path}",
        "document": document,
        "form": form,
        "change_url": change_url,
    }
    return TemplateResponse(request, "admin/kb/document/retire.html", context)


def document_preview_view(request: HttpRequest, *, model_admin: DocumentAdmin) -> HttpResponse:
    """The rendered page and the chunks it will produce, for the text being edited."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    if not (model_admin.has_add_permission(request) or model_admin.has_change_permission(request)):
        raise PermissionDenied
    title = request.POST.get("title", "").strip() or "Untitled"
    body = request.POST.get("body", "")
    if len(body.encode()) > MAX_DOCUMENT_BYTES:
        return HttpResponse(
            f"<p class='errornote'>The text is over {MAX_DOCUMENT_BYTES:,} bytes.</p>"
        )
    embedder = active_embedder()
    try:
        chunks = document_chunk(title=title, body=body, embedder=embedder).drafts
    except ChunkingError as exc:
        chunks, error = [], str(exc)
    else:
        error = ""
    context = {
        "flagged_lines": reader_directed_lines(body),
        "remote_references": remote_references(body),
        "html": mark_safe(markdown_to_html(body)),  # sanitised by nh3 in markdown_to_html
        "chunks": chunks,
        "error": error,
        "max_tokens": chunk_limits_for(embedder).max_tokens,
    }
    return TemplateResponse(request, "admin/kb/document/preview.html", context)


def document_import_view(request: HttpRequest, *, model_admin: DocumentAdmin) -> HttpResponse:
    """Upload a .md file or a .zip of them: the same parsing and skip rules as kb_sync;
    changed documents are saved and indexed in the background, errors listed per file."""
    if not model_admin.has_add_permission(request):
        raise PermissionDenied
    form = DocumentImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            report = documents_import(
                sources=upload_sources(
                    filename=upload.name,
                    data=upload.read(),
                    target=form.cleaned_data["target"],
                ),
                embedder=active_embedder(),
                origin=upload.name,
                actor=request.user,
                index_inline=False,
                all_or_nothing=True,
            )
        except UploadTargetRejected as exc:
            form.add_error("target", str(exc))
        except (UploadRejected, EmbeddingModelMismatch, EmbeddingError) as exc:
            form.add_error("file", str(exc))
        else:
            if not report.refused:
                messages.info(request, report.upload_summary())
                for warning in report.warnings:  # loaded, but the writer should know
                    messages.warning(request, warning)
                return redirect("admin:kb_document_changelist")
            form.add_error("file", report.summary())
            for failure in report.failed:
                form.add_error("file", failure.message)
    context = {
        **model_admin.admin_site.each_context(request),
        "title": "Import Markdown",
        "form": form,
        "folders": document_folders(),
        "opts": model_admin.model._meta,
    }
    return TemplateResponse(request, "admin/kb/document/import.html", context)


def document_history_diff_view(
    request: HttpRequest, *, model_admin: DocumentAdmin, object_id: str, history_id: int
) -> HttpResponse:
    """What one saved version of a document changed, against the version before it.

    Reached from the document's history page; reverting stays simple_history's own view."""
    try:
        document_id = int(unquote(object_id))
    except ValueError:
        raise Http404("No such document.") from None
    diff = document_version_diff(document_id=document_id, history_id=history_id)
    if diff is None:
        raise Http404("No such version of this document.")
    document = diff.version.instance
    if not model_admin.has_view_history_or_change_history_permission(request, document):
        raise PermissionDenied
    opts = Document._meta
    context = {
        **model_admin.admin_site.each_context(request),
        "title": f"Changes saved {localtime(diff.version.history_date):%Y-%m-%d %H:%M}",
        "subtitle": document.path,
        "opts": opts,
        "object": document,
        "diff": diff,
        "revert_url": reverse(
            "admin:kb_document_simple_history", args=[document_id, diff.version.history_id]
        ),
        "history_url": reverse("admin:kb_document_history", args=[document_id]),
        "previous_diff_url": _diff_url(document_id, diff.previous),
        "next_diff_url": _diff_url(document_id, diff.version.next_record),
    }
    return TemplateResponse(request, "admin/kb/document/history_diff.html", context)


def _diff_url(document_id: int, version: Any) -> str | None:
    if version is None:
        return None
    return reverse("admin:kb_document_history_diff", args=[document_id, version.history_id])
