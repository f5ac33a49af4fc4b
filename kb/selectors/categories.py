"""Categories as readers see them: their names, and the published pages grouped under them."""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.text import capfirst

from kb.models import Category, Document
from kb.selectors.access import documents_readable


@dataclass(frozen=True)
class CategoryGroup:
    label: str  # as readers see it: staff's name for the category, else the category as given
    documents: list[Document]


def category_label(category: str, *, labels: dict[str, str]) -> str:
    """What readers see for ``category``: the name staff gave it (``labels``, from
    ``Category``), else the value as written, with a slug's dashes read as spaces
    ("getting-started" → "Getting started"; "FAQ" stays "FAQ"). Never title-cased: that
    would make "API" of nothing and "Api" of "api"."""
    if category in labels:
        return labels[category]
    if category.islower():
        return capfirst(category.replace("-", " ").replace("_", " ")) or category
    return category


def document_category_label(document: Document) -> str:
    """The name readers see for the document's category, "" when it has none."""
    if not document.category:
        return ""
    labels = dict(Category.objects.filter(slug=document.category).values_list("slug", "label"))
    return category_label(document.category, labels=labels)


def documents_by_category(*, audiences: tuple[str, ...]) -> list[CategoryGroup]:
    """Published documents the reader may open, grouped by category, the groups in the order of
    their names; documents without a category last, under "Other"."""
    documents = (
        documents_readable(audiences=audiences)
        .filter(status=Document.Status.PUBLISHED)
        .only("path", "title", "category", "audience", "updated_on")
        .order_by("title")
    )
    labels = dict(Category.objects.values_list("slug", "label"))
    named: dict[str, list[Document]] = {}
    unnamed: list[Document] = []
    for document in documents:
        if document.category:
            label = category_label(document.category, labels=labels)
            named.setdefault(label, []).append(document)
        else:
            unnamed.append(document)
    groups = [
        CategoryGroup(label, sorted(members, key=lambda document: document.title.casefold()))
        for label, members in sorted(named.items(), key=lambda item: item[0].casefold())
    ]
    return groups + ([CategoryGroup("Other", unnamed)] if unnamed else [])
