"""Retrieval for one question: embed ‖ keyword terms → hybrid SQL → rerank, degrading per stage.

Losing a leg costs quality, not the answer: embedder down → keyword leg alone; keyword query
error → vector leg alone; reranker down → fused order. Each failure is recorded on the result
(``degraded``, the stage, a one-line reason) and timed; only losing every leg is an error.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence

import structlog
from django.db import DEFAULT_DB_ALIAS, DatabaseError, transaction

from kb.chunking import embedding_text
from kb.embedders import Embedder, embedder_for
from kb.errors import one_line
from kb.models import EmbeddingModel
from kb.runtime.db_router import read_alias, replica_reads
from kb.selectors.access import PUBLIC_AUDIENCES
from search.fusion import FusionWeights
from search.hybrid import (
    CANDIDATES,
    HybridRows,
    chunks_still_visible,
    common_words,
    hybrid_search,
    unknown_names,
)
from search.keywords import KeywordQuery, keyword_query, proper_names
from search.rerankers import get_reranker
from search.rerankers.base import Reranker, RerankError
from search.results import RetrievalResult, RetrievalUnavailable

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
        try:
            # The active model's own embedder: its vectors are the only ones this query compares.
            embedder = embedder or embedder_for(embedding_model.key)
            if embedder.key != embedding_model.key:
                raise RuntimeError(
                    f"configured embedder {embedder.key} is not the active model "
                    f"{embedding_model.key}"
                )
            query_vector = embedder.embed_query(question).tolist()
        except Exception as exc:  # any embedder failure degrades to keyword-only
            errors["embed"] = one_line(exc)
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
    vector_ok = query_vector is not None and "sql" not in errors
    keyword_ok = keywords is not None and not {"keyword", "sql"} & errors.keys()
    if not (vector_ok or keyword_ok):
        raise RetrievalUnavailable(
            f"every retrieval leg failed: {'; '.join(f'{k}: {v}' for k, v in errors.items())}"
        )

    hits = list(rows.candidates)
    if hits and read_alias() != DEFAULT_DB_ALIAS:
        # Read on a replica: only what the primary still holds and shows may be cited.
        visible = chunks_still_visible(
            chunk_ids=[hit.chunk_id for hit in hits],
            embedding_model=embedding_model,
            audiences=audiences,
        )
        hits = [hit for hit in hits if hit.chunk_id in visible]
    reranker_name = "none"
    if rerank and hits:
        stage_started = time.perf_counter()
        try:
            reranker = reranker or get_reranker()
            if reranker is not None:
                reranker_name = reranker.name
                scores = reranker.rerank(
                    question=question,
                    passages=[embedding_text(h.title, h.heading_path, h.text) for h in hits],
                )
                if len(scores) != len(hits):
                    raise RerankError(f"{len(scores)} scores for {len(hits)} passages")
                reranked = sorted(
                    zip(hits, (float(score) for score in scores), strict=True),
                    key=lambda scored: scored[1],
                    reverse=True,
                )
                hits = [dataclasses.replace(hit, rerank_score=score) for hit, score in reranked]
        except Exception as exc:  # a reranker failure keeps the fused order
            errors["rerank"] = one_line(exc)
        timings["rerank"] = (time.perf_counter() - stage_started) * 1000

    names = _unknown_names(
        question=question, embedding_model=embedding_model, audiences=audiences, timings=timings
    )
    timings["total"] = (time.perf_counter() - started) * 1000
    result = RetrievalResult(
        question=question,
        hits=hits[:limit],
        candidates=len(rows.candidates),
        vector_candidates=rows.vector_candidates,
        keyword_candidates=rows.keyword_candidates,
        embedding_model=embedding_model.key,
        reranker=reranker_name,
        degraded=bool(errors),
        failed_stages=list(errors),
        errors=errors,
        timings_ms={k: round(v, 2) for k, v in timings.items()},
        unknown_names=names,
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


def words_common_to_most_pages(*, words: Sequence[str], audiences: Sequence[str]) -> set[str]:
    """Which of ``words`` more than half the pages the asker may see mention (see
    ``search.hybrid.common_words``): a hint for the no-answer decision, so an error here only
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
