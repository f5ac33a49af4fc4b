"""Recounts of what the chunk table's statement triggers keep up to date (the BM25 statistics,
the page vectors), for tests that change chunks in every way a write can."""

from __future__ import annotations

import numpy as np
from django.db import connection

from kb.models import Chunk, PageVector


def statistics_match_a_recount() -> None:
    """The BM25 term and index statistics equal a count made from the chunks themselves."""
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT count(*) FROM (
                   SELECT c.embedding_model_id AS model, t.lexeme, count(*) AS n
                   FROM kb_chunk c, unnest(c.tsv) t GROUP BY 1, 2) recount
               FULL JOIN (SELECT * FROM kb_term_stat WHERE chunk_count <> 0) s
                   ON s.embedding_model_id = recount.model AND s.lexeme = recount.lexeme
               WHERE coalesce(recount.n, 0) <> coalesce(s.chunk_count, 0)"""
        )
        assert cursor.fetchone()[0] == 0
        cursor.execute(
            """SELECT count(*) FROM (
                   SELECT embedding_model_id, count(*) AS n, sum(term_count) AS terms
                   FROM kb_chunk GROUP BY 1) recount
               FULL JOIN (SELECT * FROM kb_index_stat WHERE chunk_count <> 0) s
                   USING (embedding_model_id)
               WHERE coalesce(recount.n, 0) <> coalesce(s.chunk_count, 0)
                  OR coalesce(recount.terms, 0) <> coalesce(s.term_count, 0)"""
        )
        assert cursor.fetchone()[0] == 0


def page_vectors_match_a_recount() -> None:
    """Every (page, model) with chunks has one row, the mean of its chunks; no other rows."""
    expected = {}
    for chunk in Chunk.objects.all():
        expected.setdefault((chunk.document_id, chunk.embedding_model_id), []).append(
            np.array(chunk.embedding, dtype=float)
        )
    stored = {(v.document_id, v.embedding_model_id): v for v in PageVector.objects.all()}

    assert stored.keys() == expected.keys()
    for key, vectors in expected.items():
        assert stored[key].chunk_count == len(vectors)
        np.testing.assert_allclose(
            np.array(stored[key].embedding, dtype=float), np.mean(vectors, axis=0), atol=1e-6
        )
