"""Chunks, read-only: they are a document's index, written only by indexing."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from kb.models import Chunk


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
