"""The hybrid retrieval SQL: a vector leg and a BM25 keyword leg as CTEs, one query.

The vector leg takes the nearest chunks by cosine distance; the keyword leg the best chunks by
BM25 (IDF and length normalisation from per-model statistics that triggers keep, see
``kb.models.IndexStatistic``), with the GIN index selecting its candidates. Every candidate of
either leg is then scored by both, and the scores are fused in Python (``fuse``).

Both legs filter to published documents of the asker's audiences and to one embedding model
inside the SQL, so nothing the asker may not see is ever fetched. The vector leg orders by
``embedding::vector(d) <=> query`` with ``embedding_model_id`` as a literal, the exact shape of
that model's partial HNSW index; pgvector's iterative scan (set per connection, see
``search.apps``) keeps scanning when the filters reject index candidates. Each leg lists its
LEG_DEPTH best chunks and the best chunk of its LEG_PAGES best pages, so one long page cannot
fill it alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Self

import psycopg
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper

from kb.models import EmbeddingModel, vector_literal
from kb.runtime.db_router import read_alias
from search.fusion import FusionWeights, fuse
from search.keywords import KeywordQuery
from search.results import Hit

# BM25's free parameters, at the values Lucene and most reference implementations ship with.
BM25_K1 = 1.2
BM25_B = 0.75
# The keyword leg scores the chunks that hold the question's rarest terms: lexemes are taken
# rarest first while the chunks holding them add up to at most this many. BM25 is dominated by
# rare terms, and scoring costs ~10 microseconds per candidate: at 100k chunks ranking every
# chunk holding "delete" (8% of them) cost 166 ms. When even the rarest term is more common
# than that, a candidate must hold two of the three rarest terms; and no more than
# KEYWORD_CANDIDATE_CAP chunks are ever scored (a bound on the worst case, not a ranking).
# 500 and 1,000 gave the same nDCG@10 on every eval set (4-7k chunks each); at 100k synthetic
# chunks 500 took hybrid SQL from p50 32 / p95 55 ms to 24 / 33 ms.
KEYWORD_CANDIDATE_BUDGET = 500
KEYWORD_CANDIDATE_CAP = 500
# What the GIN index may read to find those candidates: the posting lists of the selected terms
# (in "pairs" mode, of the three it intersects). The LIMIT above bounds the rows scored, not the
# bitmap built first: at 1M chunks "customers pay invoices" read 208k matches (42 ms) to keep an
# arbitrary 500 of them. Past this many postings the terms are so common that the leg selects no
# candidates of its own (the vector leg's are still scored by BM25). At 0.2 us per posting it
# bounds that scan near 10 ms; a corpus under ~16k chunks never reaches it (three terms cannot
# hold more postings than three times the chunks), so every eval set ranks as it did.
KEYWORD_SELECTION_POSTINGS = 50_000
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

# What the hybrid statement binds: numbers, text, and arrays of either.
SqlValue = float | str | list[str] | list[float] | None


@dataclass(frozen=True)
class HybridRows:
    candidates: list[Hit]  # fused order, not yet reranked
    vector_candidates: int
    keyword_candidates: int
    # The share of the question's IDF that the best-covering keyword hit holds: near 1 when a
    # passage has every rare word of the question (it quotes the page), low for a paraphrase;
    # words no chunk holds count against it.
    keyword_coverage: float | None = None
    identifier_phrases: tuple[str, ...] = ()  # the codes boosted, named numbers included
    # The question's lexemes that some chunk holds, with their IDF (``TermWeights``): the
    # answerer weighs the question's words by them.
    term_idfs: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class TermWeights:
    """The question's index terms with their BM25 inverse document frequencies."""

    lexemes: tuple[str, ...]
    idfs: tuple[float, ...]
    selecting: tuple[str, ...]  # the lexemes whose matches are the keyword leg's candidates
    # (none when even the rarest are too common to look up: see KEYWORD_SELECTION_POSTINGS)
    average_length: float
    pairs: bool = False  # candidates must hold two of ``selecting`` (all its terms are common)
    question_idf: float = 0.0  # of every lexeme of the question, those no chunk holds included

    @property
    def is_empty(self) -> bool:
        return not self.lexemes


