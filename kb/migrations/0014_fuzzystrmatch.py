from __future__ import annotations

from django.contrib.postgres.operations import CreateExtension
from django.db import migrations


class Migration(migrations.Migration):
    """``levenshtein_less_equal`` for reading a question's misspelt words as the index's words
    (``search.spelling``). fuzzystrmatch is a trusted extension: a database owner may create it."""

    dependencies = [("kb", "0013_document_path_rule")]

    operations = [CreateExtension("fuzzystrmatch")]
