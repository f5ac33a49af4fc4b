"""The hybrid retrieval SQL: vector leg and keyword leg as CTEs, fused by weighted RRF, one query.

Both legs filter to published documents of the asker's audiences and to one embedding model
inside the SQL, so nothing the asker may not see is ever fetched. The vector leg orders by
``embedding::vector(d) <=> query`` with ``embedding_model_id`` as a literal, the exact shape of
that model's partial HNSW index; pgvector's iterative scan (set per connection, see
``search.apps``) keeps scanning when the filters reject index candidates.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import connection

from kb.models import EmbeddingModel, vector_literal
from search.keywords import KeywordQuery

RRF_K = 60


def rrf_score(ranks: Sequence[int | None], *, weights: Sequence[float] | None = None) -> float:
    """Reciprocal Rank Fusion of 1-based ranks (None: the leg did not return the item)."""
    weights = weights or [1.0] * len(ranks)
    return sum(w / (RRF_K + r) for r, w in zip(ranks, weights, strict=True) if r is not None)


@dataclass(frozen=True)
class FusionWeights:
    """RRF weights per leg, with the keyword leg gated on what the question contains.

    Measured on corpus/eval.jsonl: the keyword leg alone beats the vector leg on pasted
    identifiers (recall@5 1.00 vs 0.93) but is weak on paraphrases (0.40 vs 0.87), and at equal
    weight it dragged hybrid below the vector leg (0.87 vs 0.93). So it speaks loudly for
    questions that carry an identifier and not at all otherwise, unless it is the only leg.
    An identifier the index cannot find exactly (``starting_after``: the index keeps only
    "start") makes a plain question: gating on it would rank every chunk saying "start", for
    70 ms at 100k chunks, and say nothing useful.
    """

    vector: float = 1.0
    keyword_identifier: float = 1.5  # the question carries an identifier (E4012, invoice.paid)
    keyword_plain: float = 0.0  # a natural-language question
    identifier_bonus: float = 1.0  # added to keyword ts_rank when a pasted identifier matches

    def keyword_weight(self, keywords: KeywordQuery, *, vector_leg: bool) -> float:
        if not vector_leg:
            return 1.0
        return self.keyword_identifier if keywords.identifier_phrases else self.keyword_plain


@dataclass(frozen=True)
class Candidate:
    chunk_id: int
    document_id: int
    path: str
    title: str
    heading_path: str
    text: str
    char_start: int
    char_end: int
    updated_on: datetime.date | None
    vector_rank: int | None
    keyword_rank: int | None
    fused_score: float
    similarity: float | None  # cosine similarity to the question, for vector-leg hits


@dataclass(frozen=True)
class HybridRows:
    candidates: list[Candidate]
    vector_candidates: int
    keyword_candidates: int


def _visible_sql(embedding_model: EmbeddingModel) -> str:
    """The condition on ``c`` (kb_chunk) joined to ``d`` (its document) for chunks the asker may
    see, of one model; its one parameter is the audiences array. Retired and superseded pages
    are never retrieved: a successor speaks for them."""
    return (
        "d.status = 'published' AND d.superseded_by_id IS NULL "
        f"AND d.audience = ANY(%s::text[]) AND c.embedding_model_id = {int(embedding_model.pk)}"
    )


def _tsquery_sql(count: int, *, function: str = "plainto_tsquery") -> str:
    """``plainto_tsquery(%s) || ...`` for ``count`` bound terms; NULL when there are none."""
    if not count:
        return "NULL::tsquery"
    return " || ".join([f"{function}('english', %s)"] * count)


def hybrid_search(
    *,
    embedding_model: EmbeddingModel,
    query_vector: Sequence[float] | None,
    keywords: KeywordQuery | None,
    audiences: Sequence[str],
    leg_depth: int = 40,
    limit: int = 20,
    weights: FusionWeights = FusionWeights(),
) -> HybridRows:
    """Run the legs that have input (a vector, keyword terms) and fuse them in one statement."""
    use_vector = query_vector is not None
    use_keyword = keywords is not None and not keywords.is_empty
    keyword_weight = 0.0
    if use_keyword:
        assert keywords is not None
        keyword_weight = weights.keyword_weight(keywords, vector_leg=use_vector)
        # A leg with no say in the fusion is not run: at 100k chunks ranking the matches of a
        # plain question's common words cost ~180 ms of a 4 ms statement.
        use_keyword = keyword_weight > 0
    if not use_vector and not use_keyword:
        return HybridRows(candidates=[], vector_candidates=0, keyword_candidates=0)

    dims = int(embedding_model.dimensions)
    params: list[object] = []
    ctes: list[str] = []
    visible = _visible_sql(embedding_model)

    if use_vector:
        vector_text = vector_literal(query_vector)
        ctes.append(
            f"""vector_hits AS (
                SELECT c.id, c.embedding::vector({dims}) <=> %s::vector({dims}) AS distance
                FROM kb_chunk c JOIN kb_document d ON d.id = c.document_id
                WHERE {visible}
                ORDER BY c.embedding::vector({dims}) <=> %s::vector({dims})
                LIMIT {int(leg_depth)}
            ),
            vector_leg AS (
                SELECT id, distance, row_number() OVER (ORDER BY distance, id) AS rank
                FROM vector_hits
            )"""
        )
        params += [vector_text, list(audiences), vector_text]
    else:
        ctes.append(
            "vector_leg AS (SELECT NULL::bigint AS id, NULL::float8 AS distance, "
            "NULL::bigint AS rank WHERE false)"
        )

    if use_keyword:
        any_terms = _tsquery_sql(len(keywords.terms))
        # Beside the vector leg, the keyword leg speaks for the pasted identifiers: candidates
        # must contain one (rare terms, so the GIN index stays selective), ranked by all terms.
        phrases = keywords.identifier_phrases
        match = "q.identifiers" if use_vector and phrases else "q.any_terms"
        identifier_terms = _tsquery_sql(len(phrases), function="phraseto_tsquery")
        ctes.append(
            f"""keyword_query AS (
                SELECT ({any_terms}) AS any_terms, ({identifier_terms}) AS identifiers
            ),
            keyword_hits AS (
                SELECT c.id,
                       ts_rank_cd(c.tsv, q.any_terms, 1)
                       + CASE WHEN q.identifiers IS NOT NULL AND c.tsv @@ q.identifiers
                              THEN %s ELSE 0 END AS score
                FROM kb_chunk c JOIN kb_document d ON d.id = c.document_id, keyword_query q
                WHERE {visible} AND c.tsv @@ {match}
                ORDER BY score DESC, c.id
                LIMIT {int(leg_depth)}
            ),
            keyword_leg AS (
                SELECT id, row_number() OVER (ORDER BY score DESC, id) AS rank FROM keyword_hits
            )"""
        )
        params += [*keywords.terms, *phrases, weights.identifier_bonus]
        params += [list(audiences)]
    else:
        ctes.append("keyword_leg AS (SELECT NULL::bigint AS id, NULL::bigint AS rank WHERE false)")

    sql = f"""
        WITH {", ".join(ctes)},
        fused AS (
            SELECT COALESCE(v.id, k.id) AS id, v.rank AS vector_rank, k.rank AS keyword_rank,
                   1 - v.distance AS similarity,
                   COALESCE(%s / ({RRF_K} + v.rank), 0) + COALESCE(%s / ({RRF_K} + k.rank), 0)
                       AS fused_score
            FROM vector_leg v FULL OUTER JOIN keyword_leg k ON k.id = v.id
        )
        SELECT c.id, c.document_id, d.path, d.title, c.heading_path, c.text, c.char_start,
               c.char_end, d.updated_on, f.vector_rank, f.keyword_rank, f.fused_score,
               f.similarity, (SELECT count(*) FROM vector_leg), (SELECT count(*) FROM keyword_leg)
        FROM fused f
        JOIN kb_chunk c ON c.id = f.id
        JOIN kb_document d ON d.id = c.document_id
        ORDER BY f.fused_score DESC, f.vector_rank NULLS LAST, f.keyword_rank NULLS LAST
        LIMIT {int(limit)}
    """
    params += [float(weights.vector), float(keyword_weight)]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    candidates = [
        Candidate(
            chunk_id=row[0],
            document_id=row[1],
            path=row[2],
            title=row[3],
            heading_path=row[4],
            text=row[5],
            char_start=row[6],
            char_end=row[7],
            updated_on=row[8],
            vector_rank=row[9],
            keyword_rank=row[10],
            fused_score=float(row[11]),
            similarity=None if row[12] is None else float(row[12]),
        )
        for row in rows
    ]
    vector_count = rows[0][13] if rows else 0
    keyword_count = rows[0][14] if rows else 0
    return HybridRows(
        candidates=candidates, vector_candidates=vector_count, keyword_candidates=keyword_count
    )


def unknown_names(
    *, names: Sequence[str], embedding_model: EmbeddingModel, audiences: Sequence[str]
) -> list[str]:
    """The names no page the asker may see mentions, in one statement (a GIN lookup each).
    A name made only of stop words says nothing and is never "unknown"."""
    if not names:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT n.name FROM unnest(%s::text[]) WITH ORDINALITY AS n (name, position)
            WHERE numnode(plainto_tsquery('english', n.name)) > 0
              AND NOT EXISTS (
                  SELECT 1 FROM kb_chunk c JOIN kb_document d ON d.id = c.document_id
                  WHERE {_visible_sql(embedding_model)}
                    AND c.tsv @@ plainto_tsquery('english', n.name)
              )
            ORDER BY n.position
            """,
            [list(names), list(audiences)],
        )
        return [row[0] for row in cursor.fetchall()]
