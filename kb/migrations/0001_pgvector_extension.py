from __future__ import annotations

from django.db import migrations
from pgvector.django import VectorExtension


class Migration(migrations.Migration):
    """pgvector must exist before any model uses the ``vector`` type."""

    dependencies: list[tuple[str, str]] = []

    operations = [VectorExtension()]