def term_weights(*, embedding_model: EmbeddingModel, keywords: KeywordQuery) -> TermWeights:
    """Look up the question's lexemes (as the index parses them) in the model's statistics.

    IDF is Lucene's ``ln(1 + (N - df + 0.5) / (df + 0.5))``, always positive. A lexeme no chunk
    holds can match nothing and is dropped from the terms, but still counts (as the rarest of
    all) in ``question_idf``: a question full of words the docs never use does not quote them.
    """
    with _reading().cursor() as cursor:
        cursor.execute(
            """
            SELECT q.lexeme, coalesce(t.chunk_count, 0), s.chunk_count, s.term_count
            FROM (SELECT DISTINCT lexeme FROM unnest(to_tsvector('english', %s))) q
            CROSS JOIN kb_index_stat s
            LEFT JOIN kb_term_stat t
                ON t.embedding_model_id = s.embedding_model_id AND t.lexeme = q.lexeme
            WHERE s.embedding_model_id = %s AND s.chunk_count > 0
            ORDER BY q.lexeme
            """,
            [" ".join(keywords.terms), embedding_model.pk],
        )
        every = cursor.fetchall()
    rows = [row for row in every if row[1] > 0]
    if not rows:
        return TermWeights(lexemes=(), idfs=(), selecting=(), average_length=1.0)
    chunks, terms = rows[0][2], rows[0][3]

    def idf(df: int) -> float:
        return math.log(1 + (chunks - df + 0.5) / (df + 0.5))

    idfs = tuple(idf(df) for _, df, _, _ in rows)
    selecting: list[str] = []
    holding = 0
    rarest_first = sorted(rows, key=lambda row: (row[1], row[0]))
    for lexeme, df, _, _ in rarest_first:
        if selecting and holding + df > KEYWORD_CANDIDATE_BUDGET:
            break
        selecting.append(lexeme)
        holding += df
    pairs = holding > KEYWORD_CANDIDATE_BUDGET and len(rarest_first) > 1
    if pairs:
        selecting = [row[0] for row in rarest_first[:3]]
        holding = sum(row[1] for row in rarest_first[:3])
    if holding > KEYWORD_SELECTION_POSTINGS:
        selecting, pairs = [], False
    return TermWeights(
        lexemes=tuple(row[0] for row in rows),
        idfs=idfs,
        selecting=tuple(selecting),
        pairs=pairs,
        average_length=max(terms / chunks, 1.0),
        question_idf=sum(idf(df) for _, df, _, _ in every),
    )


def named_numbers(
    *, embedding_model: EmbeddingModel, numbers: Sequence[str], audiences: Sequence[str]
) -> frozenset[str]:
    """Which of ``numbers`` (bare numbers, ``is_bare_number``) a heading of a page the asker
    may see names: where the help center uses a number as a code (``## 404: Not found``).

    Heading words are weight A in ``tsv``, so this is a GIN lookup of ``'404':A`` (a constant
    tsquery, so the planner can estimate it and use the index), made only for a question with
    a bare number and always current: a page published or retired counts at once.
    """
    if not numbers:
        return frozenset()
    with _reading().cursor() as cursor:
        cursor.execute(
            f"""
            SELECT DISTINCT u.lexeme
            FROM kb_chunk c JOIN kb_document d ON d.id = c.document_id, unnest(c.tsv) u
            WHERE {visible_chunks_sql(embedding_model)} AND c.tsv @@ %s::tsquery
              AND u.lexeme = ANY(%s::text[]) AND 'A' = ANY(u.weights)
            """,
            [
                list(audiences),
                " | ".join(f"'{number}':A" for number in numbers if number.isdigit()),
                list(numbers),
            ],
        )
        return frozenset(row[0] for row in cursor.fetchall())


def tsquery_text(lexemes: Sequence[str], *, pairs: bool = False) -> str:
    """Lexemes ORed as tsquery input (or, with ``pairs``, every two of them ANDed, then ORed):
    each quoted, so none is read as an operator."""
    quoted = ["'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'" for lexeme in lexemes]
    if pairs and len(quoted) > 1:
        return " | ".join(f"({a} & {b})" for i, a in enumerate(quoted) for b in quoted[i + 1 :])
    return " | ".join(quoted)


