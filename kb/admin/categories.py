"""Category names: what readers see on /docs/ for the categories documents give."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Count, OuterRef, QuerySet, Subquery
from django.http import HttpRequest

from kb.models import Category, Document


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
