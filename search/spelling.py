"""A question's misspelt words, read as the index's words one or two typing slips away.

The keyword leg matches index lexemes exactly, so "how do i cancle my subscribtion" finds no
chunk saying "cancel" or "subscription", and the vector leg alone did not bring the "How to
cancel" section among the passages. A question lexeme no chunk holds is looked up among the
lexemes chunks do hold: the nearest within one edit (two from eight letters on), the most common
of equals, is searched in its place. A lexeme with no such neighbour (a product name no page
mentions) is left as it was, so the no-answer decision still sees a question about something the
help center never names.

Lexemes shorter than five letters, and any holding a digit, a dot or a hyphen (codes, versions,
host names, compounds), are left alone: one edit turns most short words into another word. A
correction keeps the word's first letter: a typing slip rarely hits it, while the words an index
lacks and that one edit at the front turns into an indexed word are mostly real words of their
own ("price" -> "rice", "banner" -> "manner", "grown" -> "brown", seen on Hugo's docs).

The lookup is one statement over the model's lexeme statistics (``kb_term_stat``) with
PostgreSQL's ``fuzzystrmatch``, made only for a question holding a lexeme the index lacks.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kb.models import EmbeddingModel
from search.sql import TERM_STATISTICS, reading_connection

MIN_LEXEME_LENGTH = 5
LONG_LEXEME_LENGTH = 8  # from here two edits are allowed, below it one
_LETTERS = re.compile(r"[^\W\d_]+")


def correctable(lexeme: str) -> bool:
    return len(lexeme) >= MIN_LEXEME_LENGTH and bool(_LETTERS.fullmatch(lexeme))


def lexeme_corrections(
    *, lexemes: Sequence[str], embedding_model: EmbeddingModel
) -> dict[str, tuple[str, int]]:
    """For each of ``lexemes`` (ones no chunk of ``embedding_model`` holds), the nearest lexeme
    chunks do hold and how many hold it: ``{asked: (indexed, chunk count)}``. Lexemes that are
    short, hold a digit or have no near neighbour are absent."""
    asked = sorted({lexeme for lexeme in lexemes if correctable(lexeme)})
    if not asked:
        return {}
    with reading_connection().cursor() as cursor:
        cursor.execute(
            f"""
            SELECT a.lexeme, near.lexeme, near.chunk_count
            FROM unnest(%(asked)s::text[]) AS a (lexeme)
            CROSS JOIN LATERAL (
                SELECT CASE WHEN length(a.lexeme) >= %(long)s THEN 2 ELSE 1 END AS edits
            ) allowed
            CROSS JOIN LATERAL (
                SELECT t.lexeme, t.chunk_count,
                       levenshtein_less_equal(t.lexeme, a.lexeme, allowed.edits) AS distance
                FROM {TERM_STATISTICS} t
                WHERE t.embedding_model_id = %(model)s AND t.chunk_count > 0
                  AND left(t.lexeme, 1) = left(a.lexeme, 1)
                  AND length(t.lexeme) BETWEEN length(a.lexeme) - allowed.edits
                                           AND length(a.lexeme) + allowed.edits
                ORDER BY distance, t.chunk_count DESC, t.lexeme
                LIMIT 1
            ) near
            WHERE near.distance <= allowed.edits
            """,
            {"asked": asked, "long": LONG_LEXEME_LENGTH, "model": embedding_model.pk},
        )
        return {asked: (indexed, count) for asked, indexed, count in cursor.fetchall()}
