from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.widgets import AutocompleteSelect
from django.core.exceptions import PermissionDenied
from django.db.models import Count, OuterRef, QuerySet, Subquery
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, QueryDict
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from simple_history.admin import SimpleHistoryAdmin
from simple_history.models import ModelChange
from simple_history.template_utils import HistoricalRecordContextHelper

from kb.actors import Actor
from kb.chunking import ChunkingError
from kb.content_checks import reader_directed_lines, remote_references
from kb.embedders import EmbeddingError, active_embedder, embedder_for
from kb.models import Category, Chunk, Document, DocumentIndexState, EmbeddingModel
from kb.parsing import MAX_DOCUMENT_BYTES, normalise_newlines
from kb.rendering import markdown_to_html
from kb.selectors.paths import document_folders
from kb.selectors.versions import EditConflict, document_edit_conflict, document_field_shown
from kb.services import (
    DocumentActionError,
    DocumentEditConflict,
    DocumentPermissionDenied,
    EmbeddingModelError,
    EmbeddingModelMismatch,
    chunk_limits_for,
    document_chunk,
    document_delete,
    document_edit_check,
    document_lifecycle_check,
    document_restore,
    document_retire,
    document_save,
    embedding_model_activate,
    embedding_model_add,
    embedding_model_coverage,
    embedding_model_drop,
    may_retire,
)
from kb.services.sync import documents_import
from kb.uploads import UploadRejected, UploadTargetRejected, upload_sources
from kb.views import document_history_diff


class DocumentImportForm(forms.Form):
    file = forms.FileField(
        help_text="A Markdown file (.md) or a .zip of them; paths inside the zip become "
        "document paths. Unchanged files are skipped; nothing is ever deleted by an import."
    )
    target = forms.CharField(
        label="Folder or path",
        required=False,
        max_length=500,
        help_text="Where it goes: a folder such as policies/ (/ for the top level), or for one "
        "file its whole path, such as policies/parking.md. Needed for a single file; a zip "
        "keeps its own folders, under this folder if you give one.",
        widget=forms.TextInput(attrs={"list": "kb-import-folders", "placeholder": "policies/"}),
    )


class NeedsReviewFilter(admin.SimpleListFilter):
    title = "review"
    parameter_name = "review"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return [("due", "Needs review (past review-by date)")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Document]) -> QuerySet[Document]:
        if self.value() == "due":
            return queryset.filter(review_by__lt=timezone.localdate()).exclude(status="retired")
        return queryset


class IndexFailedFilter(admin.SimpleListFilter):
    title = "index"
    parameter_name = "index"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return [(status, label) for status, label in DocumentIndexState.Status.choices]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Document]) -> QuerySet[Document]:
        if self.value():
            return queryset.filter(index_states__status=self.value()).distinct()
        return queryset


class DocumentIndexStateInline(admin.TabularInline):
    model = DocumentIndexState
    extra = 0
    can_delete = False
    fields = ("embedding_model", "status", "chunk_count", "attempts", "indexed_at", "error")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