def _term_frequencies_sql(chunk: str, terms: TermWeights) -> str:
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


def _bm25_sql(row: str, terms: TermWeights) -> str:
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


def _matched_idf_sql(row: str, terms: TermWeights) -> str:
    """The IDF of the question's terms that the row's chunk holds (see ``keyword_coverage``)."""
    parts = [
        f"CASE WHEN {row}.tf[{number}] > 0 THEN kp.idfs[{number}] ELSE 0 END"
        for number in range(1, len(terms.lexemes) + 1)
    ]
    return f"({' + '.join(parts)})"


def _keyword_features_sql(chunk: str, terms: TermWeights) -> str:
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


def visible_chunks_sql(embedding_model: EmbeddingModel) -> str:
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
    leg_depth: int = LEG_DEPTH,
    limit: int = CANDIDATES,
    weights: FusionWeights = FusionWeights(),
) -> HybridRows:
    """Run the legs that have input (a vector, keyword terms) in one statement, score every
    candidate by both legs, and fuse the scores (see ``FusionWeights``)."""
    use_vector = query_vector is not None
    terms = None
    if keywords is not None and not keywords.is_empty:
        terms = term_weights(embedding_model=embedding_model, keywords=keywords)
        named = named_numbers(
            embedding_model=embedding_model, numbers=keywords.numbers, audiences=audiences
        )
        keywords = keywords.with_named_numbers(named)
    use_keyword = terms is not None and not terms.is_empty
    idfs = dict(zip(terms.lexemes, terms.idfs, strict=True)) if terms is not None else {}
    if not use_vector and not use_keyword:
        return HybridRows(candidates=[], vector_candidates=0, keyword_candidates=0, term_idfs=idfs)

    dims = int(embedding_model.dimensions)
    params: list[SqlValue] = []
    ctes: list[str] = []
    visible = visible_chunks_sql(embedding_model)
    vector_text = vector_literal(query_vector) if query_vector is not None else None

    if use_vector:
        ctes.append(
            f"""vector_nearest AS (
                SELECT c.id, c.document_id,
                       c.embedding::vector({dims}) <=> %s::vector({dims}) AS distance
                FROM kb_chunk c JOIN kb_document d ON d.id = c.document_id
                WHERE {visible}
                ORDER BY c.embedding::vector({dims}) <=> %s::vector({dims})
                LIMIT {int(leg_depth) * LEG_READ_FACTOR}
            ),
            vector_hits AS (
                {_page_spread_sql("vector_nearest", "distance", best_first="ASC", depth=leg_depth)}
            ),
            vector_leg AS (
                SELECT id, row_number() OVER (ORDER BY distance, id) AS rank FROM vector_hits
            )"""
        )
        params += [vector_text, list(audiences), vector_text]
    else:
        ctes.append("vector_leg AS (SELECT NULL::bigint AS id, NULL::bigint AS rank WHERE false)")

    if use_keyword:
        assert terms is not None and keywords is not None
        phrases = keywords.identifier_phrases
        bonus = weights.identifier_bonus * max(terms.idfs)
        selected = f"{visible} AND c.tsv @@ %s::tsquery" if terms.selecting else "false"
        ctes.append(
            f"""keyword_params AS (
                SELECT %s::tsquery[] AS queries, %s::float8[] AS idfs,
                       %s::float8 AS average_length,
                       ({_tsquery_sql(len(phrases), function="phraseto_tsquery")}) AS identifiers,
                       %s::float8 AS bonus
            ),
            keyword_matches AS MATERIALIZED (
                SELECT c.id, c.document_id, {_keyword_features_sql("c", terms)}
                FROM kb_chunk c JOIN kb_document d ON d.id = c.document_id, keyword_params kp
                WHERE {selected}
                LIMIT {KEYWORD_CANDIDATE_CAP}
            ),
            keyword_scored AS (
                SELECT m.id, m.document_id, {_bm25_sql("m", terms)} AS score,
                       {_matched_idf_sql("m", terms)} AS matched_idf
                FROM keyword_matches m, keyword_params kp
            ),
            keyword_hits AS (
                {
                _page_spread_sql(
                    "keyword_scored",
                    "score",
                    best_first="DESC",
                    depth=leg_depth,
                    extra=("matched_idf",),
                )
            }
            ),
            keyword_leg AS (
                SELECT id, score, matched_idf,
                       row_number() OVER (ORDER BY score DESC, id) AS rank
                FROM keyword_hits
            )"""
        )
        params += [[tsquery_text([lexeme]) for lexeme in terms.lexemes], list(terms.idfs)]
        params += [terms.average_length, *phrases, bonus]
        if terms.selecting:
            params += [list(audiences), _candidate_tsquery(terms)]
        # A vector-leg candidate the keyword leg did not rank is scored by BM25 too (0 when
        # it holds no term); OFFSET 0 keeps the frequencies computed once per row.
        keyword_score = f"coalesce(k.score, {_bm25_sql('f', terms)})"
        keyword_from = (
            f", keyword_params kp CROSS JOIN LATERAL "
            f"(SELECT {_keyword_features_sql('c', terms)} OFFSET 0) f"
        )
    else:
        ctes.append(
            "keyword_leg AS (SELECT NULL::bigint AS id, NULL::float8 AS score, "
            "NULL::bigint AS rank, NULL::float8 AS matched_idf WHERE false)"
        )
        keyword_score, keyword_from = "NULL::float8", ""

    similarity = (
        f"1 - (c.embedding::vector({dims}) <=> %s::vector({dims}))"
        if use_vector
        else "NULL::float8"
    )
    pool = "pool AS (SELECT id FROM vector_leg UNION SELECT id FROM keyword_leg)"
    if use_vector and use_keyword and weights.page_topic:
        # Each candidate page's centroid against the question (FusionWeights.page_topic): the
        # mean of all the page's chunk vectors, kept per page by triggers (kb.models.PageVector),
        # one row per candidate page. Averaging the chunks here instead read ~10 vectors per
        # page, ~5 ms of a 13 ms statement at 100k chunks.
        pool += f""",
            page_topic AS (
                SELECT v.document_id,
                       1 - (v.embedding::vector({dims}) <=> %s::vector({dims})) AS topic
                FROM kb_page_vector v
                WHERE v.embedding_model_id = {int(embedding_model.pk)} AND v.document_id IN
                    (SELECT pc.document_id FROM pool p JOIN kb_chunk pc ON pc.id = p.id)
            )"""
        params.append(vector_text)
        topic, topic_from = "t.topic", " LEFT JOIN page_topic t ON t.document_id = c.document_id"
    else:
        topic, topic_from = "NULL::float8", ""
    sql = f"""
        WITH {", ".join(ctes)},
        {pool}
        SELECT c.id, c.document_id, d.path, d.title, c.heading_path, c.text, c.char_start,
               c.char_end, d.updated_on, v.rank, k.rank, {similarity}, {keyword_score},
               (SELECT count(*) FROM vector_leg), (SELECT count(*) FROM keyword_leg),
               (SELECT max(matched_idf) FROM keyword_leg), {topic}
        FROM pool p
        JOIN kb_chunk c ON c.id = p.id
        JOIN kb_document d ON d.id = c.document_id
        LEFT JOIN vector_leg v ON v.id = p.id
        LEFT JOIN keyword_leg k ON k.id = p.id{topic_from}{keyword_from}
    """
    if use_vector:
        params.append(vector_text)
    rows = _fetch_prepared(sql, params)
    coverage = None
    if use_keyword and rows and rows[0][15] is not None and terms is not None:
        coverage = min(float(rows[0][15]) / terms.question_idf, 1.0)
    keyword_weight = (
        weights.keyword_weight(keywords, vector_leg=use_vector, coverage=coverage or 0.0)
        if use_keyword and keywords
        else 0.0
    )
    fused = fuse(
        similarities=[row[11] for row in rows],
        keyword_scores=[row[12] for row in rows],
        vector_ranked=[row[9] is not None for row in rows],
        keyword_ranked=[row[10] is not None for row in rows],
        keyword_weight=keyword_weight,
        pages=[row[1] for row in rows],
        page_topics=[row[16] for row in rows],
        page_topic_weight=weights.page_topic,
    )
    candidates = [
        Hit(
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
            similarity=None if row[11] is None else float(row[11]),
            keyword_score=None if row[12] is None else float(row[12]),
            fused_score=score,
            page_topic=None if row[16] is None else float(row[16]),
        )
        for row, score in zip(rows, fused, strict=True)
    ]
    # Ties go to the better leg rank; a leg that did not rank a chunk puts it after every chunk
    # it did (ranks run past leg_depth: the pages' best chunks follow the depth).
    candidates.sort(
        key=lambda c: (
            -c.fused_score,
            c.vector_rank or math.inf,
            c.keyword_rank or math.inf,
            c.chunk_id,
        )
    )
    return HybridRows(
        candidates=candidates[: int(limit)],
        vector_candidates=rows[0][13] if rows else 0,
        keyword_candidates=rows[0][14] if rows else 0,
        keyword_coverage=coverage,
        identifier_phrases=keywords.identifier_phrases if use_keyword and keywords else (),
        term_idfs=idfs,
    )


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


