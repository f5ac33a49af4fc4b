"""Category names: read from a folder's ``categories.json`` and added where staff have none."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from django.db import transaction

from kb.models import Category
from kb.services.sync.sources import outside_folder

CATEGORY_LABELS_FILE = "categories.json"
_MAX_LENGTH = Category._meta.get_field("slug").max_length or 200


class CategoryLabelsError(ValueError):
    """A ``categories.json`` that is not an object of category → name; nothing was read."""


def category_labels_read(*, directory: Path) -> dict[str, str]:
    """The names a folder gives its categories (``{"api": "API"}``), or none without the file.
    Checked whole before anything is written: one bad entry refuses the file."""
    path = directory / CATEGORY_LABELS_FILE
    if not path.is_file():
        return {}
    if outside_folder(file_path=path, root=directory):
        raise CategoryLabelsError(f"{path}: a link to a file outside the folder")
    try:
        labels = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CategoryLabelsError(f"{path}: not valid JSON ({exc})") from exc
    if not isinstance(labels, dict):
        raise CategoryLabelsError(f'{path}: expected an object such as {{"api": "API"}}')
    for slug, label in labels.items():
        if not isinstance(label, str) or not label.strip() or len(label) > _MAX_LENGTH:
            raise CategoryLabelsError(
                f"{path}: the name of {slug!r} must be text of 1 to {_MAX_LENGTH} characters"
            )
        if not slug.strip() or len(slug) > _MAX_LENGTH:
            raise CategoryLabelsError(f"{path}: {slug!r} is not a category")
    return {slug.strip(): " ".join(label.split()) for slug, label in labels.items()}


@transaction.atomic
def category_labels_add(*, labels: Mapping[str, str]) -> list[str]:
    """Name the categories in ``labels`` that have no name yet; a name staff gave (or changed)
    in admin is kept, since the database is the source of truth. Returns the categories named."""
    named = set(Category.objects.filter(slug__in=labels).values_list("slug", flat=True))
    added = [slug for slug in labels if slug not in named]
    Category.objects.bulk_create(
        [Category(slug=slug, label=labels[slug]) for slug in added], ignore_conflicts=True
    )
    return added
