"""Reads about what an asker may see, beside the hybrid statement: which names and words of a
question the visible pages mention, which retrieved chunks the primary still shows, and the
other sections of the pages retrieved."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections

from kb.models import EmbeddingModel
from kb.visibility import visible_document_sql
from search.sql import CHUNKS, DOCUMENTS, reading_connection, visible_chunks_sql

COMMON_WORD_SAMPLE = 200  # visible pages looked at to tell a common word; all of them below


def unknown_names(
    *, names: Sequence[str], embedding_model: EmbeddingModel, audiences: Sequence[str]
) -> list[str]:
    """The names no page the asker may see mentions, in one statement (a GIN lookup each).
    A name made only of stop words says nothing and is never "unknown"."""
    if not names:
        return []
    with reading_connection().cursor() as cursor:
        cursor.execute(
            f"""
            SELECT n.name FROM unnest(%(names)s::text[]) WITH ORDINALITY AS n (name, position)
            WHERE numnode(plainto_tsquery('english', n.name)) > 0
              AND NOT EXISTS (
                  SELECT 1 FROM {CHUNKS} c JOIN {DOCUMENTS} d ON d.id = c.document_id
                  WHERE {visible_chunks_sql(embedding_model)}
                    AND c.tsv @@ plainto_tsquery('english', n.name)
              )
            ORDER BY n.position
            """,
            {"names": list(names), "audiences": list(audiences)},
        )
        return [row[0] for row in cursor.fetchall()]


def common_words(
    *, words: Sequence[str], embedding_model: EmbeddingModel, audiences: Sequence[str]
) -> set[str]:
    """Which of ``words`` more than half the pages the asker may see mention: the company's
    name, its product, "invoice" in a billing help center. Such a word says nothing about
    which page answers (past half, Robertson and Sparck Jones's inverse document frequency
    is no longer positive). A page counts once however many of its chunks hold the word.

    The share is read on ``COMMON_WORD_SAMPLE`` pages in a fixed pseudo-random order (every
    page when there are fewer), each probed through its own chunks, so a word on a million
    chunks costs what a rare one does. Choosing the sample orders the visible pages' ids once:
    13 ms for 100k pages, measured on a table of ids alone."""
    if not words:
        return set()
    with reading_connection().cursor() as cursor:
        cursor.execute(
            f"""
            WITH sample AS (
                SELECT d.id FROM {DOCUMENTS} d
                WHERE {visible_document_sql(alias="d")}
                ORDER BY hashint8(d.id), d.id
                LIMIT {COMMON_WORD_SAMPLE}
            )
            SELECT w.word FROM unnest(%(words)s::text[]) AS w (word)
            WHERE numnode(plainto_tsquery('english', w.word)) > 0
              AND 2 * (
                  SELECT count(*) FROM sample s
                  WHERE EXISTS (
                      SELECT 1 FROM {CHUNKS} c
                      WHERE c.document_id = s.id
                        AND c.embedding_model_id = {int(embedding_model.pk)}
                        AND c.tsv @@ plainto_tsquery('english', w.word)
                  )
              ) > (SELECT count(*) FROM sample)
            """,
            {"audiences": list(audiences), "words": list(words)},
        )
        return {row[0] for row in cursor.fetchall()}


def chunks_still_visible(
    *, chunk_ids: Sequence[int], embedding_model: EmbeddingModel, audiences: Sequence[str]
) -> set[int]:
    """Which of ``chunk_ids`` the primary still holds, on a page the asker may see: a lagging
    replica can return a chunk that a newer version has replaced (its row is gone) or a page
    retired or made internal since. One lookup by primary key on the primary."""
    if not chunk_ids:
        return set()
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute(
            f"""
            SELECT c.id FROM {CHUNKS} c JOIN {DOCUMENTS} d ON d.id = c.document_id
            WHERE {visible_chunks_sql(embedding_model)} AND c.id = ANY(%(chunk_ids)s)
            """,
            {"audiences": list(audiences), "chunk_ids": list(chunk_ids)},
        )
        return {row[0] for row in cursor.fetchall()}


def page_sections(
    *,
    documents: Sequence[int],
    beside: Sequence[int],
    term_idfs: Mapping[str, float],
    per_page: int,
    embedding_model: EmbeddingModel,
    audiences: Sequence[str],
) -> list[dict[str, Any]]:
    """Up to ``per_page`` chunks of each of ``documents`` other than ``beside`` (the chunks
    retrieved already), those holding the most of the question's IDF (``term_idfs``, index
    lexeme -> IDF) in their heading path or text, ties to the earlier chunk; a chunk holding
    none of the question's terms is never one. In the order of ``documents``, each page's best
    first, as rows of the columns a ``search.results.Hit`` is made of. One statement; a page's
    chunks are read through its (embedding model, document) index."""
    if not documents or not term_idfs or per_page < 1:
        return []
    terms = sorted(term_idfs)
    with reading_connection().cursor() as cursor:
        cursor.execute(
            f"""
            WITH scored AS (
                SELECT c.id, c.document_id, c.ordinal,
                       (SELECT coalesce(sum(t.idf), 0)
                        FROM unnest(%(terms)s::text[], %(idfs)s::float8[]) AS t (term, idf)
                        WHERE t.term = ANY(tsvector_to_array(c.tsv))) AS held
                FROM {CHUNKS} c JOIN {DOCUMENTS} d ON d.id = c.document_id
                WHERE {visible_chunks_sql(embedding_model)}
                  AND c.document_id = ANY(%(documents)s) AND NOT c.id = ANY(%(beside)s)
            ),
            placed AS (
                SELECT id, document_id, row_number() OVER (
                    PARTITION BY document_id ORDER BY held DESC, ordinal
                ) AS place
                FROM scored WHERE held > 0
            )
            SELECT c.id AS chunk_id, c.document_id, d.path, d.title, c.heading_path, c.text,
                   c.char_start, c.char_end, c.ordinal, d.updated_on, c.token_count
            FROM placed p
            JOIN {CHUNKS} c ON c.id = p.id JOIN {DOCUMENTS} d ON d.id = c.document_id
            WHERE p.place <= %(per_page)s
            ORDER BY array_position(%(documents)s, p.document_id), p.place
            """,
            {
                "terms": terms,
                "idfs": [float(term_idfs[term]) for term in terms],
                "documents": list(documents),
                "beside": list(beside),
                "per_page": int(per_page),
                "audiences": list(audiences),
            },
        )
        columns = [column.name for column in cursor.description]
        return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
