"""The document admin: the list, the change form (saved through ``document_save``), history with
a version comparison, retire and restore, the live preview and the Markdown upload. Its forms are
in ``document_forms``, its own pages in ``document_views``."""

from __future__ import annotations

import functools
import json
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.views.main import ChangeList
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import path
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from simple_history.admin import SimpleHistoryAdmin
from simple_history.models import ModelChange
from simple_history.template_utils import HistoricalRecordContextHelper

from kb.admin.document_forms import DocumentForm
from kb.admin.document_views import (
    document_history_diff_view,
    document_import_view,
    document_preview_view,
    document_retire_view,
)
from kb.admin.test_questions import TestQuestionInline
from kb.content_checks import reader_directed_lines
from kb.models import Chunk, Document, DocumentIndexState
from kb.selectors.versions import document_field_shown
from kb.services import (
    DocumentEditConflict,
    document_delete,
    document_restore,
    document_retire,
    document_save,
    may_retire,
)
from kb.services.reader_checks import flagged_lines_count
from kb.test_questions.models import TestQuestion, TestQuestionRun
from kb.test_questions.selectors import flagged_counts, flags_by_version, test_question_results
from kb.test_questions.services import (
    TestQuestionEdit,
    may_edit_test_questions,
    may_run_test_questions,
    test_questions_save,
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


def _stored_status(document: Document | None) -> str | None:
    if document is None or document.pk is None:
        return None
    return Document.objects.filter(pk=document.pk).values_list("status", flat=True).first()


class DocumentHistoryContextHelper(HistoricalRecordContextHelper):
    """The history list's "field: old → new" in the words of the version comparison page: a
    successor by its path (simple_history's own says "Deleted document (pk=None)" for "none")."""

    def prepare_delta_change_value(self, change: ModelChange, value: Any) -> str:
        return document_field_shown(change.field, value)


class DocumentChangeList(ChangeList):
    """The list without the pages' bodies (nor their front matter): none is shown, and a real
    page is ~10 kB. Its "reader warnings" column reads counts made once per text
    (``flagged_lines_count``), set here for the whole page in one go as ``flagged_line_count``."""

    def get_results(self, request: HttpRequest) -> None:
        # Here and not in get_queryset: the actions run on get_queryset, and they save pages.
        self.queryset = self.queryset.defer("body", "metadata")
        super().get_results(request)
        counts = flagged_lines_count(documents=self.result_list)
        guarded = flagged_counts(documents=self.result_list)
        for document in self.result_list:
            document.flagged_line_count = counts.get(document.pk, 0)
            document.test_question_counts = guarded.get(document.pk, (0, 0))


# Rows that exist only as a function of a document and go when it goes.
DERIVED_FROM_DOCUMENT = (Chunk, DocumentIndexState, TestQuestionRun)


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
        "test_questions",
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
    inlines = (DocumentIndexStateInline, TestQuestionInline)
    object_history_list_template = "admin/kb/document/object_history_list.html"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Document]:
        return super().get_queryset(request).prefetch_related("index_states")

    def get_inlines(self, request: HttpRequest, obj: Document | None) -> list:
        # Test questions guard a saved page: a new one has no answers to compare yet.
        return [
            inline for inline in self.inlines if obj is not None or inline is not TestQuestionInline
        ]

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        """The test questions are saved through their service, which checks who may."""
        if formset.model is not TestQuestion:
            return super().save_formset(request, form, formset, change)
        edited = formset.save(commit=False)
        if not edited and not formset.deleted_objects:
            return None  # nothing changed (or shown read-only): nothing to check or save
        test_questions_save(
            document=form.instance,
            actor=request.user,
            edits=[
                TestQuestionEdit(
                    question=question.question,
                    facts=question.facts,
                    match=question.match,
                    test_question=question if question.pk else None,
                )
                for question in edited
            ],
            deleted=formset.deleted_objects,
        )

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return DocumentChangeList

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
        records = list(historical_records)
        if records:
            flagged = flags_by_version(
                document_id=records[0].id, history_ids=[record.history_id for record in records]
            )
            for record in records:
                record.test_question_flags = flagged.get(record.history_id, [])

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
        js = ("kb/document_preview.js", "kb/test_questions.js")
        css = {"all": ("kb/document_preview.css",)}

    def get_urls(self) -> list:
        def view(function: Any) -> Any:
            return self.admin_site.admin_view(functools.partial(function, model_admin=self))

        upload = view(document_import_view)
        preview = view(document_preview_view)
        diff = view(document_history_diff_view)
        retire = view(document_retire_view)
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

    def render_change_form(self, request: HttpRequest, context: dict, *args: Any, **kwargs: Any):
        context["may_retire"] = self.has_retire_permission(request)
        document = context.get("original")
        if document is not None and document.pk is not None:
            context["test_question_results"] = test_question_results(document=document)
            context["may_edit_test_questions"] = may_edit_test_questions(
                actor=request.user, document=document
            )
            context["may_run_test_questions"] = may_run_test_questions(
                actor=request.user, document=document
            )
        context["edit_conflict"] = getattr(
            context.get("adminform") and context["adminform"].form, "edit_conflict", None
        )
        return super().render_change_form(request, context, *args, **kwargs)

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
        count = getattr(document, "flagged_line_count", None)
        if count is None:  # a row not listed by DocumentChangeList
            count = flagged_lines_count(documents=[document]).get(document.pk, 0)
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

    @admin.display(description="test questions")
    def test_questions(self, document: Document) -> str:
        """How many of the page's test questions the last indexing broke, of how many."""
        flagged, total = getattr(document, "test_question_counts", None) or flagged_counts(
            documents=[document]
        ).get(document.pk, (0, 0))
        if not total:
            return ""
        if flagged:
            return format_html(
                '<a class="kb-test-flagged" href="{}#test-questions">{} of {} flagged</a>',
                f"{document.pk}/change/",
                flagged,
                total,
            )
        return f"{total} question{'' if total == 1 else 's'}, none flagged"

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
