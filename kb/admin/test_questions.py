"""The document editor's test questions: an inline of the page's questions and their facts,
saved through ``kb.test_questions.services`` (who may change them is decided there)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from kb.models import Document
from kb.test_questions.models import MAX_FACTS, TestQuestion
from kb.test_questions.services import (
    EDIT_PERMISSION,
    TestQuestionRejected,
    facts_clean,
    may_edit_test_questions,
)


class FactsField(forms.Field):
    """1 to 3 short facts, one per line."""

    widget = forms.Textarea(attrs={"rows": MAX_FACTS, "cols": 30, "class": "kb-test-facts"})

    def prepare_value(self, value: Any) -> Any:
        return "\n".join(value) if isinstance(value, list | tuple) else value

    def to_python(self, value: Any) -> list[str]:
        text = str(value or "")
        try:
            return facts_clean(text.splitlines())
        except TestQuestionRejected as exc:
            raise forms.ValidationError(str(exc)) from exc


class TestQuestionForm(forms.ModelForm):
    facts = FactsField(
        help_text=f"1 to {MAX_FACTS} short phrases a right answer states, one per line."
    )

    class Meta:
        model = TestQuestion
        fields = ["question", "facts", "match"]
        widgets = {"question": forms.TextInput(attrs={"size": 60})}


class TestQuestionInline(admin.TabularInline):
    """Each question, its facts and whether all or any must be stated; the results of their
    runs are shown above it (``templates/admin/kb/document/_test_questions.html``)."""

    model = TestQuestion
    form = TestQuestionForm
    extra = 0
    fields = ("question", "facts", "match")
    verbose_name = "test question"

    def _may_edit(self, request: HttpRequest, obj: Document | None) -> bool:
        if obj is None:  # Django asks without a page too (to list the rows): the permission alone
            return request.user.has_perm(EDIT_PERMISSION)
        return may_edit_test_questions(actor=request.user, document=obj)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._may_edit(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._may_edit(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._may_edit(request, obj)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.has_perm("kb.view_testquestion")
