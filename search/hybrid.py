"""The hybrid retrieval statement: a vector leg and a BM25 keyword leg as CTEs, one query.

The vector leg takes the nearest chunks by cosine distance; the keyword leg the best chunks by
BM25 (IDF and length normalisation from per-model statistics that triggers keep, see
``kb.models.IndexStatistic``; ``search.terms`` looks the question's terms up before the
statement runs), with the GIN index selecting its candidates. Every candidate of either leg is
then scored by both; ``search.services.hybrid_search`` fuses the scores (``search.fusion``).

Both legs filter to the pages the asker may see (``kb.visibility``) and to one embedding model
inside the SQL, so nothing the asker may not see is ever fetched. The vector leg orders by
``embedding::vector(d) <=> query`` with ``embedding_model_id`` as a literal, the exact shape of
that model's partial HNSW index; pgvector's iterative scan (set per connection, see
``search.apps``) keeps scanning when the filters reject index candidates. Each leg lists its
LEG_DEPTH best chunks and the best chunk of its LEG_PAGES best pages, so one long page cannot
fill it alone.

The statement is built by one small function per part (each leg's CTEs, the page topic, the
final select), each returning its SQL and the named parameters it binds; a value bound in
several places (the question's vector, the audiences) is one parameter, sent once.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Self

import psycopg
from django.conf import settings

from kb.models import EmbeddingModel, vector_literal
from search.sql import CHUNKS, DOCUMENTS, PAGE_VECTORS, reading_connection, visible_chunks_sql
from search.terms import KeywordTerms

# BM25's free parameters, at the values Lucene and most reference implementations ship with.
BM25_K1 = 1.2
BM25_B = 0.75
# No more than this many chunks are ever scored by the keyword leg's own selection (a bound on
# the worst case, not a ranking; ``search.terms.KEYWORD_CANDIDATE_BUDGET`` says which).
KEYWORD_CANDIDATE_CAP = 500
# Each leg lists its LEG_DEPTH best chunks and, beside them, the best chunk of each of
# its LEG_PAGES best pages, so its list spans 10 pages when the corpus has them: a long page
# (an upgrade note, a command reference) otherwise filled a leg alone (Argo CD: all 40 nearest
# chunks from one page) and the page ranking was 5 pages deep. The vector leg reads
# LEG_READ_FACTOR times its depth from the HNSW index to find those pages; 80 stays under
# ``hnsw.ef_search`` (100), one pass of the graph.
LEG_DEPTH = 40
LEG_PAGES = 10
LEG_READ_FACTOR = 2
# Fused candidates one search returns: what the reranker reorders, so the most hits any caller
# can get (retrieve's default, the debug endpoint's largest limit, the benchmarks).
CANDIDATES = 20
# psycopg prepares a statement once it has run this many times on a connection; no statement
# does, so only a cursor that asks for preparation (``_PreparedCursor``) gets it.
PREPARE_ONLY_WHEN_ASKED = 2**31 - 1

# What the hybrid statement binds, by name: numbers, text, and arrays of either.
SqlValue = float | str | list[str] | list[float] | None
SqlParams = dict[str, SqlValue]


@dataclass(frozen=True)
class HybridQuery:
    """What the statement is built from: the legs that have input, and whom it is for."""

    embedding_model: EmbeddingModel
    audiences: tuple[str, ...]
    query_vector: Sequence[float] | None  # None: no vector leg
    terms: KeywordTerms | None  # None or empty: no keyword leg
    leg_depth: int = LEG_DEPTH
    identifier_bonus: float = 0.0  # times the rarest term's IDF (FusionWeights)
    page_topic: bool = False  # score each candidate page's centroid (when both legs run)
    # Score the candidates by the question's phrases when its best keyword hit holds this share
    # of its IDF, as a question quoting the docs does (FusionWeights); None: never.
    quoted_coverage: float | None = None

    @property
    def uses_vector(self) -> bool:
        return self.query_vector is not None

    @property
    def uses_keyword(self) -> bool:
        return self.terms is not None and not self.terms.is_empty

    @property
    def uses_page_topic(self) -> bool:
        return self.page_topic and self.uses_vector and self.uses_keyword

    @functools.cached_property
    def vector_text(self) -> str:
        """The question's vector as pgvector text, bound once however many places read it."""
        assert self.query_vector is not None
        return vector_literal(self.query_vector)


