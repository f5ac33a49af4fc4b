"""Hybrid retrieval against real PostgreSQL + pgvector and the real local embedder."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.actors import SYSTEM
from kb.ingestion import corpus_sync
from kb.models import Document
from kb.selectors import ALL_AUDIENCES
from search.hybrid import FusionWeights, rrf_score
from search.rerankers.base import RerankError
from search.results import RetrievalUnavailable
from search.services import retrieve
from tests.conftest import CountingEmbedder

pytestmark = pytest.mark.django_db


def _write(root: Path, path: str, text: str) -> None:
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)


@pytest.fixture
def help_center(tmp_path: Path, local_embedder) -> Path:
    root = tmp_path / "docs"
    _write(
        root,
        "policies/refunds.md",
        "---\ntitle: Refund Policy\nupdated: 2026-09-14\n---\n# Refund Policy\n\n"
        "## Annual plans\n\nAnnual plans get a prorated refund within 60 days of payment.\n",
    )
    _write(
        root,
        "policies/old-refunds.md",
        "---\ntitle: Old Refund Policy\nstatus: retired\nsuperseded_by: policies/refunds.md\n---\n"
        "# Old Refund Policy\n\nAnnual plans could never be refunded, zebra-clause applies.\n",
    )
    _write(
        root,
        "internal/escalation.md",
        "---\ntitle: Escalation Playbook\naudience: internal\n---\n# Escalation Playbook\n\n"
        "Agents may grant goodwill credits up to $200 without approval.\n",
    )
    _write(
        root,
        "webhooks/events.md",
        "# Webhook Events\n\n## invoice.paid\n\nSent when an invoice is paid in full.\n\n"
        "## Errors\n\nA failed delivery returns E4012 when the card is declined.\n",
    )
    _write(
        root,
        "api/rate-limits.md",
        "# Rate Limits\n\nToo many requests return HTTP 429 with a Retry-After header.\n",
    )
    corpus_sync(directory=root, embedder=local_embedder, actor=SYSTEM)
    return root


def _paths(result) -> list[str]:
    return [hit.path for hit in result.hits]


@pytest.mark.parametrize(
    ("question", "owner"),
    [
        ("invoice.paid", "webhooks/events.md"),
        ("E4012", "webhooks/events.md"),
        ("HTTP 429", "api/rate-limits.md"),
        ("what is the Retry-After header", "api/rate-limits.md"),
    ],
)
def test_pasted_identifier_ranks_its_page_first(help_center: Path, question: str, owner: str):
    assert _paths(retrieve(question=question))[0] == owner


def test_every_hit_carries_its_ranks_and_scores(help_center: Path) -> None:
    equal = FusionWeights(vector=1.0, keyword_plain=1.0)
    result = retrieve(question="refund for annual plan", rerank=False, weights=equal)

    top = result.hits[0]
    assert top.path == "policies/refunds.md"
    assert top.vector_rank == 1 and top.keyword_rank is not None
    assert top.fused_score == pytest.approx(1 / 61 + 1 / (60 + top.keyword_rank))
    assert str(top.updated_on) == "2026-09-14"
    assert result.vector_candidates > 0 and result.keyword_candidates > 0
    assert set(result.timings_ms) >= {"embed", "sql", "total"}


def test_keyword_leg_speaks_only_for_identifiers(help_center: Path) -> None:
    plain = retrieve(question="refund for annual plan", rerank=False)
    pasted = retrieve(question="what does E4012 mean", rerank=False).hits[0]

    assert plain.keyword_candidates == 0  # a leg with no say in the fusion is not run
    assert plain.hits[0].fused_score == pytest.approx(1 / (60 + plain.hits[0].vector_rank))
    assert pasted.fused_score == pytest.approx(
        rrf_score([pasted.vector_rank, pasted.keyword_rank], weights=[1.0, 1.5])
    )


def test_an_identifier_the_index_cannot_find_exactly_counts_as_plain(help_center: Path) -> None:
    # given identifiers the english index cuts down to one common word ("after" is a stop word)
    cut = retrieve(question="what does starting_after do", rerank=False)
    # and beside one, an identifier the index can find
    found = retrieve(question="E4012 with starting_after", rerank=False)

    # then only a findable one runs the keyword leg and weighs it in the fusion
    assert cut.keyword_candidates == 0
    assert cut.hits[0].fused_score == pytest.approx(1 / (60 + cut.hits[0].vector_rank))
    assert found.keyword_candidates > 0
    assert found.hits[0].path == "webhooks/events.md" and found.hits[0].keyword_rank == 1


def test_retired_document_is_never_retrieved(help_center: Path) -> None:
    result = retrieve(question="zebra-clause annual plans could never be refunded", limit=20)

    assert "policies/old-refunds.md" not in _paths(result)


def test_retiring_takes_effect_without_reindexing(help_center: Path) -> None:
    Document.objects.filter(path="api/rate-limits.md").update(status="retired")

    assert "api/rate-limits.md" not in _paths(retrieve(question="HTTP 429", limit=20))


def test_superseded_document_is_never_retrieved_even_if_published(help_center: Path) -> None:
    successor = Document.objects.get(path="policies/refunds.md")
    Document.objects.filter(path="api/rate-limits.md").update(superseded_by=successor)

    assert "api/rate-limits.md" not in _paths(retrieve(question="HTTP 429", limit=20))


def test_internal_document_is_filtered_in_sql_for_the_public(help_center: Path) -> None:
    question = "goodwill credits up to $200 without approval"

    assert "internal/escalation.md" not in _paths(retrieve(question=question, limit=20))
    staff = retrieve(question=question, audiences=ALL_AUDIENCES)
    assert _paths(staff)[0] == "internal/escalation.md"


@pytest.mark.parametrize(
    "question",
    ["the of and", "!!! & | :*", "'; DROP TABLE kb_chunk; --", "x" * 5000, "refund " * 800, ""],
)
def test_odd_questions_return_sensibly(help_center: Path, question: str) -> None:
    result = retrieve(question=question)

    assert not result.degraded
    assert Document.objects.count() == 5


def test_embedder_down_degrades_to_keyword_only(help_center, local_embedder) -> None:
    broken = CountingEmbedder(local_embedder)
    broken.failure = RuntimeError("embedding service unavailable")

    result = retrieve(question="HTTP 429 too many requests", embedder=broken)

    assert result.degraded and result.failed_stages == ["embed"]
    assert "unavailable" in result.errors["embed"]
    assert _paths(result)[0] == "api/rate-limits.md"
    assert all(hit.vector_rank is None for hit in result.hits)


def test_keyword_query_error_degrades_to_vector_only(help_center, monkeypatch) -> None:
    from search import hybrid

    monkeypatch.setattr(hybrid, "_tsquery_sql", lambda count, **_: "to_tsquery('english', '&&&')")

    result = retrieve(question="what does E4012 mean for my card")

    assert result.degraded and result.failed_stages == ["keyword"]
    assert _paths(result)[0] == "webhooks/events.md"
    assert all(hit.keyword_rank is None for hit in result.hits)


class _BrokenReranker:
    name = "test/broken"

    def rerank(self, *, question: str, passages: list[str]) -> list[float]:
        raise RerankError("reranker timed out")


class _ReverseReranker:
    name = "test/reverse"

    def rerank(self, *, question: str, passages: list[str]) -> list[float]:
        return [float(i) for i in range(len(passages))]


def test_reranker_down_keeps_the_fused_order(help_center: Path) -> None:
    fused = retrieve(question="refund for annual plan", rerank=False)
    result = retrieve(question="refund for annual plan", reranker=_BrokenReranker())

    assert result.degraded and result.failed_stages == ["rerank"]
    assert _paths(result) == _paths(fused)


def test_reranker_orders_the_candidates(help_center: Path) -> None:
    fused = retrieve(question="refund for annual plan", rerank=False, limit=20)
    result = retrieve(question="refund for annual plan", reranker=_ReverseReranker(), limit=20)

    assert result.reranker == "test/reverse"
    assert [hit.chunk_id for hit in result.hits] == [hit.chunk_id for hit in fused.hits][::-1]


def test_everything_down_is_a_clear_error(help_center, local_embedder, monkeypatch) -> None:
    from search import hybrid

    broken = CountingEmbedder(local_embedder)
    broken.failure = RuntimeError("embedding service unavailable")
    monkeypatch.setattr(hybrid, "_tsquery_sql", lambda count, **_: "to_tsquery('english', '&&&')")

    with pytest.raises(RetrievalUnavailable, match="every retrieval leg failed"):
        retrieve(question="refund", embedder=broken)


def test_only_leg_failing_is_a_clear_error(help_center, monkeypatch) -> None:
    from search import hybrid

    monkeypatch.setattr(hybrid, "_tsquery_sql", lambda count, **_: "to_tsquery('english', '&&&')")

    with pytest.raises(RetrievalUnavailable, match="keyword"):
        retrieve(question="refund", legs=("keyword",))
