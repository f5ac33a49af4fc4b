"""Embedding model versions: add, build, activate and drop, each through ``kb.services``."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from kb.embedders import EmbeddingError, embedder_for
from kb.models import EmbeddingModel
from kb.services import (
    EmbeddingModelError,
    embedding_model_activate,
    embedding_model_add,
    embedding_model_coverage,
    embedding_model_drop,
)

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