@dataclass(frozen=True)
class CandidateRow:
    """One candidate chunk as the statement returns it (its columns are named after these
    fields), with each leg's evidence: None where a leg did not run or did not rank it."""

    chunk_id: int
    document_id: int
    path: str
    title: str
    heading_path: str
    text: str
    char_start: int
    char_end: int
    ordinal: int  # its place among its page's chunks
    updated_on: datetime.date | None
    vector_rank: int | None
    keyword_rank: int | None
    similarity: float | None
    keyword_score: float | None
    page_topic: float | None
    token_count: int  # the chunk's length in the model's word pieces
    page_chunks: int | None  # how many chunks its page has (kept with the page's centroid)
    phrase_share: float | None  # of a quoting question's phrases' weight, what the chunk holds


@dataclass(frozen=True)
class HybridCandidates:
    rows: list[CandidateRow]  # in the statement's order, not ranked: fusion ranks them
    vector_candidates: int
    keyword_candidates: int
    # The most of the question's IDF that one keyword hit holds (see keyword coverage in
    # ``search.results.HybridRows``); None without keyword hits.
    best_matched_idf: float | None


CANDIDATE_COLUMNS = tuple(field.name for field in dataclasses.fields(CandidateRow))


def hybrid_candidates(query: HybridQuery) -> HybridCandidates:
    """Run the legs that have input in one statement and score every candidate by both."""
    sql, params = hybrid_statement(query)
    rows = _fetch_prepared(sql, params)
    first = rows[0] if rows else {}
    return HybridCandidates(
        rows=[CandidateRow(**{name: row[name] for name in CANDIDATE_COLUMNS}) for row in rows],
        vector_candidates=first.get("vector_candidates", 0),
        keyword_candidates=first.get("keyword_candidates", 0),
        best_matched_idf=first.get("best_matched_idf"),
    )


def hybrid_statement(query: HybridQuery) -> tuple[str, SqlParams]:
    """The statement and its named parameters, for a query with at least one leg."""
    vector_sql, vector_params = _vector_leg(query) if query.uses_vector else (NO_VECTOR_LEG, {})
    keyword_sql, keyword_params = (
        _keyword_leg(query) if query.uses_keyword else (NO_KEYWORD_LEG, {})
    )
    topic_sql, topic_params = _page_topic(query) if query.uses_page_topic else ("", {})
    select_sql, select_params = _candidates_select(query)
    sql = f"""
        WITH {vector_sql},
        {keyword_sql},
        {POOL}{topic_sql}
        {select_sql}
    """
    return sql, {**vector_params, **keyword_params, **topic_params, **select_params}


NO_VECTOR_LEG = "vector_leg AS (SELECT NULL::bigint AS id, NULL::bigint AS rank WHERE false)"
NO_KEYWORD_LEG = (
    "keyword_leg AS (SELECT NULL::bigint AS id, NULL::float8 AS score, "
    "NULL::bigint AS rank, NULL::float8 AS matched_idf WHERE false)"
)
POOL = "pool AS (SELECT id FROM vector_leg UNION SELECT id FROM keyword_leg)"


