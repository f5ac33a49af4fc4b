"""The document admin's forms: the change form (lifecycle checks and edit conflicts as form
errors), the retire form with its successor chooser, and the Markdown upload."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.admin.widgets import AutocompleteSelect
from django.http import QueryDict

from kb.actors import Actor
from kb.models import Document
from kb.parsing import normalise_newlines
from kb.selectors.versions import EditConflict, document_edit_conflict
from kb.services import (
    DocumentEditConflict,
    DocumentPermissionDenied,
    document_edit_check,
    document_lifecycle_check,
    may_retire,
)


class DocumentImportForm(forms.Form):
    file = forms.FileField(
        help_text="A Markdown file (.md), an HTML page (.html) or a .zip of them; paths inside "
        "the zip become document paths. Unchanged files are skipped; nothing is ever deleted by "
        "an import."
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
