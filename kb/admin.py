from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from simple_history.admin import SimpleHistoryAdmin

from kb.models import Chunk, Document, DocumentIndexState, EmbeddingModel


class DocumentIndexStateInline(admin.TabularInline):
    model = DocumentIndexState
    extra = 0
    can_delete = False
    fields = ("embedding_model", "status", "chunk_count", "attempts", "indexed_at", "error")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Document)
class DocumentAdmin(SimpleHistoryAdmin):
    list_display = (
        "path",
        "title",
        "status",
        "audience",
        "category",
        "updated_on",
        "review_by",
        "index_status",
    )
    list_filter = ("status", "audience", "category")
    search_fields = ("title", "path", "body")
    readonly_fields = ("content_hash", "created_at", "modified_at")
    autocomplete_fields = ("superseded_by",)
    inlines = (DocumentIndexStateInline,)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Document]:
        return super().get_queryset(request).prefetch_related("index_states")

    @admin.display(description="index")
    def index_status(self, document: Document) -> str:
        states = [state for state in document.index_states.all()]
        if not states:
            return "not indexed"
        return ", ".join(
            state.status if not state.error else f"{state.status}: {state.error[:80]}"
            for state in states
        )


@admin.register(EmbeddingModel)
class EmbeddingModelAdmin(admin.ModelAdmin):
    list_display = ("key", "state", "dimensions", "max_input_tokens", "created_at", "activated_at")
    readonly_fields = ("key", "provider", "model_name", "dimensions", "max_input_tokens")


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