def _vector_leg(query: HybridQuery) -> tuple[str, SqlParams]:
    """The nearest chunks by the model's HNSW index, spread over pages, ranked by distance."""
    dims = int(query.embedding_model.dimensions)
    distance = f"c.embedding::vector({dims}) <=> %(vector)s::vector({dims})"
    spread = _page_spread_sql("vector_nearest", "distance", best_first="ASC", depth=query.leg_depth)
    sql = f"""vector_nearest AS (
                SELECT c.id, c.document_id, {distance} AS distance
                FROM {CHUNKS} c JOIN {DOCUMENTS} d ON d.id = c.document_id
                WHERE {visible_chunks_sql(query.embedding_model)}
                ORDER BY {distance}
                LIMIT {int(query.leg_depth) * LEG_READ_FACTOR}
            ),
            vector_hits AS ({spread}
            ),
            vector_leg AS (
                SELECT id, row_number() OVER (ORDER BY distance, id) AS rank FROM vector_hits
            )"""
    return sql, {"vector": query.vector_text, "audiences": list(query.audiences)}


def _keyword_leg(query: HybridQuery) -> tuple[str, SqlParams]:
    """The chunks holding the question's selecting terms, scored by BM25, spread over pages."""
    terms = query.terms
    assert terms is not None
    params_sql, params = _keyword_params(query)
    selected = "false"
    if terms.selecting:
        selected = (
            f"{visible_chunks_sql(query.embedding_model)} AND c.tsv @@ %(selecting)s::tsquery"
        )
        params |= {"audiences": list(query.audiences), "selecting": _candidate_tsquery(terms)}
    spread = _page_spread_sql(
        "keyword_scored", "score", best_first="DESC", depth=query.leg_depth, extra=("matched_idf",)
    )
    sql = f"""{params_sql},
            keyword_matches AS MATERIALIZED (
                SELECT c.id, c.document_id, {_keyword_features_sql("c", terms)}
                FROM {CHUNKS} c JOIN {DOCUMENTS} d ON d.id = c.document_id, keyword_params kp
                WHERE {selected}
                LIMIT {KEYWORD_CANDIDATE_CAP}
            ),
            keyword_scored AS (
                SELECT m.id, m.document_id, {_bm25_sql("m", terms)} AS score,
                       {_matched_idf_sql("m", terms)} AS matched_idf
                FROM keyword_matches m, keyword_params kp
            ),
            keyword_hits AS ({spread}
            ),
            keyword_leg AS (
                SELECT id, score, matched_idf,
                       row_number() OVER (ORDER BY score DESC, id) AS rank
                FROM keyword_hits
            )"""
    return sql, params


def _keyword_params(query: HybridQuery) -> tuple[str, SqlParams]:
    """The one-row CTE ``kp`` that the BM25 expressions read: a tsquery per term, the terms'
    IDFs, the average chunk length, the identifier phrases and their bonus, the question's
    phrases with their weights."""
    terms = query.terms
    assert terms is not None
    phrases = {f"phrase_{n}": phrase for n, phrase in enumerate(terms.identifier_phrases, 1)}
    identifiers = (
        " || ".join(f"phraseto_tsquery('english', %({name})s)" for name in phrases)
        or "NULL::tsquery"
    )
    sql = f"""keyword_params AS (
                SELECT %(term_queries)s::tsquery[] AS queries, %(idfs)s::float8[] AS idfs,
                       %(average_length)s::float8 AS average_length,
                       ({identifiers}) AS identifiers,
                       %(bonus)s::float8 AS bonus,
                       %(phrases)s::tsquery[] AS phrases,
                       %(phrase_weights)s::float8[] AS phrase_weights,
                       %(phrase_total)s::float8 AS phrase_total,
                       %(phrase_floor)s::float8 AS phrase_floor
            )"""
    return sql, {
        "term_queries": [tsquery_text([lexeme]) for lexeme in terms.lexemes],
        "idfs": list(terms.idfs),
        "average_length": terms.average_length,
        **phrases,
        "bonus": query.identifier_bonus * max(terms.idfs),
        "phrases": [
            f"{tsquery_text([p.first])} <{p.distance}> {tsquery_text([p.second])}"
            for p in terms.phrases
        ],
        "phrase_weights": [p.weight for p in terms.phrases],
        "phrase_total": sum(p.weight for p in terms.phrases),
        "phrase_floor": (query.quoted_coverage or 0.0) * terms.question_idf,
    }