class RetireForm(forms.Form):
    successor = forms.ModelChoiceField(
        queryset=Document.objects.none(),
        required=False,
        empty_label="(none: retire without a successor)",
        help_text="The current page that replaces this one; its old links will point there.",
    )

    def __init__(self, *args: Any, document: Document, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        successor = self.fields["successor"]
        assert isinstance(successor, forms.ModelChoiceField)
        successor.queryset = Document.objects.current().exclude(pk=document.pk)
        successor.widget = AutocompleteSelect(
            Document._meta.get_field("superseded_by"), admin.site, choices=successor.choices
        )


class DocumentForm(forms.ModelForm):
    """The body exactly as written: a browser sends CRLF and Django strips edge whitespace by
    default, either of which would change the content hash and re-embed an untouched page.

    ``actor`` (set by ``DocumentAdmin.get_form``) is who submits it: a change to whether the page
    is current is checked by the same rule the save service applies, so it shows as a form error.

    ``base_row_hash`` is the stored page's ``row_hash()`` when the form was opened: a save made
    by someone else since is a conflict (``edit_conflict`` then holds both versions), never a
    silent overwrite. The conflict moves the hash to the saved version, so saving again after
    comparing them is a decision the editor makes knowing what the other save changed.
    """

    actor: Actor | None = None
    edit_conflict: EditConflict | None = None

    base_row_hash = forms.CharField(widget=forms.HiddenInput, required=False)

    body = forms.CharField(
        strip=False,
        widget=forms.Textarea(attrs={"rows": 32, "class": "kb-editor-body", "spellcheck": "true"}),
        help_text="Markdown. The rendered page and the chunks it makes follow as you type.",
    )

    class Meta:
        model = Document
        fields = [
            "path",
            "title",
            "category",
            "audience",
            "status",
            "superseded_by",
            "updated_on",
            "review_by",
            "body",
        ]

    def __init__(self, *args: Any, instance: Document | None = None, **kwargs: Any) -> None:
        if instance is not None and self.actor is not None and not may_retire(actor=self.actor):
            _keep_stored_lifecycle(instance)
        kwargs["instance"] = instance
        super().__init__(*args, **kwargs)
        if instance is not None and instance.pk is not None:
            # The stored row, not ``instance``: in a history revert that is the old version.
            stored = Document.objects.filter(pk=instance.pk).defer("body", "metadata").first()
            self.fields["base_row_hash"].initial = stored.row_hash() if stored else ""

    def clean_body(self) -> str:
        return normalise_newlines(self.cleaned_data["body"])

    def clean(self) -> dict[str, Any]:
        super().clean()  # a ModelForm's returns its cleaned_data
        cleaned = self.cleaned_data
        if self.actor is None:
            return cleaned
        successor = (
            cleaned.get("superseded_by")
            if "superseded_by" in self.fields
            else self.instance.superseded_by
        )
        try:
            document_lifecycle_check(
                actor=self.actor,
                document=self.instance,
                status=cleaned.get("status", self.instance.status),
                successor_path=successor.path if successor is not None else None,
            )
        except DocumentPermissionDenied as exc:
            raise forms.ValidationError(str(exc), code="permission_denied") from exc
        try:
            document_edit_check(
                document=self.instance, expected_row_hash=cleaned.get("base_row_hash")
            )
        except DocumentEditConflict as exc:
            self.edit_conflict = document_edit_conflict(saved=exc.current, edited=cleaned)
            data = QueryDict(mutable=True)  # a request's own is immutable
            data.update(self.data)
            data[self.add_prefix("base_row_hash")] = exc.current.row_hash()
            self.data = data
            raise forms.ValidationError(str(exc), code="edit_conflict") from exc
        return cleaned


def _stored_status(document: Document | None) -> str | None:
    if document is None or document.pk is None:
        return None
    return Document.objects.filter(pk=document.pk).values_list("status", flat=True).first()


def _keep_stored_lifecycle(instance: Document) -> None:
    """For a doc writer reverting to an old version: the old text, but the page stays as current
    (or as retired, with the same successor) as it is now, since they may not change that."""
    stored = (
        Document.objects.filter(pk=instance.pk).values_list("status", "superseded_by_id").first()
    )
    if stored is None:
        return
    status, superseded_by_id = stored
    retired = Document.Status.RETIRED
    if (status == retired) != (instance.status == retired):
        instance.status = status
    instance.superseded_by_id = superseded_by_id


class DocumentHistoryContextHelper(HistoricalRecordContextHelper):
    """The history list's "field: old → new" in the words of the version comparison page: a
    successor by its path (simple_history's own says "Deleted document (pk=None)" for "none")."""

    def prepare_delta_change_value(self, change: ModelChange, value: Any) -> str:
        return document_field_shown(change.field, value)


# Rows that exist only as a function of a document and go when it goes.
DERIVED_FROM_DOCUMENT = (Chunk, DocumentIndexState)


@admin.register(Document)
class DocumentAdmin(SimpleHistoryAdmin):
    form = DocumentForm
    list_display = (
        "path",
        "title",
        "status",
        "audience",
        "category",
        "updated_on",
        "review_by",
        "index_status",
        "reader_warnings",
    )
    list_filter = ("status", "audience", "category", NeedsReviewFilter, IndexFailedFilter)
    fieldsets = (
        (
            None,
            {
                "fields": (
                    "base_row_hash",
                    ("path", "title"),
                    ("category", "audience", "status"),
                    "superseded_by",
                    ("updated_on", "review_by"),
                )
            },
        ),
        # Its own fieldset so the editor can take the page's full width (document_preview.css).
        ("Text", {"classes": ("kb-editor",), "fields": ("body",)}),
        (
            "Checks and record",
            {
                "fields": (
                    "flagged_lines",
                    "front_matter_metadata",
                    "content_hash",
                    "created_at",
                    "modified_at",
                )
            },
        ),
    )
    actions = ("retire_documents", "restore_documents")
    search_fields = ("title", "path", "body")
    readonly_fields = (
        "flagged_lines",
        "content_hash",
        "created_at",
        "modified_at",
        "front_matter_metadata",
    )
    autocomplete_fields = ("superseded_by",)
    inlines = (DocumentIndexStateInline,)
    object_history_list_template = "admin/kb/document/object_history_list.html"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Document]:
        return super().get_queryset(request).prefetch_related("index_states")

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[Document], search_term: str
    ) -> tuple[QuerySet[Document], bool]:
        """The successor chooser (an autocomplete) offers only pages that may be successors."""
        queryset, may_have_duplicates = super().get_search_results(request, queryset, search_term)
        if request.GET.get("field_name") == "superseded_by" and "/autocomplete/" in request.path:
            queryset = queryset & Document.objects.current()
        return queryset, may_have_duplicates

    def set_history_delta_changes(
        self, request: HttpRequest, historical_records: Any, foreign_keys_are_objs: bool = False
    ) -> None:
        # Stored ids, not objects: DocumentHistoryContextHelper names the page an id points at.
        super().set_history_delta_changes(request, historical_records, foreign_keys_are_objs=False)

    def get_historical_record_context_helper(
        self, request: HttpRequest, historical_record: Any
    ) -> HistoricalRecordContextHelper:
        return DocumentHistoryContextHelper(self.model, historical_record)

    @admin.display(description="Front matter kept")
    def front_matter_metadata(self, obj: Document) -> str:
        """What the source file's tool said that has no field here: a folder sync sets it, so
        it is shown, not edited (an edit would be undone by the next sync of the file)."""
        if not obj.metadata:
            return "—"
        return format_html("<pre>{}</pre>", json.dumps(obj.metadata, indent=2, sort_keys=True))

    def get_readonly_fields(self, request: HttpRequest, obj: Document | None = None) -> tuple:
        fields = tuple(super().get_readonly_fields(request, obj))
        if not may_retire(actor=request.user):
            fields += ("superseded_by",)
        return fields

    def get_form(self, request: HttpRequest, obj: Document | None = None, **kwargs: Any):
        form = super().get_form(request, obj, **kwargs)
        form.actor = request.user  # a fresh class per call: modelform_factory builds one
        if not may_retire(actor=request.user) and "status" in form.base_fields:
            # Doc writers draft and publish; retiring is a steward's decision. The choices follow
            # the stored row, not ``obj``: in a history revert that is the old version.
            allowed = [c for c in Document.Status.choices if c[0] != Document.Status.RETIRED]
            if _stored_status(obj) == Document.Status.RETIRED:
                allowed = [(Document.Status.RETIRED, "Retired")]
            form.base_fields["status"] = forms.ChoiceField(
                choices=allowed, initial=form.base_fields["status"].initial
            )
        return form

    def save_model(self, request: HttpRequest, obj: Document, form: Any, change: bool) -> None:
        """The change form and history revert both save here, through the service."""
        # What SimpleHistoryAdmin.save_model records; simple_history has no types to declare it.
        obj._history_user = request.user  # type: ignore[attr-defined]
        document_save(
            document=obj,
            actor=request.user,
            expected_row_hash=form.cleaned_data.get("base_row_hash") or None,
        )

    def changeform_view(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return super().changeform_view(request, *args, **kwargs)
        except DocumentEditConflict as exc:
            return self._conflict_after_check(request, exc)

    def history_form_view(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return super().history_form_view(request, *args, **kwargs)
        except DocumentEditConflict as exc:
            return self._conflict_after_check(request, exc)

    def _conflict_after_check(self, request: HttpRequest, exc: DocumentEditConflict):
        """Another save landed between the form's check and this one (the service re-checks
        under the row lock): nothing was written; the editor reopens the saved version."""
        self.message_user(request, str(exc), messages.ERROR)
        return redirect(request.get_full_path())

    def get_deleted_objects(self, objs: Any, request: HttpRequest) -> tuple:
        """Deleting a page deletes its chunks: they are its index, not content of their own, so
        the page's delete permission covers them (Django would ask for ``delete_chunk`` too,
        which no group has: a chunk deleted alone would leave its page half-indexed)."""
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        derived = {model._meta.verbose_name for model in DERIVED_FROM_DOCUMENT}
        return deleted, counts, set(perms_needed) - derived, protected

    def delete_model(self, request: HttpRequest, obj: Document) -> None:
        document_delete(document=obj, actor=request.user)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Document]) -> None:
        for document in queryset:
            document_delete(document=document, actor=request.user)

    class Media:
        js = ("kb/document_preview.js",)
        css = {"all": ("kb/document_preview.css",)}

    def get_urls(self) -> list:
        upload = self.admin_site.admin_view(self.import_view)
        preview = self.admin_site.admin_view(self.preview_view)
        diff = self.admin_site.admin_view(self.history_diff_view)
        retire = self.admin_site.admin_view(self.retire_view)
        return [
            path("import/", upload, name="kb_document_import"),
            path("<path:object_id>/retire/", retire, name="kb_document_retire"),
            path("preview/", preview, name="kb_document_preview"),
            path(
                "<path:object_id>/history/<int:history_id>/diff/",
                diff,
                name="kb_document_history_diff",
            ),
            *super().get_urls(),
        ]

    def retire_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """Retire one document, optionally naming its successor; or restore a retired one."""
        if not self.has_retire_permission(request):
            raise PermissionDenied
        document = self.get_object(request, object_id)
        if document is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        change_url = reverse("admin:kb_document_change", args=[document.pk])
        form = RetireForm(request.POST or None, document=document)
        if request.method == "POST" and "restore" in request.POST:
            document_restore(document=document, actor=request.user)
            self.message_user(request, f"Restored {document.path}: it is retrievable again.")
            return redirect(change_url)
        if request.method == "POST" and form.is_valid():
            successor = form.cleaned_data["successor"]
            try:
                document_retire(document=document, actor=request.user, successor=successor)
            except DocumentActionError as exc:
                form.add_error("successor", str(exc))
            else:
                self.message_user(
                    request,
                    f"Retired {document.path}"
                    + (f", superseded by {successor.path}" if successor else "")
                    + ": it is no longer retrieved or quoted.",
                )
                return redirect(change_url)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": f"Retire {document.path}",
            "document": document,
            "form": form,
            "change_url": change_url,
        }
        return TemplateResponse(request, "admin/kb/document/retire.html", context)

    def render_change_form(self, request: HttpRequest, context: dict, *args: Any, **kwargs: Any):
        context["may_retire"] = self.has_retire_permission(request)
        context["edit_conflict"] = getattr(
            context.get("adminform") and context["adminform"].form, "edit_conflict", None
        )
        return super().render_change_form(request, context, *args, **kwargs)

    def history_diff_view(
        self, request: HttpRequest, object_id: str, history_id: int
    ) -> HttpResponse:
        return document_history_diff(
            request, model_admin=self, object_id=object_id, history_id=history_id
        )

    def preview_view(self, request: HttpRequest) -> HttpResponse:
        """The rendered page and the chunks it will produce, for the text being edited."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not (self.has_add_permission(request) or self.has_change_permission(request)):
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

    def import_view(self, request: HttpRequest) -> HttpResponse:
        """Upload a .md file or a .zip of them: the same parsing and skip rules as kb_sync;
        changed documents are saved and indexed in the background, errors listed per file."""
        if not self.has_add_permission(request):
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
            **self.admin_site.each_context(request),
            "title": "Import Markdown",
            "form": form,
            "folders": document_folders(),
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/kb/document/import.html", context)

    def has_retire_permission(self, request: HttpRequest) -> bool:
        return may_retire(actor=request.user)

    @admin.action(description="Retire selected documents", permissions=["retire"])
    def retire_documents(self, request: HttpRequest, queryset: QuerySet[Document]) -> None:
        for document in queryset:
            document_retire(document=document, actor=request.user)
        self.message_user(
            request, f"Retired {queryset.count()} document(s): they are no longer retrieved."
        )

    @admin.action(description="Restore selected documents (un-retire)", permissions=["retire"])
    def restore_documents(self, request: HttpRequest, queryset: QuerySet[Document]) -> None:
        for document in queryset:
            document_restore(document=document, actor=request.user)
        self.message_user(request, f"Restored {queryset.count()} document(s).")

    def response_add(self, request: HttpRequest, obj: Document, *args: Any) -> HttpResponse:
        self._warn_about_flagged_lines(request, obj)
        return super().response_add(request, obj, *args)

    def response_change(self, request: HttpRequest, obj: Document) -> HttpResponse:
        self._warn_about_flagged_lines(request, obj)
        return super().response_change(request, obj)

    def _warn_about_flagged_lines(self, request: HttpRequest, document: Document) -> None:
        """Said at save, so the writer learns it before a customer would have."""
        flagged = reader_directed_lines(document.body)
        if flagged:
            lines = "; ".join(
                f"line {line.line_number}: {', '.join(line.reasons)}" for line in flagged
            )
            count = f"{len(flagged)} line{'' if len(flagged) == 1 else 's'}"
            self.message_user(
                request,
                f"{count} of {document.path} are flagged and will not be quoted by the "
                f"assistant ({lines}).",
                messages.WARNING,
            )

    @admin.display(description="reader warnings")
    def reader_warnings(self, document: Document) -> str:
        """Lines the assistant will not quote (see kb.content_checks), counted for the list."""
        count = len(reader_directed_lines(document.body))
        return f"{count} line{'' if count == 1 else 's'} flagged" if count else ""

    @admin.display(description="lines flagged for readers")
    def flagged_lines(self, document: Document) -> str:
        flagged = reader_directed_lines(document.body)
        if not flagged:
            return "None."
        return format_html(
            "<p>The assistant never quotes these lines; fix or remove them.</p><ul>{}</ul>",
            format_html_join(
                "",
                "<li>Line {}: {} <q>{}</q></li>",
                ((line.line_number, "; ".join(line.reasons), line.text) for line in flagged),
            ),
        )

    @admin.display(description="index")
    def index_status(self, document: Document) -> str:
        if document.status == Document.Status.RETIRED:
            return "retired — not searchable"  # whatever its chunks: retrieval skips the page
        states = list(document.index_states.all())
        if not states:
            return "not indexed"
        return ", ".join(
            state.status if not state.error else f"{state.status}: {state.error[:80]}"
            for state in states
        )


@admin.register(Category)
class CategoryAdmin(admin.ModelAdmin):
    """The names readers see on /docs/ for the categories documents give."""

    list_display = ("slug", "label", "document_count")
    list_editable = ("label",)
    search_fields = ("slug", "label")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Category]:
        per_category = (
            Document.objects.filter(category=OuterRef("slug"))
            .order_by()
            .values("category")
            .annotate(count=Count("id"))
            .values("count")
        )
        return super().get_queryset(request).annotate(document_count=Subquery(per_category))

    @admin.display(description="documents", ordering="document_count")
    def document_count(self, category: Category) -> int:
        return category.document_count or 0  # type: ignore[attr-defined]


MODELS_PERMISSION = "kb.manage_embedding_models"


class EmbeddingModelAddForm(forms.ModelForm):
    """Only the key: everything else comes from the embedder the key names."""

    class Meta:
        model = EmbeddingModel
        fields = ["key"]
        help_texts = {"key": "e.g. voyage/voyage-3.5 (needs VOYAGE_API_KEY)"}

    def clean_key(self) -> str:
        key = self.cleaned_data["key"].strip()
        try:
            self.embedder = embedder_for(key)
        except EmbeddingError as exc:
            raise forms.ValidationError(str(exc)) from exc
        return key


@admin.register(EmbeddingModel)
class EmbeddingModelAdmin(admin.ModelAdmin):
    """Model versions: add one (it builds in the background), watch its coverage grow,
    activate it when complete, drop the retired one. Every step goes through kb.services."""

    list_display = ("key", "state", "coverage", "dimensions", "created_at", "activated_at")
    readonly_fields = (
        "key",
        "provider",
        "model_name",
        "dimensions",
        "max_input_tokens",
        "state",
        "coverage",
        "created_at",
        "activated_at",
        "retired_at",
    )
    actions = ["activate_model", "build_model", "drop_model"]

    def _may_manage(self, request: HttpRequest) -> bool:
        return request.user.has_perm(MODELS_PERMISSION)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return self._may_manage(request)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # a model's fields describe its vector space and never change

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # dropping deletes its chunks and index: the "drop" action does that

    def has_manage_permission(self, request: HttpRequest) -> bool:
        return self._may_manage(request)

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm[Any]]:
        if obj is None:
            kwargs["form"] = EmbeddingModelAddForm
            kwargs["fields"] = ["key"]
        return super().get_form(request, obj, change, **kwargs)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None):
        return () if obj is None else self.readonly_fields

    def save_model(self, request: HttpRequest, obj: EmbeddingModel, form: Any, change: bool):
        added = embedding_model_add(embedder=form.embedder)
        obj.pk = added.pk
        obj.state = added.state
        self.message_user(
            request,
            f"{added.key} is {added.state}; its chunks are built in the background. "
            "Activate it here once its coverage is complete.",
        )

    @admin.display(description="coverage")
    def coverage(self, model: EmbeddingModel) -> str:
        return str(embedding_model_coverage(model=model))

    @admin.action(description="Activate: switch search to this model", permissions=["manage"])
    def activate_model(self, request: HttpRequest, queryset: QuerySet[EmbeddingModel]) -> None:
        if queryset.count() != 1:
            self.message_user(request, "Select exactly one model to activate.", messages.ERROR)
            return
        try:
            model = embedding_model_activate(model=queryset.get())
        except EmbeddingModelError as exc:
            self.message_user(request, str(exc), messages.ERROR)
            return
        self.message_user(request, f"{model.key} is now the active model.")

    @admin.action(description="Build: index what this model is missing", permissions=["manage"])
    def build_model(self, request: HttpRequest, queryset: QuerySet[EmbeddingModel]) -> None:
        for model in queryset.exclude(state=EmbeddingModel.State.ACTIVE):
            embedding_model_add(embedder=embedder_for(model.key))
        self.message_user(request, "Building in the background; refresh to see coverage.")

    @admin.action(description="Drop: delete this model and its chunks", permissions=["manage"])
    def drop_model(self, request: HttpRequest, queryset: QuerySet[EmbeddingModel]) -> None:
        for model in queryset:
            try:
                chunks = embedding_model_drop(model=model)
            except EmbeddingModelError as exc:
                self.message_user(request, str(exc), messages.ERROR)
                continue
            self.message_user(request, f"Dropped {model.key} and its {chunks} chunks.")


@admin.register(Chunk)
class ChunkAdmin(admin.ModelAdmin):
    list_display = ("document", "ordinal", "heading_path", "token_count", "embedding_model")
    list_select_related = ("document", "embedding_model")
    list_filter = ("embedding_model",)
    search_fields = ("document__path", "heading_path", "text")
    exclude = ("embedding",)
    readonly_fields = (
        "document",
        "embedding_model",
        "ordinal",
        "heading_path",
        "text",
        "char_start",
        "char_end",
        "token_count",
    )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
