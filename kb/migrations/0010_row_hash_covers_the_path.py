import hashlib

from django.db import migrations


def _hash(fields: tuple[str, ...]) -> str:
    return hashlib.sha256("\x00".join(fields).encode()).hexdigest()


def _fields(document) -> tuple[str, ...]:
    return (
        document.content_hash,
        document.category,
        document.audience,
        document.status,
        str(document.superseded_by_id or ""),
        str(document.updated_on or ""),
        str(document.review_by or ""),
    )


def row_hashes_with_path(apps, schema_editor) -> None:
    """A synced row that no one changed since (its recorded hash is the old formula's) is
    recorded again with the path in the hash; a row changed since stays changed."""
    Document = apps.get_model("kb", "Document")
    for document in Document.objects.exclude(synced_row_hash="").defer("body").iterator():
        fields = _fields(document)
        if document.synced_row_hash == _hash(fields):
            document.synced_row_hash = _hash((document.path, *fields))
            document.save(update_fields=["synced_row_hash"])


def row_hashes_without_path(apps, schema_editor) -> None:
    Document = apps.get_model("kb", "Document")
    for document in Document.objects.exclude(synced_row_hash="").defer("body").iterator():
        fields = _fields(document)
        if document.synced_row_hash == _hash((document.path, *fields)):
            document.synced_row_hash = _hash(fields)
            document.save(update_fields=["synced_row_hash"])


class Migration(migrations.Migration):
    """Document.row_hash covers the path: a page moved in admin is a change a folder sync must
    not undo (before, the sync pruned the moved page as unedited and re-created its old path)."""

    dependencies = [
        ("kb", "0009_document_front_matter_metadata"),
    ]

    operations = [migrations.RunPython(row_hashes_with_path, row_hashes_without_path)]