def _fetch_prepared(sql: str, params: Sequence[SqlValue]) -> list[tuple]:
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
    connection = _reading()
    if not settings.SEARCH_PREPARED_STATEMENTS:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall()
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
        return wrapped.fetchall()


def _candidate_tsquery(terms: TermWeights) -> str:
    return tsquery_text(terms.selecting, pairs=terms.pairs)


def unknown_names(
    *, names: Sequence[str], embedding_model: EmbeddingModel, audiences: Sequence[str]
) -> list[str]:
    """The names no page the asker may see mentions, in one statement (a GIN lookup each).
    A name made only of stop words says nothing and is never "unknown"."""
    if not names:
        return []
    with _reading().cursor() as cursor:
        cursor.execute(
            f"""
            SELECT n.name FROM unnest(%s::text[]) WITH ORDINALITY AS n (name, position)
            WHERE numnode(plainto_tsquery('english', n.name)) > 0
              AND NOT EXISTS (
                  SELECT 1 FROM kb_chunk c JOIN kb_document d ON d.id = c.document_id
                  WHERE {visible_chunks_sql(embedding_model)}
                    AND c.tsv @@ plainto_tsquery('english', n.name)
              )
            ORDER BY n.position
            """,
            [list(names), list(audiences)],
        )
        return [row[0] for row in cursor.fetchall()]