def _page_topic(query: HybridQuery) -> tuple[str, SqlParams]:
    """Each candidate page's centroid against the question (FusionWeights.page_topic): the
    mean of all the page's chunk vectors, kept per page by triggers (kb.models.PageVector),
    one row per candidate page. Averaging the chunks here instead read ~10 vectors per page,
    ~5 ms of a 13 ms statement at 100k chunks. Each candidate page's row is looked up by the
    (model, page) key (the LIMIT keeps the lookup a loop the planner cannot turn around): as a
    semi-join the generic plan could read every page vector of the model and probe the pool
    for each, 18 ms of a 31 ms statement at 800 pages."""
    dims = int(query.embedding_model.dimensions)
    sql = f""",
            page_topic AS (
                SELECT v.document_id, v.chunk_count,
                       1 - (v.embedding::vector({dims}) <=> %(vector)s::vector({dims})) AS topic
                FROM (SELECT DISTINCT pc.document_id FROM pool p JOIN {CHUNKS} pc ON pc.id = p.id)
                     AS candidate
                CROSS JOIN LATERAL (
                    SELECT pv.document_id, pv.chunk_count, pv.embedding FROM {PAGE_VECTORS} pv
                    WHERE pv.embedding_model_id = {int(query.embedding_model.pk)}
                      AND pv.document_id = candidate.document_id
                    LIMIT 1
                ) AS v
            )"""
    return sql, {"vector": query.vector_text}


def _candidates_select(query: HybridQuery) -> tuple[str, SqlParams]:
    """Every candidate of either leg with both legs' scores and ranks (``CandidateRow``), and
    each leg's count. A vector-leg candidate the keyword leg did not rank is scored by BM25
    too (0 when it holds no term); OFFSET 0 keeps the frequencies computed once per row."""
    dims = int(query.embedding_model.dimensions)
    params: SqlParams = {}
    similarity, keyword_score, phrase_share, joins = "NULL::float8", "NULL::float8", "NULL", ""
    if query.uses_vector:
        similarity = f"1 - (c.embedding::vector({dims}) <=> %(vector)s::vector({dims}))"
        params["vector"] = query.vector_text
    topic = "t.topic" if query.uses_page_topic else "NULL::float8"
    page_chunks = "t.chunk_count" if query.uses_page_topic else "NULL::integer"
    if query.uses_page_topic:
        joins += " LEFT JOIN page_topic t ON t.document_id = c.document_id"
    if query.uses_keyword:
        assert query.terms is not None
        keyword_score = f"coalesce(k.score, {_bm25_sql('f', query.terms)})"
        if query.quoted_coverage is not None and query.terms.phrases:
            phrase_share = (
                "CASE WHEN (SELECT max(matched_idf) FROM keyword_leg) >= kp.phrase_floor "
                f"THEN {_phrase_share_sql('c', query.terms)} END"
            )
        joins += (
            f", keyword_params kp CROSS JOIN LATERAL "
            f"(SELECT {_keyword_features_sql('c', query.terms)} OFFSET 0) f"
        )
    sql = f"""SELECT c.id AS chunk_id, c.document_id, d.path, d.title, c.heading_path, c.text,
               c.char_start, c.char_end, c.ordinal, d.updated_on, v.rank AS vector_rank,
               k.rank AS keyword_rank, {similarity} AS similarity,
               {keyword_score} AS keyword_score,
               (SELECT count(*) FROM vector_leg) AS vector_candidates,
               (SELECT count(*) FROM keyword_leg) AS keyword_candidates,
               (SELECT max(matched_idf) FROM keyword_leg) AS best_matched_idf,
               {topic} AS page_topic, c.token_count, {page_chunks} AS page_chunks,
               {phrase_share}::float8 AS phrase_share
        FROM pool p
        JOIN {CHUNKS} c ON c.id = p.id
        JOIN {DOCUMENTS} d ON d.id = c.document_id
        LEFT JOIN vector_leg v ON v.id = p.id
        LEFT JOIN keyword_leg k ON k.id = p.id{joins}"""
    return sql, params


