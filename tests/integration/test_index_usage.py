"""EXPLAIN proves retrieval's query shapes are served by the per-model HNSW and GIN indexes."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pytest
from django.db import DEFAULT_DB_ALIAS, connection, connections

from kb.models import Document, EmbeddingModel
from kb.services import embedding_model_register
from search.keywords import keyword_query
from search.services import hybrid_search
from search.tooling.benchmarks.plans import StatementCapture, explain_as_run

pytestmark = pytest.mark.django_db

ROWS_PER_MODEL = 1000


class _StubSpace:
    """Only what registration reads: a second vector space of another dimension."""

    key = "test/eight-dimensions"
    provider = "test"
    model_name = "eight-dimensions"
    dimensions = 8
    max_input_tokens = 512

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        raise NotImplementedError

    def embed_query(self, text: str) -> np.ndarray:
        raise NotImplementedError


def _fill(model: EmbeddingModel, document: Document) -> None:
    """Random unit-ish vectors and varied text, generated in SQL so the test stays fast."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO kb_chunk (document_id, embedding_model_id, ordinal, heading_path, text,
                                  char_start, char_end, token_count, embedding)
            SELECT %s, %s, g, 'Section ' || g,
                   'passage ' || g || ' about ' || (ARRAY['refunds','invoices','webhooks',
                   'taxes','plans'])[1 + g %% 5] || ' code E' || (1000 + g),
                   0, 10, 10, random_vector.v::vector
            FROM generate_series(%s, %s) AS g
            CROSS JOIN LATERAL (
                SELECT array_agg(random() - 0.5) AS v FROM generate_series(1, %s) WHERE g >= 0
            ) AS random_vector
            """,
            [document.pk, model.pk, 0, ROWS_PER_MODEL - 1, model.dimensions],
        )
        cursor.execute("ANALYZE kb_chunk")


def _plan(sql: str, params: list[object], *, disable: tuple[str, ...]) -> str:
    """The plan with the alternatives to an index priced out.

    At test sizes a sequential scan or a sort is as cheap as an index, and the choice then
    follows cost settings, not the query's shape. Disabled plan types are only penalised, never
    forbidden: when no index matches the shape (the expression, the cast, the partial
    predicate) the planner still falls back to them. So an index in this plan proves the shape
    is served by it; ``make bench`` shows the same indexes chosen unforced at 100k chunks.
    """
    with connection.cursor() as cursor:
        for setting in disable:
            cursor.execute(f"SET LOCAL enable_{setting} = off")
        cursor.execute("EXPLAIN " + sql, params)
        return "\n".join(row[0] for row in cursor.fetchall())


@pytest.fixture
def two_models(local_embedder) -> tuple[EmbeddingModel, EmbeddingModel]:
    document = Document.objects.create(path="a.md", title="A", body="x", content_hash="0")
    local = embedding_model_register(embedder=local_embedder)
    other = embedding_model_register(embedder=_StubSpace())
    _fill(local, document)
    _fill(other, document)
    # The indexes as built over these rows alone. Earlier tests of this worker roll back the
    # chunks they wrote, and their entries stay in the indexes until a vacuum: a GIN index
    # grown that way is priced above the model's btree at 2,000 rows, and the keyword leg's
    # plan then depended on which tests ran before this one.
    with connection.cursor() as cursor:
        cursor.execute("REINDEX TABLE kb_chunk")
    return local, other


def test_vector_leg_uses_the_models_partial_hnsw_index(two_models) -> None:
    for model in two_models:
        query = "[" + ",".join(["0.1"] * model.dimensions) + "]"
        plan = _plan(
            f"SELECT id FROM kb_chunk WHERE embedding_model_id = {model.pk} "
            f"ORDER BY embedding::vector({model.dimensions}) <=> %s::vector({model.dimensions}) "
            "LIMIT 40",
            [query],
            # Only the HNSW index can produce this order without a sort.
            disable=("seqscan", "bitmapscan", "sort"),
        )
        assert f"Index Scan using {model.hnsw_index_name}" in plan, plan


def test_every_connection_searches_the_hnsw_graph_as_the_settings_say(settings) -> None:
    # given a search breadth other than the default
    settings.HNSW_EF_SEARCH = 123

    # when a new connection opens
    fresh = connections.create_connection(DEFAULT_DB_ALIAS)
    try:
        with fresh.cursor() as cursor:
            cursor.execute(
                "SELECT current_setting('hnsw.ef_search'), current_setting('hnsw.iterative_scan'),"
                " current_setting('plan_cache_mode')"
            )
            applied = cursor.fetchone()
    finally:
        fresh.close()

    # then its vector leg reads the graph that wide, past rows the filters reject, and the
    # hybrid statement gets its generic plan
    assert applied == ("123", "relaxed_order", "force_generic_plan")


@pytest.mark.parametrize("dimensions", [384, 1024])
def test_a_chunks_vector_is_kept_in_its_row(dimensions) -> None:
    if connection.pg_version < 170000:
        pytest.skip("pg_column_toast_chunk_id is PostgreSQL 17's; the embedded server is 18")
    # given a chunk of a passage's length whose row is over PostgreSQL's 2 kB TOAST threshold
    # (a 384-dimension vector is 1.5 kB, a 1,024-dimension one 4 kB; the text and its tsvector
    # about 1.5 kB)
    space = type("Space", (_StubSpace,), {"key": f"test/d{dimensions}", "dimensions": dimensions})
    model = embedding_model_register(embedder=space())
    document = Document.objects.create(path="a.md", title="A", body="x", content_hash="0")
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO kb_chunk (document_id, embedding_model_id, ordinal, heading_path, text,
                                  char_start, char_end, token_count, embedding)
            SELECT %s, %s, 0, 'Refunds', string_agg(md5(g::text), ' '), 0, 10,
                   10, (SELECT array_agg(random() - 0.5) FROM generate_series(1, %s))::vector
            FROM generate_series(1, 20) AS g
            """,
            [document.pk, model.pk, dimensions],
        )
        # when the row is read back
        cursor.execute(
            "SELECT pg_column_size(c.embedding) + pg_column_size(c.text) + pg_column_size(c.tsv),"
            " pg_column_toast_chunk_id(c.embedding) IS NULL FROM kb_chunk c"
            " WHERE c.document_id = %s",
            [document.pk],
        )
        row_bytes, vector_inline = cursor.fetchone()

    # then the vector is in the row: an exact read of every vector (the planner's choice for a
    # help center's index) reads the table alone, not one TOAST lookup per chunk
    assert row_bytes > 2032
    assert vector_inline


