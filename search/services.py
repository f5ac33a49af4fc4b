"""Retrieval for one question: embed ‖ keyword terms → hybrid SQL → fusion → rerank, degrading
per stage.

Losing a leg costs quality, not the answer: embedder down → keyword leg alone; keyword query
error → vector leg alone; reranker down → fused order. Each failure is recorded on the result
(``degraded``, the stage, a one-line reason) and timed; only losing every leg is an error.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence

import structlog
from django.db import DEFAULT_DB_ALIAS, DatabaseError, transaction

from kb.embedders import Embedder, embedder_for
from kb.errors import one_line
from kb.models import EmbeddingModel
from kb.runtime.db_router import read_alias, replica_reads
from kb.selectors.access import PUBLIC_AUDIENCES
from search.fusion import FusionWeights, fuse
from search.hybrid import CANDIDATES, LEG_DEPTH, CandidateRow, HybridQuery, hybrid_candidates
from search.keywords import KeywordQuery, keyword_query, proper_names
from search.references import referred_page
from search.rerankers import get_reranker
from search.rerankers.base import Reranker, RerankError
from search.rerankers.features import RankingQuestion
from search.results import Hit, HybridRows, RetrievalResult, RetrievalUnavailable
from search.selectors import chunks_still_visible, common_words, page_sections, unknown_names
from search.terms import keyword_terms

log = structlog.get_logger("groundwork.search")


@replica_reads()
def retrieve(
    *,
    question: str,
    audiences: Sequence[str] = PUBLIC_AUDIENCES,
    limit: int = 5,
    candidates: int = CANDIDATES,
    legs: Sequence[str] = ("vector", "keyword"),
    rerank: bool = True,
    embedder: Embedder | None = None,
    reranker: Reranker | None = None,
    weights: FusionWeights | None = None,
) -> RetrievalResult:
    started = time.perf_counter()
    timings: dict[str, float] = {}
    errors: dict[str, str] = {}
    embedding_model = EmbeddingModel.objects.active().first()
    if embedding_model is None:
        raise RetrievalUnavailable("no active embedding model: run kb_sync first")

    query_vector = None
    if "vector" in legs:
        stage_started = time.perf_counter()
        query_vector = _query_vector(
            question, embedding_model=embedding_model, embedder=embedder, errors=errors
        )
        timings["embed"] = (time.perf_counter() - stage_started) * 1000
    keywords = keyword_query(question) if "keyword" in legs else None
    rows = _run_hybrid(
        embedding_model=embedding_model,
        query_vector=query_vector,
        keywords=keywords,
        audiences=audiences,
        limit=candidates,
        weights=weights or FusionWeights(),
        errors=errors,
        timings=timings,
    )
    _check_a_leg_ran(vector=query_vector is not None, keyword=keywords is not None, errors=errors)

    hits = _still_visible(rows.candidates, embedding_model=embedding_model, audiences=audiences)
    reranker_name, scores_relevance = "none", False
    if rerank and hits:
        hits, reranker_name, scores_relevance = _reranked(
            RankingQuestion.of(question, rows, window=limit),
            hits,
            reranker=reranker,
            errors=errors,
            timings=timings,
        )
    names = _unknown_names(
        question=question, embedding_model=embedding_model, audiences=audiences, timings=timings
    )
    timings["total"] = (time.perf_counter() - started) * 1000
    return _result(
        question=question,
        hits=hits[:limit],
        rows=rows,
        embedding_model=embedding_model,
        reranker=reranker_name,
        rerank_scores_relevance=scores_relevance,
        errors=errors,
        timings=timings,
        unknown_names=names,
    )


def _check_a_leg_ran(*, vector: bool, keyword: bool, errors: dict[str, str]) -> None:
    """Raise ``RetrievalUnavailable`` when no leg that was asked for gave candidates."""
    vector_ok = vector and "sql" not in errors
    keyword_ok = keyword and not {"keyword", "sql"} & errors.keys()
    if not (vector_ok or keyword_ok):
        raise RetrievalUnavailable(
            f"every retrieval leg failed: {'; '.join(f'{k}: {v}' for k, v in errors.items())}"
        )


def _query_vector(
    question: str,
    *,
    embedding_model: EmbeddingModel,
    embedder: Embedder | None,
    errors: dict[str, str],
) -> list[float] | None:
    """The question's vector from the active model's own embedder (its vectors are the only
    ones this query compares); None, and the reason in ``errors``, when embedding fails."""
    try:
        embedder = embedder or embedder_for(embedding_model.key)
        if embedder.key != embedding_model.key:
            raise RuntimeError(
                f"configured embedder {embedder.key} is not the active model {embedding_model.key}"
            )
        return embedder.embed_query(question).tolist()
    except Exception as exc:  # any embedder failure degrades to keyword-only
        errors["embed"] = one_line(exc)
        return None


def _still_visible(
    hits: list[Hit], *, embedding_model: EmbeddingModel, audiences: Sequence[str]
) -> list[Hit]:
    """``hits`` as read, or, when read on a replica, only those the primary still holds and
    shows: only those may be cited."""
    if not hits or read_alias() == DEFAULT_DB_ALIAS:
        return list(hits)
    visible = chunks_still_visible(
        chunk_ids=[hit.chunk_id for hit in hits],
        embedding_model=embedding_model,
        audiences=audiences,
    )
    return [hit for hit in hits if hit.chunk_id in visible]


def _reranked(
    question: RankingQuestion,
    hits: list[Hit],
    *,
    reranker: Reranker | None,
    errors: dict[str, str],
    timings: dict[str, float],
) -> tuple[list[Hit], str, bool]:
    """``hits`` in the reranker's order, with its name ("none" when none is configured) and
    whether its scores are relevance on a fixed scale; on a reranker failure the fused order,
    and the reason in ``errors``."""
    stage_started = time.perf_counter()
    name, scores_relevance = "none", False
    try:
        reranker = reranker or get_reranker()
        if reranker is not None:
            name = reranker.name
            scores = reranker.rerank(question=question, hits=hits)
            if len(scores) != len(hits):
                raise RerankError(f"{len(scores)} scores for {len(hits)} passages")
            reranked = sorted(
                zip(hits, (float(score) for score in scores), strict=True),
                key=lambda scored: scored[1],
                reverse=True,
            )
            hits = [dataclasses.replace(hit, rerank_score=score) for hit, score in reranked]
            scores_relevance = reranker.scores_relevance
    except Exception as exc:  # a reranker failure keeps the fused order
        errors["rerank"] = one_line(exc)
    timings["rerank"] = (time.perf_counter() - stage_started) * 1000
    return hits, name, scores_relevance


def _result(
    *,
    question: str,
    hits: list[Hit],
    rows: HybridRows,
    embedding_model: EmbeddingModel,
    reranker: str,
    rerank_scores_relevance: bool,
    errors: dict[str, str],
    timings: dict[str, float],
    unknown_names: list[str],
) -> RetrievalResult:
    result = RetrievalResult(
        question=question,
        hits=hits,
        candidates=len(rows.candidates),
        vector_candidates=rows.vector_candidates,
        keyword_candidates=rows.keyword_candidates,
        embedding_model=embedding_model.key,
        reranker=reranker,
        rerank_scores_relevance=rerank_scores_relevance,
        degraded=bool(errors),
        failed_stages=list(errors),
        errors=errors,
        timings_ms={k: round(v, 2) for k, v in timings.items()},
        unknown_names=unknown_names,
        keyword_coverage=rows.keyword_coverage,
        identifier_phrases=rows.identifier_phrases,
        term_idfs=rows.term_idfs,
    )
    log.info(
        "retrieval_done",
        hits=len(result.hits),
        degraded=result.degraded,
        failed=",".join(result.failed_stages),
        **{f"{k}_ms": v for k, v in result.timings_ms.items()},
    )
    return result


def _unknown_names(
    *,
    question: str,
    embedding_model: EmbeddingModel,
    audiences: Sequence[str],
    timings: dict[str, float],
) -> list[str]:
    """Names in the question that no visible page mentions: a hint for the no-answer
    decision, never a reason to fail, so an error here only loses the hint."""
    names = proper_names(question)
    if not names:
        return []
    stage_started = time.perf_counter()
    try:
        with transaction.atomic(using=read_alias()):
            return unknown_names(names=names, embedding_model=embedding_model, audiences=audiences)
    except DatabaseError as exc:
        log.warning("unknown_names_failed", error=one_line(exc))
        return []
    finally:
        timings["names"] = (time.perf_counter() - stage_started) * 1000


# The answer step reads, after the hits, more sections of the pages the first hits come from:
# a question is often matched by one section of the page that answers it ("Overview",
# "Volume considerations") while another section states the answer. Among the answerable
# questions of the external answer sets' calibration halves, the answering section was among
# the ten hits for 70% (Fly.io), 72% (Hugo) and 93% (Plausible), and its page for 90%, 82%
# and 97%; with three more sections of each of the first two pages, 87%, 77% and 96%
# (docs/answers.md, "The passages the answer step sees").
SECTION_PAGES = 2
SECTIONS_PER_PAGE = 3


@replica_reads()
def with_page_sections(
    result: RetrievalResult,
    *,
    audiences: Sequence[str] = PUBLIC_AUDIENCES,
    pages: int = SECTION_PAGES,
    per_page: int = SECTIONS_PER_PAGE,
) -> list[Hit]:
    """``result``'s hits, then up to ``per_page`` other sections of each of the first ``pages``
    pages they come from: those holding the most of the question's IDF
    (``search.selectors.page_sections``), each marked ``page_section``. The sections are an
    aid to the answer, so an error reading them costs only them."""
    hits = list(result.hits)
    documents = list(dict.fromkeys(hit.document_id for hit in hits))[:pages]
    if not documents or not result.term_idfs:
        return hits
    try:
        with transaction.atomic(using=read_alias()):
            embedding_model = EmbeddingModel.objects.filter(key=result.embedding_model).first()
            if embedding_model is None:
                return hits
            rows = page_sections(
                documents=documents,
                beside=[hit.chunk_id for hit in hits],
                term_idfs=result.term_idfs,
                per_page=per_page,
                embedding_model=embedding_model,
                audiences=audiences,
            )
    except DatabaseError as exc:
        log.warning("page_sections_failed", error=one_line(exc))
        return hits
    added = [
        Hit(
            **row,
            vector_rank=None,
            keyword_rank=None,
            fused_score=0.0,
            similarity=None,
            page_section=True,
        )
        for row in rows
    ]
    return hits + _still_visible(added, embedding_model=embedding_model, audiences=audiences)


def words_common_to_most_pages(*, words: Sequence[str], audiences: Sequence[str]) -> set[str]:
    """Which of ``words`` more than half the pages the asker may see mention (see
    ``search.selectors.common_words``): a hint for the no-answer decision, so an error here only
    loses the hint."""
    embedding_model = EmbeddingModel.objects.active().first()
    if embedding_model is None or not words:
        return set()
    try:
        with transaction.atomic(using=read_alias()):
            return common_words(words=words, embedding_model=embedding_model, audiences=audiences)
    except DatabaseError as exc:
        log.warning("common_words_failed", error=one_line(exc))
        return set()


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
    """Finish the keyword query against the index (``search.terms``), run the legs that have
    input in one statement (``search.hybrid``), and fuse their scores (``search.fusion``)."""
    terms = None
    if keywords is not None and not keywords.is_empty:
        terms = keyword_terms(
            embedding_model=embedding_model, keywords=keywords, audiences=audiences
        )
    idfs = terms.idf_by_lexeme if terms is not None else {}
    query = HybridQuery(
        embedding_model=embedding_model,
        audiences=tuple(audiences),
        query_vector=query_vector,
        terms=terms if terms is not None and not terms.is_empty else None,
        leg_depth=leg_depth,
        identifier_bonus=weights.identifier_bonus,
        page_topic=bool(weights.page_topic),
        quoted_coverage=weights.quoted_coverage if weights.quoted_phrase else None,
    )
    if not query.uses_vector and not query.uses_keyword:
        return HybridRows(candidates=[], vector_candidates=0, keyword_candidates=0, term_idfs=idfs)
    found = hybrid_candidates(query)
    coverage = None
    if query.terms is not None and found.best_matched_idf is not None:
        coverage = min(float(found.best_matched_idf) / query.terms.question_idf, 1.0)
    keyword_weight = 0.0
    if query.terms is not None:
        keyword_weight = weights.keyword_weight(
            identifier=bool(query.terms.identifier_phrases),
            vector_leg=query.uses_vector,
            coverage=coverage or 0.0,
        )
    hits = _hits_fused(
        found.rows,
        keyword_weight=keyword_weight,
        page_topic=weights.page_topic,
        phrase_weight=weights.phrase_weight(coverage=coverage or 0.0),
    )
    return HybridRows(
        candidates=hits[: int(limit)],
        vector_candidates=found.vector_candidates,
        keyword_candidates=found.keyword_candidates,
        keyword_coverage=coverage,
        identifier_phrases=query.terms.identifier_phrases if query.terms is not None else (),
        term_idfs=idfs,
    )


def _hits_fused(
    rows: Sequence[CandidateRow], *, keyword_weight: float, page_topic: float, phrase_weight: float
) -> list[Hit]:
    """The statement's candidates as hits, best fused score first. Ties go to the better leg
    rank; a leg that did not rank a chunk puts it after every chunk it did (ranks run past
    the leg depth: the pages' best chunks follow it). A candidate that is a cross-reference
    to another candidate's page (``search.references``) names it in ``refers_to``."""
    pages = {row.path: row.document_id for row in rows}
    referred = [referred_page(row.text, path=row.path, pages=pages) for row in rows]
    fused = fuse(
        similarities=[row.similarity for row in rows],
        keyword_scores=[row.keyword_score for row in rows],
        vector_ranked=[row.vector_rank is not None for row in rows],
        keyword_ranked=[row.keyword_rank is not None for row in rows],
        keyword_weight=keyword_weight,
        pages=[row.document_id for row in rows],
        page_topics=[row.page_topic for row in rows],
        page_topic_weight=page_topic,
        phrase_shares=[row.phrase_share for row in rows],
        phrase_weight=phrase_weight,
        refers_to=[None if path is None else pages[path] for path in referred],
    )
    hits = [
        Hit(
            chunk_id=row.chunk_id,
            document_id=row.document_id,
            path=row.path,
            title=row.title,
            heading_path=row.heading_path,
            text=row.text,
            char_start=row.char_start,
            char_end=row.char_end,
            ordinal=row.ordinal,
            updated_on=row.updated_on,
            vector_rank=row.vector_rank,
            keyword_rank=row.keyword_rank,
            similarity=None if row.similarity is None else float(row.similarity),
            keyword_score=None if row.keyword_score is None else float(row.keyword_score),
            fused_score=score,
            page_topic=None if row.page_topic is None else float(row.page_topic),
            token_count=int(row.token_count),
            page_chunks=row.page_chunks,
            phrase_share=None if row.phrase_share is None else float(row.phrase_share),
            refers_to=refers_to,
        )
        for row, score, refers_to in zip(rows, fused, referred, strict=True)
    ]
    hits.sort(
        key=lambda hit: (
            -hit.fused_score,
            hit.vector_rank or math.inf,
            hit.keyword_rank or math.inf,
            hit.chunk_id,
        )
    )
    return hits


def _run_hybrid(
    *,
    embedding_model: EmbeddingModel,
    query_vector: list[float] | None,
    keywords: KeywordQuery | None,
    audiences: Sequence[str],
    limit: int,
    weights: FusionWeights,
    errors: dict[str, str],
    timings: dict[str, float],
) -> HybridRows:
    """One statement for both legs; if it fails, retry once without the keyword leg."""

    def run(keywords: KeywordQuery | None) -> HybridRows:
        with transaction.atomic(using=read_alias()):
            return hybrid_search(
                embedding_model=embedding_model,
                query_vector=query_vector,
                keywords=keywords,
                audiences=audiences,
                limit=limit,
                weights=weights,
            )

    stage_started = time.perf_counter()
    try:
        return run(keywords)
    except DatabaseError as exc:
        errors["keyword" if keywords is not None else "sql"] = one_line(exc)
        if keywords is not None and query_vector is not None:
            try:
                return run(None)
            except DatabaseError as retry_exc:
                errors["sql"] = one_line(retry_exc)
        return HybridRows(candidates=[], vector_candidates=0, keyword_candidates=0)
    finally:
        timings["sql"] = (time.perf_counter() - stage_started) * 1000