def tsquery_text(lexemes: Sequence[str], *, pairs: bool = False) -> str:
    """Lexemes ORed as tsquery input (or, with ``pairs``, every two of them ANDed, then ORed):
    each quoted, so none is read as an operator."""
    quoted = ["'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'" for lexeme in lexemes]
    if pairs and len(quoted) > 1:
        return " | ".join(f"({a} & {b})" for i, a in enumerate(quoted) for b in quoted[i + 1 :])
    return " | ".join(quoted)


def _term_frequencies_sql(chunk: str, terms: KeywordTerms) -> str:
    """The frequency of each of the question's terms in chunk ``chunk``, as an array (the i-th
    is ``kp.queries[i]``'s): ``ts_rank_cd`` with every weight 1 for one lexeme counts its
    positions; it is only called for a term the chunk holds (``@@``, a binary search in the
    tsvector, is cheaper than ``ts_rank_cd`` on a term that is absent). Computed once per
    candidate and read from the array by the score and the matched IDF (written inline, each
    frequency was computed twice per score); an SQL subquery unnesting the tsvector cost twice
    as much as these C functions."""
    frequencies = ", ".join(
        f"CASE WHEN {chunk}.tsv @@ kp.queries[{number}] "
        f"THEN ts_rank_cd('{{1,1,1,1}}', {chunk}.tsv, kp.queries[{number}], 0) ELSE 0 END"
        for number in range(1, len(terms.lexemes) + 1)
    )
    return f"ARRAY[{frequencies}]::float8[]"


def _bm25_sql(row: str, terms: KeywordTerms) -> str:
    """BM25 of a row holding ``tf`` (``_term_frequencies_sql``), ``term_count`` and
    ``identified`` (it matches the question's identifier phrases). Lucene's form,
    ``idf * tf / (tf + k1 * (1 - b + b * length / average))`` (without the constant ``k1 + 1``),
    with ``term_count`` as the length; a term the chunk lacks adds 0 (``tf`` is 0 and the
    denominator is at least ``k1 * (1 - b)``). ``kp`` is the ``keyword_params`` row."""
    norm = f"{BM25_K1} * (1 - {BM25_B} + {BM25_B} * {row}.term_count / kp.average_length)"
    parts = [
        f"kp.idfs[{number}] * {row}.tf[{number}] / ({row}.tf[{number}] + {norm})"
        for number in range(1, len(terms.lexemes) + 1)
    ]
    bonus = f"CASE WHEN {row}.identified THEN kp.bonus ELSE 0 END"
    return f"({' + '.join(parts)} + {bonus})"


def _matched_idf_sql(row: str, terms: KeywordTerms) -> str:
    """The IDF of the question's terms that the row's chunk holds (see ``keyword_coverage``)."""
    parts = [
        f"CASE WHEN {row}.tf[{number}] > 0 THEN kp.idfs[{number}] ELSE 0 END"
        for number in range(1, len(terms.lexemes) + 1)
    ]
    return f"({' + '.join(parts)})"


def _phrase_share_sql(chunk: str, terms: KeywordTerms) -> str:
    """The share of the question's phrases' weight (``KeywordTerms.phrases``) that chunk
    ``chunk`` holds as the question writes them: each phrase a tsquery ``a <n> b`` (the two
    lexemes ``n`` positions apart), checked on the candidates alone, and only for a question
    that quotes the docs (``HybridQuery.quoted_coverage``): checked for every question, the
    phrases took hybrid SQL's median at 100k chunks from 12.5 to 14.9 ms."""
    held = " + ".join(
        f"CASE WHEN {chunk}.tsv @@ kp.phrases[{number}] THEN kp.phrase_weights[{number}] ELSE 0 END"
        for number in range(1, len(terms.phrases) + 1)
    )
    return f"(({held}) / kp.phrase_total)"