def test_keyword_leg_uses_the_gin_index(two_models) -> None:
    local, _ = two_models
    plan = _plan(
        "SELECT id FROM kb_chunk WHERE embedding_model_id = %s "
        "AND tsv @@ websearch_to_tsquery('english', %s)",
        [local.pk, "E1234"],
        disable=("seqscan",),
    )
    assert "kb_chunk_tsv_gin" in plan, plan


def test_the_hybrid_statement_runs_prepared_with_a_generic_plan_on_both_indexes(
    two_models,
) -> None:
    local, _ = two_models
    Document.objects.update(status="published")
    vector = [0.1] * local.dimensions

    # when a question is searched twice
    capture = StatementCapture()
    with connection.execute_wrapper(capture):
        for _ in range(2):
            hybrid_search(
                embedding_model=local,
                query_vector=vector,
                keywords=keyword_query("refunds for code E1001"),
                audiences=["public"],
            )

    # then the statement was prepared once and both runs used its generic plan
    sql, params = capture.statements[-1]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements "
            "WHERE statement LIKE %s",
            ["%vector_hits AS%keyword_matches AS MATERIALIZED%"],
        )
        assert cursor.fetchall() == [(2, 0)]

    # and that plan reads HNSW and GIN (sequential scans and sorts priced out: at test sizes
    # they cost about what an index does; which kb_document index checks a page depends on
    # its size, make bench shows kb_document_searchable at 100k chunks)
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_sort = off")
        plan = explain_as_run(sql, params, options="COSTS OFF")
    assert f"Index Scan using {local.hnsw_index_name}" in plan, plan
    assert "Bitmap Index Scan on kb_chunk_tsv_gin" in plan, plan


def _two_chunks_per_page(model: EmbeddingModel) -> None:
    """Two chunks with random vectors for every document, generated in SQL as ``_fill``'s."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO kb_chunk (document_id, embedding_model_id, ordinal, heading_path, text,
                                  char_start, char_end, token_count, embedding)
            SELECT d.id, %s, o, 'Section ' || o,
                   'passage about ' || (ARRAY['refunds','invoices','webhooks'])[1 + d.id %% 3]
                   || ' code E' || (1000 + d.id %% 50),
                   0, 10, 10, random_vector.v::vector
            FROM kb_document d CROSS JOIN generate_series(0, 1) AS o
            CROSS JOIN LATERAL (
                SELECT array_agg(random() - 0.5) AS v FROM generate_series(1, %s)
                WHERE o >= 0 AND d.id > 0
            ) AS random_vector
            """,
            [model.pk, model.dimensions],
        )


def test_the_page_topic_reads_the_vectors_of_the_candidate_pages_alone(local_embedder) -> None:
    # given a help center of 600 pages just imported, each with its page vector (kept by the
    # chunk triggers), whose page vectors have no planner statistics yet
    model = embedding_model_register(embedder=local_embedder)
    Document.objects.bulk_create(
        Document(
            path=f"p{number}.md",
            title=f"Page {number}",
            body="x",
            content_hash=str(number),
            status="published",
        )
        for number in range(600)
    )
    _two_chunks_per_page(model)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE kb_document")
        cursor.execute("ANALYZE kb_chunk")

    # when a question is searched (both legs, so the page topic is scored)
    capture = StatementCapture()
    with connection.execute_wrapper(capture):
        found = hybrid_search(
            embedding_model=model,
            query_vector=[0.1] * model.dimensions,
            keywords=keyword_query("refunds for code E1001"),
            audiences=["public"],
        )
    sql, params = capture.statements[-1]
    plan = explain_as_run(sql, params, options="ANALYZE, COSTS OFF, TIMING OFF")

    # then the statement read at most one page vector per candidate, not the model's 600
    candidates = found.vector_candidates + found.keyword_candidates
    assert 10 < candidates < 200
    read = [
        float(rows) * int(loops)
        for rows, loops in re.findall(
            r"on kb_page_vector \w+ \(actual rows=([\d.]+) loops=(\d+)", plan
        )
    ]
    assert read and sum(read) <= candidates, plan
