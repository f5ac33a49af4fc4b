"""The version of the index as a whole: what the answer cache keys its entries on."""

from __future__ import annotations

import hashlib

from django.db import connection

from kb.models import Document, DocumentIndexState, EmbeddingModel


def index_version() -> str:
    """A digest of everything that decides what retrieval may return; equal digests, equal
    answers. It changes when a document is saved (edit, retire, restore, supersede, audience:
    ``modified_at``) or deleted (the count), when chunks are rewritten or an index state moves
    (``DocumentIndexState.updated_at`` and its count), or when another embedding model is
    activated. (A raw ``QuerySet.update()`` on documents bypasses ``modified_at``; every service
    path saves the row.)

    The answer cache reads it on every first question: one statement of scalar subqueries, so
    one round trip instead of three."""
    quote = connection.ops.quote_name
    documents = quote(Document._meta.db_table)
    states = quote(DocumentIndexState._meta.db_table)
    models = quote(EmbeddingModel._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT (SELECT count(*) FROM {documents}), (SELECT max(modified_at) FROM {documents}),
                   (SELECT count(*) FROM {states}), (SELECT max(updated_at) FROM {states}),
                   (SELECT array_agg(ARRAY[id::text, activated_at::text] ORDER BY id)
                      FROM {models} WHERE state = %s)
            """,
            [EmbeddingModel.State.ACTIVE],
        )
        row = cursor.fetchone()
    return hashlib.sha256(repr(row).encode()).hexdigest()[:24]