def _keyword_features_sql(chunk: str, terms: KeywordTerms) -> str:
    """What ``_bm25_sql`` reads of chunk ``chunk``, as select-list items."""
    return (
        f"{_term_frequencies_sql(chunk, terms)} AS tf, {chunk}.term_count, "
        f"coalesce({chunk}.tsv @@ kp.identifiers, false) AS identified"
    )


def _page_spread_sql(
    source: str, score: str, *, best_first: str, depth: int, extra: tuple[str, ...] = ()
) -> str:
    """A leg's list from ``source`` (rows of ``id``, ``document_id``, ``score`` and ``extra``
    columns; ``best_first`` is "ASC" for a distance, "DESC" for a score): the ``depth`` best
    chunks, and the best chunk of each of the LEG_PAGES best pages that those leave out, so the
    list spans LEG_PAGES pages whenever ``source`` holds them."""
    columns = ", ".join((score, *extra))
    order = f"{score} {best_first}"
    return f"""
        SELECT id, {columns} FROM (
            SELECT id, {columns}, position, CASE WHEN nth = 1 THEN
                       row_number() OVER (PARTITION BY nth = 1 ORDER BY {order}, id) END AS page
            FROM (
                SELECT id, {columns},
                       row_number() OVER (ORDER BY {order}, id) AS position,
                       row_number() OVER (PARTITION BY document_id ORDER BY {order}, id) AS nth
                FROM {source}
            ) ordered
        ) ranked
        WHERE position <= {int(depth)} OR page <= {LEG_PAGES}"""


class _PreparedCursor(psycopg.Cursor):
    """A server-binding cursor that prepares every statement it runs."""

    # One signature of psycopg's two overloads: the hybrid SQL is a string, never a Template.
    def execute(  # type: ignore[override]
        self,
        query: psycopg.abc.QueryNoTemplate,
        params: psycopg.abc.Params | None = None,
        *,
        prepare: bool | None = None,
        binary: bool | None = None,
    ) -> Self:
        return super().execute(query, params, prepare=True, binary=binary)


def _fetch_prepared(sql: str, params: SqlParams) -> list[dict[str, Any]]:
    """Run the hybrid statement as a prepared statement with a generic plan (``search.apps``
    sets ``plan_cache_mode`` per connection), through Django's cursor wrapper so execute
    wrappers and query logging still see it.

    The statement's text depends only on the question's shape (how many terms and identifier
    phrases, which legs run): every value, the IDFs included, is a parameter. Planning it
    cost ~2 ms of ~11 ms of server time per question at 100k chunks, and a generic plan is the
    one we want anyway: HNSW for the vector leg and GIN for the keyword leg whatever the
    words (a custom plan for very common words walked rows under the candidate LIMIT
    instead). ``SEARCH_PREPARED_STATEMENTS=false`` sends it unprepared, for a connection
    pooler that cannot keep prepared statements.
    """
    connection = reading_connection()
    if not settings.SEARCH_PREPARED_STATEMENTS:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return _named_rows(cursor)
    connection.ensure_connection()
    raw = connection.connection
    if raw.prepare_threshold is None:
        # Django disables psycopg's prepared statements (None); a threshold no query reaches
        # enables them for cursors that ask, like this one, and no other.
        raw.prepare_threshold = PREPARE_ONLY_WHEN_ASKED
    prepared = _PreparedCursor(raw)
    # django-stubs annotate these as taking a CursorWrapper; they wrap the driver's cursor.
    wrapped = (
        connection.make_debug_cursor(prepared)  # type: ignore[arg-type]
        if connection.queries_logged
        else connection.make_cursor(prepared)  # type: ignore[arg-type]
    )
    with wrapped:
        wrapped.execute(sql, params)
        return _named_rows(wrapped)


def _named_rows(cursor: Any) -> list[dict[str, Any]]:
    """The fetched rows as dicts by column name (any cursor: Django's wrapper or psycopg's)."""
    names = [column.name for column in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _candidate_tsquery(terms: KeywordTerms) -> str:
    return tsquery_text(terms.selecting, pairs=terms.pairs)
