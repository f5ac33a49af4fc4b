"""The keyword leg is BM25 inside PostgreSQL: checked against a reference BM25 library, with
corpus statistics that follow every change of the chunks."""

from __future__ import annotations

from pathlib import Path

import bm25s
import pytest
from django.db import DatabaseError, DataError, connection, transaction

from kb.actors import SYSTEM
from kb.models import Chunk, Document, EmbeddingModel, IndexStatistic, TermStatistic
from kb.services.sync import corpus_sync
from search.fusion import FusionWeights
from search.hybrid import BM25_B, BM25_K1, tsquery_text
from search.services import retrieve
from tests.conftest import pages_written_and_synced
from tests.support.index_recounts import statistics_match_a_recount

pytestmark = pytest.mark.django_db

PAGES = {
    "billing/refunds.md": "# Refunds\n\nAnnual plans get a prorated refund within 60 days.\n\n"
    "## Monthly plans\n\nMonthly plans are not refunded, but you can cancel any time.\n",
    "billing/invoices.md": "# Invoices\n\nEvery invoice lists the plan, the period and the tax.\n\n"
    "## Refund on an invoice\n\nA refund appears as a credit note on the next invoice.\n",
    "account/security.md": "# Security\n\nTurn on two-factor authentication in your profile.\n\n"
    "## Lost phone\n\nUse a recovery code when your phone is lost. Recovery codes work once.\n",
    "api/errors.md": "# Errors\n\nE4012 means the card was declined. E4013 means the card "
    "expired. Retry the payment with another card.\n",
    "api/limits.md": "# Rate limits\n\nToo many requests return HTTP 429. Wait and retry the "
    "request after the Retry-After header's seconds. Retry with backoff.\n",
}


@pytest.fixture
def pages(tmp_path: Path, cached_embedder) -> Path:
    return pages_written_and_synced(tmp_path / "docs", PAGES, cached_embedder)


def _index_terms(heading: str, text: str) -> list[str]:
    """A chunk as the index reads it: each lexeme repeated once per position."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT lexeme, coalesce(array_length(positions, 1), 1) FROM unnest("
            "setweight(to_tsvector('english', %s), 'A') "
            "|| setweight(to_tsvector('english', %s), 'B'))",
            [heading, text],
        )
        return [lexeme for lexeme, count in cursor.fetchall() for _ in range(count)]


@pytest.mark.parametrize(
    "question",
    ["refund for an annual plan", "retry the request", "lost phone recovery code", "E4012 card"],
)
def test_keyword_scores_match_the_reference_bm25(pages: Path, question: str) -> None:
    # given the reference library indexing the same chunks, tokenised exactly as the index is
    chunks = list(Chunk.objects.order_by("id").values_list("id", "heading_path", "text"))
    reference = bm25s.BM25(method="lucene", k1=BM25_K1, b=BM25_B)
    corpus = [_index_terms(heading, text) for _, heading, text in chunks]
    reference.index(corpus, show_progress=False)
    vocabulary = {term for terms in corpus for term in terms}
    question_terms = sorted(set(_index_terms(question, "")) & vocabulary)
    scores = reference.get_scores(question_terms)
    expected = dict(zip((chunk_id for chunk_id, _, _ in chunks), scores, strict=True))

    # when the keyword leg alone ranks them (without the bonus for a pasted identifier's phrase)
    plain_bm25 = FusionWeights(identifier_bonus=0.0)
    result = retrieve(
        question=question, legs=("keyword",), limit=50, rerank=False, weights=plain_bm25
    )

    # then every chunk it returns carries the reference score, best first
    assert result.hits
    for hit in result.hits:
        assert hit.keyword_score == pytest.approx(expected[hit.chunk_id], rel=1e-5)
    best = max(expected.values())
    assert result.hits[0].keyword_score == pytest.approx(best, rel=1e-5)
    assert {h.chunk_id for h in result.hits} == {i for i, s in expected.items() if s > 0}


def test_statistics_follow_edits_deletions_and_model_drops(pages: Path, local_embedder) -> None:
    statistics_match_a_recount()
    assert TermStatistic.objects.filter(lexeme="refund", chunk_count=3).exists()

    # an edit re-chunks one page
    (pages / "billing/refunds.md").write_text("# Refunds\n\nNo refunds, ever.\n")
    corpus_sync(directory=pages, embedder=local_embedder, actor=SYSTEM)
    statistics_match_a_recount()

    # a page deleted in admin takes its chunks with it (a cascade)
    Document.objects.filter(path="api/limits.md").delete()
    statistics_match_a_recount()
    assert IndexStatistic.objects.get().chunk_count == Chunk.objects.count()

    # emptying the chunk table (a benchmark does) empties the statistics with it
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE kb_chunk CASCADE")
    assert not TermStatistic.objects.exists() and not IndexStatistic.objects.exists()

    # dropping the model leaves no statistics behind
    EmbeddingModel.objects.all().delete()
    assert not TermStatistic.objects.exists() and not IndexStatistic.objects.exists()


def test_chunks_cannot_be_rewritten_behind_the_statistics(pages: Path) -> None:
    chunk = Chunk.objects.first()

    with pytest.raises(DatabaseError, match="immutable"), transaction.atomic():
        Chunk.objects.filter(pk=chunk.pk).update(text="something else entirely")


@pytest.mark.parametrize("lexeme", ["it's", "back\\slash", "a|b", "x&y", "!not", "(paren)"])
def test_tsquery_text_quotes_every_lexeme(db, lexeme: str) -> None:
    with connection.cursor() as cursor:
        try:
            cursor.execute("SELECT %s::tsquery::text", [tsquery_text([lexeme, "plain"])])
        except DataError as exc:  # pragma: no cover - the assertion below explains
            pytest.fail(f"{lexeme!r} broke the tsquery: {exc}")
        text = cursor.fetchone()[0]
    assert text.count("|") == 1 + lexeme.count("|")
