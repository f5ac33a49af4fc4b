from __future__ import annotations

from django.db import migrations

# pgvector's type is stored EXTERNAL: a chunk row with its text and tsvector is over the 2 kB
# TOAST threshold, so every vector went out of line, and an exact read of the vectors (the plan
# the planner takes for a help center's index) fetched each through the TOAST index. With MAIN
# and a TOAST target of a page (8,160 bytes) a row stays whole up to that size; past it the text
# and tsvector are moved out first, and the vector only when it alone would not fit (about 2,000
# dimensions). VACUUM FULL rewrites the rows already stored, and rebuilds the table's indexes,
# so it cannot run in a transaction.
FORWARD = [
    "ALTER TABLE kb_chunk ALTER COLUMN embedding SET STORAGE MAIN",
    "ALTER TABLE kb_chunk SET (toast_tuple_target = 8160)",
    "VACUUM FULL kb_chunk",
]
BACKWARD = [
    "ALTER TABLE kb_chunk ALTER COLUMN embedding SET STORAGE EXTERNAL",
    "ALTER TABLE kb_chunk RESET (toast_tuple_target)",
    "VACUUM FULL kb_chunk",
]


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("kb", "0017_i28guard_test_questions")]

    operations = [migrations.RunSQL(FORWARD, reverse_sql=BACKWARD)]