COMMON_WORD_SAMPLE = 200  # visible pages looked at to tell a common word; all of them below


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
    with _reading().cursor() as cursor:
        cursor.execute(
            f"""
            WITH sample AS (
                SELECT d.id FROM kb_document d
                WHERE d.status = 'published' AND d.superseded_by_id IS NULL
                  AND d.audience = ANY(%s::text[])
                ORDER BY hashint8(d.id), d.id
                LIMIT {COMMON_WORD_SAMPLE}
            )
            SELECT w.word FROM unnest(%s::text[]) AS w (word)
            WHERE numnode(plainto_tsquery('english', w.word)) > 0
              AND 2 * (
                  SELECT count(*) FROM sample s
                  WHERE EXISTS (
                      SELECT 1 FROM kb_chunk c
                      WHERE c.document_id = s.id
                        AND c.embedding_model_id = {int(embedding_model.pk)}
                        AND c.tsv @@ plainto_tsquery('english', w.word)
                  )
              ) > (SELECT count(*) FROM sample)
            """,
            [list(audiences), list(words)],
        )
        return {row[0] for row in cursor.fetchall()}


def _reading() -> BaseDatabaseWrapper:
    """The connection retrieval reads from: a replica when one serves these reads
    (``config.db_router``), else the primary."""
    return connections[read_alias()]


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
            SELECT c.id FROM kb_chunk c JOIN kb_document d ON d.id = c.document_id
            WHERE {visible_chunks_sql(embedding_model)} AND c.id = ANY(%s)
            """,
            [list(audiences), list(chunk_ids)],
        )
        return {row[0] for row in cursor.fetchall()}
