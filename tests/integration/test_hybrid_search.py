"""Hybrid retrieval against real PostgreSQL + pgvector and the real local embedder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import search.terms
from kb.actors import SYSTEM
from kb.models import Chunk, Document, EmbeddingModel
from kb.selectors.access import ALL_AUDIENCES
from kb.services.sync import corpus_sync
from search.fusion import FusionWeights, fuse
from search.keywords import keyword_query
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
def help_center(tmp_path: Path, cached_embedder) -> Path:
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
    corpus_sync(directory=root, embedder=cached_embedder, actor=SYSTEM)
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
    result = retrieve(question="refund for annual plan", rerank=False)

    top = result.hits[0]
    assert top.path == "policies/refunds.md"
    assert top.vector_rank == 1 and top.keyword_rank == 1
    assert top.similarity is not None and top.keyword_score is not None
    assert top.keyword_score > 0
    assert str(top.updated_on) == "2026-09-14"
    assert result.vector_candidates > 0 and result.keyword_candidates > 0
    assert set(result.timings_ms) >= {"embed", "sql", "total"}


def test_every_candidate_is_scored_by_both_legs(help_center: Path) -> None:
    # given a question whose words only one page holds
    result = retrieve(question="refund for annual plan", rerank=False, limit=20)

    # then candidates the keyword leg did not rank still carry both scores: a page without the
    # words scores 0 by BM25, and every candidate has its cosine similarity
    assert all(hit.similarity is not None for hit in result.hits)
    unmatched = [hit for hit in result.hits if hit.keyword_rank is None]
    assert unmatched and all(hit.keyword_score == 0 for hit in unmatched)


def test_terms_too_common_to_look_up_leave_bm25_to_score_the_vector_candidates(
    help_center: Path, monkeypatch
) -> None:
    # given the same question with every term under the postings bound, then over it
    question = "refund for annual plan"
    looked_up = retrieve(question=question, rerank=False, limit=20)
    monkeypatch.setattr(search.terms, "KEYWORD_SELECTION_POSTINGS", 1)
    too_common = retrieve(question=question, rerank=False, limit=20)

    # then over it the keyword leg ranks no candidates of its own, yet BM25 still scores the
    # vector leg's, and the refund page (the one holding the words) keeps its score
    assert looked_up.keyword_candidates > 0 and too_common.keyword_candidates == 0
    assert too_common.vector_candidates == looked_up.vector_candidates
    scored = {hit.path: hit.keyword_score for hit in too_common.hits}
    assert scored["policies/refunds.md"] > 0
    assert all(hit.keyword_rank is None for hit in too_common.hits)


@pytest.mark.parametrize(
    "question", ["refund for annual plan", "what does E4012 mean", "HTTP 429 Retry-After"]
)
def test_the_unprepared_statement_finds_exactly_what_the_prepared_one_does(
    help_center: Path, settings, question: str
) -> None:
    def ranked() -> list[tuple[int, float, float | None]]:
        result = retrieve(question=question, rerank=False, limit=20)
        return [(hit.chunk_id, round(hit.fused_score, 9), hit.keyword_score) for hit in result.hits]

    # given the same question searched prepared (the default) and unprepared (for a pooler)
    prepared = ranked()
    settings.SEARCH_PREPARED_STATEMENTS = False
    unprepared = ranked()

    # then both find the same chunks with the same scores
    assert prepared and prepared == unprepared


def test_fusion_is_the_weighted_sum_of_z_scores(help_center: Path) -> None:
    keyword_only = FusionWeights(keyword_plain=1.0, keyword_quoted=1.0)
    vector_only = FusionWeights(keyword_plain=0.0, keyword_quoted=0.0, page_topic=0.0)
    question = "can I get money back on an annual plan"

    by_keyword = retrieve(question=question, rerank=False, limit=20, weights=keyword_only)
    by_vector = retrieve(question=question, rerank=False, limit=20, weights=vector_only)

    # at the ends of the scale the order is each leg's own
    assert [h.keyword_score for h in by_keyword.hits] == sorted(
        (h.keyword_score for h in by_keyword.hits), reverse=True
    )
    assert [h.similarity for h in by_vector.hits] == sorted(
        (h.similarity for h in by_vector.hits), reverse=True
    )


def test_fuse_standardises_each_leg_by_its_own_hits() -> None:
    fused = fuse(
        similarities=[0.9, 0.5, 0.1],
        keyword_scores=[0.0, 4.0, 8.0],
        vector_ranked=[True, True, True],
        keyword_ranked=[False, True, True],
        keyword_weight=0.5,
    )

    # vector z: (0.9-0.5)/0.3266=1.2247, 0, -1.2247; keyword over its own hits (4, 8): mean 6,
    # spread 2, so z = -3, -1, 1
    assert fused == pytest.approx([0.5 * 1.2247 - 1.5, -0.5, 0.5 * -1.2247 + 0.5], abs=1e-3)


def test_a_keyword_only_candidate_scores_as_the_vector_legs_last_not_by_its_cosine() -> None:
    # given the vector leg's own list (0.9, 0.7, 0.5) and two candidates only the keyword leg
    # ranked, one far below that list's last similarity and one just below it
    fused = fuse(
        similarities=[0.9, 0.7, 0.5, -0.3, 0.45],
        keyword_scores=[0.0, 0.0, 0.0, 6.0, 6.0],
        vector_ranked=[True, True, True, False, False],
        keyword_ranked=[False, False, False, True, True],
        keyword_weight=0.5,
    )

    # then both score on the vector side as the list's last (z -1.2247), not by their own
    # cosines (z -6.12 and -1.53): the same words, the same fused score (keyword z 0 for both;
    # the keyword list's spread is 0, counted as 1), ahead of the vector leg's last candidate,
    # which holds none of the words
    assert fused[3] == pytest.approx(fused[4])
    assert fused[3] == pytest.approx(0.5 * -1.2247 + 0.5 * 0.0, abs=1e-3)
    assert fused[3] > fused[2]
    # and the keyword side keeps a BM25 of 0 as it is: the vector leg's own candidates,
    # holding none of the words, score below the keyword leg's own list
    assert fused[2] == pytest.approx(0.5 * -1.2247 + 0.5 * -6.0, abs=1e-3)


def test_fuse_adds_each_pages_topic_to_its_best_candidate_at_the_vector_share() -> None:
    # given page "b" closer to the question as a whole than page "a", whose two candidates
    # must not make its topic count twice; "a"'s first candidate is its best by both legs
    alike = dict(
        similarities=[0.6, 0.5, 0.5],
        keyword_scores=[2.5, 2.0, 2.0],
        vector_ranked=[True, True, True],
        keyword_ranked=[True, True, True],
        keyword_weight=0.25,
        pages=["a", "a", "b"],
        page_topics=[0.2, 0.2, 0.6],
    )
    plain = fuse(**alike, page_topic_weight=0.0)

    fused = fuse(**alike, page_topic_weight=2.0)

    # then the topics' z-scores over the two pages are -1 and +1 (not over three candidates),
    # added at 2.0 times the vector share 0.75 to each page's best candidate; "a"'s other
    # candidate keeps its score
    assert [f - p for f, p in zip(fused, plain, strict=True)] == pytest.approx([-1.5, 0.0, 1.5])
    # and with one leg the order stays that leg's own
    one_leg = {**alike, "keyword_scores": [None] * 3}
    assert fuse(**one_leg, page_topic_weight=2.0) == fuse(**one_leg, page_topic_weight=0.0)


def test_fuse_adds_the_phrase_share_before_choosing_each_pages_best_candidate() -> None:
    # given two candidates of page "a" alike but for the second holding the question's phrases
    alike = dict(
        similarities=[0.6, 0.5, 0.5],
        keyword_scores=[2.0, 2.0, 1.0],
        vector_ranked=[True, True, True],
        keyword_ranked=[True, True, True],
        keyword_weight=0.8,
        pages=["a", "a", "b"],
        page_topics=[0.6, 0.6, 0.2],
        page_topic_weight=1.0,
    )
    plain = fuse(**alike)

    fused = fuse(**alike, phrase_shares=[0.0, 1.0, 0.5], phrase_weight=2.0)

    # then it gains the weight times its share and becomes its page's best, the one that
    # carries the page's topic (+0.2 * z 1): the first loses it
    assert fused[1] - plain[1] == pytest.approx(2.0 + 0.2)
    assert fused[0] - plain[0] == pytest.approx(-0.2)
    assert fused[2] - plain[2] == pytest.approx(1.0)
    # and without a weight the shares change nothing
    assert fuse(**alike, phrase_shares=[0.0, 1.0, 0.5]) == plain


def test_fuse_ranks_the_page_a_cross_reference_names_just_above_it() -> None:
    # given a cross-reference of page "a" ("See [B](b.md) for …") scoring above every candidate
    # of page "b" it names, and a candidate of page "c" that refers to a page not among them
    alike = dict(
        similarities=[0.6, 0.5, 0.4, 0.55],
        keyword_scores=[2.5, 2.0, 1.0, 2.2],
        vector_ranked=[True, True, True, True],
        keyword_ranked=[True, True, True, True],
        keyword_weight=0.3,
        pages=["a", "b", "b", "c"],
        page_topics=[0.5, 0.3, 0.3, 0.4],
        page_topic_weight=1.0,
    )
    plain = fuse(**alike)

    fused = fuse(**alike, refers_to=["b", None, None, "z"])

    # then "b"'s best candidate scores just above the reference, its other one keeps its score,
    # and a reference to a page that is not a candidate changes nothing
    assert fused[1] > fused[0] == plain[0]
    assert fused[1] == pytest.approx(plain[0])
    assert (fused[2], fused[3]) == (plain[2], plain[3])
    # and a page already above the reference that names it keeps its score
    assert fuse(**alike, refers_to=[None, None, None, "a"]) == plain
    # and one step only: "b" raised by "a"'s reference does not raise "c", which "b"'s own
    # best candidate names, above it (that reference scored below "c")
    chained = fuse(**alike, refers_to=["b", "c", None, None])
    assert chained[1] > chained[0] and chained[3] == plain[3] < chained[1]
    # and with one leg the order stays that leg's own
    one_leg = {**alike, "keyword_scores": [None] * 4}
    assert fuse(**one_leg, refers_to=["b", None, None, None]) == fuse(**one_leg)


def test_page_topic_is_the_cosine_of_the_pages_mean_chunk_vector(
    tmp_path: Path, local_embedder
) -> None:
    # given pages of several chunks each
    root = tmp_path / "docs"
    for name, topic in (("refunds", "refund"), ("exports", "export"), ("webhooks", "webhook")):
        sections = "".join(
            f"## {topic.title()} rule {n}\n\n"
            + f"The {topic} rule number {n} says what happens to each {topic} request. " * 30
            + "\n\n"
            for n in range(1, 4)
        )
        _write(root, f"{name}.md", f"# {name.title()}\n\n{sections}")
    corpus_sync(directory=root, embedder=local_embedder, actor=SYSTEM)
    question = "what happens to my refund request"

    result = retrieve(question=question, rerank=False, limit=20)

    # then each hit's page topic is the cosine of its page's mean chunk vector and the question
    query = local_embedder.embed_query(question)
    for hit in result.hits:
        vectors = np.array(
            [list(c.embedding) for c in Chunk.objects.filter(document_id=hit.document_id)]
        )
        assert len(vectors) > 1
        centroid = vectors.mean(axis=0)
        expected = float(centroid @ query / np.linalg.norm(centroid) / np.linalg.norm(query))
        assert hit.page_topic == pytest.approx(expected, abs=1e-5)
    assert {hit.path for hit in result.hits} == {"refunds.md", "exports.md", "webhooks.md"}
    # and without the keyword leg there is no fusion, so no page topic either
    vector_only = retrieve(question=question, rerank=False, limit=20, legs=("vector",))
    assert vector_only.hits and all(hit.page_topic is None for hit in vector_only.hits)
    # and with the page topic switched off the statement does not compute it
    off = retrieve(question=question, rerank=False, limit=20, weights=FusionWeights(page_topic=0))
    assert off.hits and all(hit.page_topic is None for hit in off.hits)


def test_each_leg_spans_ten_pages_even_when_one_long_page_holds_its_best_chunks(
    tmp_path: Path, local_embedder
) -> None:
    # given one page of 44 sections that all restate the question, more than a leg's 40
    # places, and 12 short pages that each answer part of it in fewer of its words
    root = tmp_path / "docs"
    steps = "".join(
        f"## Step {n}\n\nStep {n} of moving a refund request to the new refund service.\n\n"
        for n in range(1, 45)
    )
    _write(root, "upgrading.md", f"# Upgrading the refund service\n\n{steps}")
    topics = ("annual plans", "monthly plans", "taxes", "chargebacks", "coupons", "trials")
    topics += ("seats", "invoices", "currencies", "bank transfers", "gift cards", "credits")
    for n, topic in enumerate(topics, start=1):
        _write(
            root,
            f"refunds/{n:02d}.md",
            f"# Refunds for {topic}\n\nHow a refund request for {topic} is handled.\n",
        )
    corpus_sync(directory=root, embedder=local_embedder, actor=SYSTEM)
    question = "moving a refund request to the new refund service"

    result = retrieve(question=question, rerank=False, limit=100, candidates=100)

    # then the long page holds each leg's first places, and each leg also lists the best
    # chunk of its 10 best pages, so both legs and the page ranking span 10 pages or more
    assert result.hits[0].path == "upgrading.md"
    by_vector = {hit.path for hit in result.hits if hit.vector_rank is not None}
    by_keyword = {hit.path for hit in result.hits if hit.keyword_rank is not None}
    assert len(by_vector) >= 10 and len(by_keyword) >= 10
    long_page = [hit for hit in result.hits if hit.path == "upgrading.md"]
    assert sum(hit.vector_rank is not None for hit in long_page) >= 30
    assert len({hit.path for hit in result.hits}) >= 10


def test_pasted_identifier_gets_the_identifier_weight(help_center: Path) -> None:
    weights = FusionWeights(
        keyword_plain=0.0, keyword_identifier=1.0, quoted_coverage=1.01, page_topic=0.0
    )

    plain = retrieve(question="refund for annual plan", rerank=False, weights=weights, limit=20)
    pasted = retrieve(question="what does E4012 mean", rerank=False, weights=weights, limit=20)

    assert [h.similarity for h in plain.hits] == sorted(
        (h.similarity for h in plain.hits), reverse=True
    )
    assert pasted.hits[0].path == "webhooks/events.md"
    assert [h.keyword_score for h in pasted.hits] == sorted(
        (h.keyword_score for h in pasted.hits), reverse=True
    )


def test_a_question_quoting_a_page_gets_the_quoted_weight(help_center: Path) -> None:
    weights = FusionWeights(keyword_plain=0.0, keyword_quoted=1.0, page_topic=0.0)

    # the fused order itself (a reranking stage would reorder it)
    quoting = retrieve(
        question="prorated refund within 60 days of payment",
        weights=weights,
        limit=20,
        rerank=False,
    )
    paraphrase = retrieve(
        question="can I get my money back", weights=weights, limit=20, rerank=False
    )

    assert quoting.keyword_coverage == pytest.approx(1.0)
    assert [h.keyword_score for h in quoting.hits] == sorted(
        (h.keyword_score for h in quoting.hits), reverse=True
    )
    assert (paraphrase.keyword_coverage or 0) < 0.9
    assert [h.similarity for h in paraphrase.hits] == sorted(
        (h.similarity for h in paraphrase.hits), reverse=True
    )


def test_an_identifier_the_index_cannot_find_exactly_still_finds_its_words(
    help_center: Path,
) -> None:
    # given an identifier the english index cuts down to one word ("after" is a stop word)
    cut = retrieve(question="what does starting_after do", rerank=False)
    # and beside one, an identifier the index can find
    found = retrieve(question="E4012 with starting_after", rerank=False)

    # then neither fails, and the findable one ranks its page first
    assert not cut.degraded
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

    monkeypatch.setattr(hybrid, "_candidate_tsquery", lambda terms: "&&&")

    result = retrieve(question="what does E4012 mean for my card")

    assert result.degraded and result.failed_stages == ["keyword"]
    assert _paths(result)[0] == "webhooks/events.md"
    assert all(hit.keyword_rank is None for hit in result.hits)


class _BrokenReranker:
    name = "test/broken"
    scores_relevance = False

    def rerank(self, *, question: object, hits: list[object]) -> list[float]:
        raise RerankError("reranker timed out")


class _ReverseReranker:
    name = "test/reverse"
    scores_relevance = False

    def rerank(self, *, question: object, hits: list[object]) -> list[float]:
        return [float(i) for i in range(len(hits))]


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
    monkeypatch.setattr(hybrid, "_candidate_tsquery", lambda terms: "&&&")

    with pytest.raises(RetrievalUnavailable, match="every retrieval leg failed"):
        retrieve(question="refund", embedder=broken)


def test_only_leg_failing_is_a_clear_error(help_center, monkeypatch) -> None:
    from search import hybrid

    monkeypatch.setattr(hybrid, "_candidate_tsquery", lambda terms: "&&&")

    with pytest.raises(RetrievalUnavailable, match="keyword"):
        retrieve(question="refund", legs=("keyword",))


def test_a_deep_search_ranks_at_least_ten_distinct_pages(tmp_path: Path, local_embedder) -> None:
    # given twelve pages that each say a little about billing, several sections each
    root = tmp_path / "many"
    for number in range(12):
        _write(
            root,
            f"billing/page-{number:02d}.md",
            f"# Billing topic {number}\n\n## Invoices\n\nInvoices for plan {number} are monthly."
            f"\n\n## Payments\n\nPayments for plan {number} are taken by card.\n",
        )
    corpus_sync(directory=root, embedder=local_embedder, actor=SYSTEM)

    # when the evaluation asks for a deep ranking
    result = retrieve(question="how are invoices paid", limit=50, candidates=50, rerank=False)

    # then the chunks reach well beyond one or two pages
    assert len({hit.path for hit in result.hits}) >= 10


@pytest.fixture
def numbers_center(tmp_path: Path, cached_embedder) -> Path:
    # given one page whose heading names a status code, one that uses numbers as quantities,
    # and an internal page whose heading names a number the public never sees
    root = tmp_path / "numbers"
    _write(
        root,
        "api/errors.md",
        "# API errors\n\n## 404: Not found\n\nThe resource does not exist or you may not see it.\n",
    )
    _write(
        root,
        "plans/limits.md",
        "# Plan limits\n\n## Requests\n\nEach plan allows 100 requests per minute since 2025; "
        "a streaming connection counts as one request, even one that gets a 404.\n",
    )
    _write(
        root,
        "internal/quotas.md",
        "---\ntitle: Quotas\naudience: internal\n---\n# Quotas\n\n## 2025 budget\n\n"
        "The 2025 budget allows 100 seats.\n",
    )
    corpus_sync(directory=root, embedder=cached_embedder, actor=SYSTEM)
    return root


def test_a_number_a_heading_names_is_an_identifier(numbers_center: Path) -> None:
    result = retrieve(question="the streaming api gets 404", rerank=False)

    assert result.identifier_phrases == ("404",)


def test_a_number_used_as_a_quantity_is_not_an_identifier(numbers_center: Path) -> None:
    # "100" and "2025" occur in text only (and 2025 in an internal heading the asker cannot see)
    result = retrieve(question="are 100 requests per minute allowed in 2025", rerank=False)

    assert result.identifier_phrases == ()
    assert _paths(result)[0] == "plans/limits.md"
    staff = retrieve(question="budget for 2025", audiences=ALL_AUDIENCES, rerank=False)
    assert staff.identifier_phrases == ("2025",)


def test_hits_carry_their_length_and_their_pages_length(help_center: Path) -> None:
    result = retrieve(question="refund for annual plan", rerank=False, limit=20)

    for hit in result.hits:
        chunk = Chunk.objects.get(pk=hit.chunk_id)
        assert hit.token_count == chunk.token_count > 0
        assert (
            hit.page_chunks
            == Chunk.objects.filter(
                document_id=hit.document_id, embedding_model=chunk.embedding_model
            ).count()
        )


def test_the_local_stage_orders_the_candidates_and_the_confidence_stays_the_cosine(
    help_center: Path,
) -> None:
    from search.rerankers.local import LocalRanker

    fused = retrieve(question="refund for annual plan", rerank=False, limit=20)
    result = retrieve(question="refund for annual plan", reranker=LocalRanker(), limit=20)

    assert result.reranker == "local/ranker" and not result.degraded
    assert sorted(hit.chunk_id for hit in result.hits) == sorted(h.chunk_id for h in fused.hits)
    scores = [hit.rerank_score for hit in result.hits]
    assert all(score is not None for score in scores)
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]
    # Its scores order one question's candidates; they are no confidence.
    assert result.confidence == max(hit.similarity or 0.0 for hit in result.hits)


def test_reranker_local_is_the_local_stage(settings) -> None:
    from search.rerankers import get_reranker
    from search.rerankers.local import LocalRanker

    settings.RERANKER = "local"
    get_reranker.cache_clear()
    try:
        assert isinstance(get_reranker(), LocalRanker)
    finally:
        get_reranker.cache_clear()


@pytest.fixture
def options_center(tmp_path: Path, cached_embedder) -> Path:
    # given a settings reference whose modules each open with a short introduction naming the
    # module twice, and describe their options in a table of the same sentences but the name
    root = tmp_path / "options"
    modules = [
        "Docker context",
        "Kubernetes context",
        "Git branch",
        "Python version",
        "Node version",
        "Git commit",
        "Memory usage",
        "Battery level",
    ]
    sections = []
    for module in modules:
        key = module.lower().replace(" ", "_")
        sections.append(
            f"## {module}\n\nThe `{key}` module shows the currently active {module} if it "
            f"is not the default one, or if a {module} is set in the environment (a {module} "
            f"set there overrides the {module} in use).\n\n### Options\n\n"
            "| Option | Default | Description |\n|---|---|---|\n"
            "| `format` | `'via $symbol'` | The format for the module. |\n"
            f"| `symbol` | `'*'` | The symbol used before displaying the {module}. |\n"
            "| `only_with_files` | `true` | Only show when there's a match. |\n"
            "| `detect_extensions` | `[]` | Which extensions should trigger this module. |\n"
            "| `detect_files` | `['compose.yml', 'Dockerfile']` | Which filenames should "
            "trigger this module. |\n"
            "| `detect_folders` | `[]` | Which folders should trigger this module. |\n"
            "| `style` | `'blue bold'` | The style for the module. |\n"
            f"| `disabled` | `false` | Disables the `{key}` module. |\n"
        )
    _write(root, "config.md", "# Configuration\n\n" + "\n".join(sections))
    corpus_sync(directory=root, embedder=cached_embedder, actor=SYSTEM)
    return root


def test_a_question_quoting_a_row_ranks_the_row_over_a_section_naming_its_rarest_words(
    options_center: Path,
) -> None:
    # when a question quotes an option's description word for word
    result = retrieve(
        question="The symbol used before displaying the Docker context.", rerank=False, limit=5
    )

    # then the options table that says it comes first, not the introduction that names
    # "Docker context" three times in fewer words (BM25 weighs each word alone)
    assert result.keyword_coverage == pytest.approx(1.0)
    assert result.hits[0].heading_path == "Configuration > Docker context > Options"
    assert result.hits[0].phrase_share == pytest.approx(1.0)
    introduction = next(h for h in result.hits if h.heading_path.endswith("> Docker context"))
    assert introduction.phrase_share is not None and introduction.phrase_share < 0.5


def test_phrases_are_read_only_for_a_quote_of_more_than_a_few_words(
    options_center: Path,
) -> None:
    # "docker context symbol" is two phrases: a query, not a quote
    short = retrieve(question="docker context symbol", rerank=False, limit=5)
    # a question whose words no one passage holds does not quote the docs
    paraphrase = retrieve(
        question="which character appears in front of the container runtime I am using",
        rerank=False,
        limit=5,
    )

    assert short.keyword_coverage == pytest.approx(1.0)
    assert (paraphrase.keyword_coverage or 0) < 0.9
    assert all(hit.phrase_share is None for hit in short.hits + paraphrase.hits)


def test_a_phrase_keeps_the_distance_stop_words_make_even_when_a_word_repeats(
    options_center: Path,
) -> None:
    # given a question whose second "the" the keyword terms drop as a repeat
    embedding_model = EmbeddingModel.objects.active().get()
    terms = search.terms.keyword_terms(
        embedding_model=embedding_model,
        keywords=keyword_query("The symbol used before displaying the Docker context"),
        audiences=("public",),
    )

    # then "displaying the Docker" is two positions apart, as in a chunk that says it
    assert [(p.first, p.second, p.distance) for p in terms.phrases] == [
        ("symbol", "use", 1),
        ("use", "display", 2),
        ("display", "docker", 2),
        ("docker", "context", 1),
    ]
    assert all(phrase.weight > 0 for phrase in terms.phrases)


def test_a_typing_slip_in_a_quote_is_read_as_the_word_in_its_phrases(
    options_center: Path,
) -> None:
    # given a quote with "symbol" mistyped, a word no chunk holds but one slip from one that does
    embedding_model = EmbeddingModel.objects.active().get()
    terms = search.terms.keyword_terms(
        embedding_model=embedding_model,
        keywords=keyword_query("The symbl used before displaying the Docker context"),
        audiences=("public",),
    )

    # then its phrases read it as the indexed word, so a chunk holding the quote holds them
    assert "symbol" in terms.lexemes
    assert (terms.phrases[0].first, terms.phrases[0].second) == ("symbol", "use")
    result = retrieve(
        question="The symbl used before displaying the Docker context.", rerank=False, limit=5
    )
    assert result.hits[0].heading_path == "Configuration > Docker context > Options"
    assert result.hits[0].phrase_share == pytest.approx(1.0)


@pytest.fixture
def cross_reference_center(tmp_path: Path, cached_embedder) -> Path:
    # given a page about errors whose "Logging" section only sends the reader to the logging
    # page, and a logging page whose many other sections pull its topic away from the question
    root = tmp_path / "docs"
    _write(
        root,
        "errors.md",
        "# Handling Application Errors\n\nApplications fail and servers crash. Sooner or later "
        "you will see an exception in production, even if your code is perfect.\n\n"
        "## Error handlers\n\nAn error handler returns a response when a type of error is "
        "raised, such as a crash in a view or a page that is not found.\n\n"
        "## Custom error pages\n\nYou can show your own page for a 404 or a 500 error instead "
        "of the default one, so visitors see your site's layout when something breaks.\n\n"
        "## Logging\n\nSee [Logging](logging.md) for information about how to log exceptions, "
        "such as by emailing them to admins.\n",
    )
    _write(
        root,
        "logging.md",
        "# Logging\n\nThe application writes log messages through Python's standard logging "
        "module.\n\n## Basic configuration\n\nConfigure the log level and the log format as "
        "early as possible, before the application object is created.\n\n## Default handler\n\n"
        "If you do not configure logging, a default handler writes messages to the stream of "
        "the web server.\n\n## Email errors to admins\n\nOn a remote server you rarely read the "
        "log file. To hear about problems at once, add an SMTP handler that sends a message to "
        "the administrators' addresses for every record logged at the error level.\n\n"
        "## Injecting request information\n\nA formatter can add the request's URL and the "
        "remote address to each record.\n\n## Other libraries\n\nOther packages log too; "
        "attach your handlers to the root logger to see their messages.\n",
    )
    for number, topic in enumerate(["Deploying", "Configuration", "Testing", "Templates"]):
        _write(
            root,
            f"guide-{number}.md",
            f"# {topic}\n\n## Overview\n\n{topic} of the application is described here, "
            "with examples for a production setup.\n",
        )
    corpus_sync(directory=root, embedder=cached_embedder, actor=SYSTEM)
    return root


def test_a_section_that_only_sends_the_reader_elsewhere_ranks_the_page_it_names_first(
    cross_reference_center: Path,
) -> None:
    # when a question is as close to the cross-reference as to the section it points to
    result = retrieve(
        question="When the site crashes in production I'd like the admins to get an email "
        "with the error.",
        rerank=False,
        limit=5,
    )

    # then the page that says how comes first, the reference that names it right after (the
    # errors page, about the question as a whole, ranked first without the reference's rule)
    first, second = result.hits[:2]
    assert (first.path, first.heading_path) == ("logging.md", "Logging > Email errors to admins")
    assert second.heading_path == "Handling Application Errors > Logging"
    assert second.refers_to == "logging.md" and first.refers_to is None
    assert first.evidence()["refers_to"] is None and second.evidence()["refers_to"] == "logging.md"
