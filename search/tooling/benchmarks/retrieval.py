"""Retrieval benchmark at scale: hybrid SQL latency and index use at N chunks, full retrieval.

Runs in a throwaway database (created and dropped here) filled with a synthetic index built from
the sample corpus (see ``search.tooling.benchmarks.synthetic``). ``search_benchmark`` measures and
returns a ``SearchBenchReport``; the ``search_bench`` command parses its options and prints the
report. Progress lines (the 100k-chunk build takes minutes) go to the ``progress`` callback.
Timings on shared machines are noisy: read them as a range.
"""

from __future__ import annotations

import re
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import psycopg
from django.conf import settings
from django.db import connection, connections

from kb.embedders import get_embedder
from kb.models import EmbeddingModel
from kb.services import embedding_model_register, hnsw_index_create
from kb.tooling.benchmarking import (
    BenchmarkError,
    percentiles,
    questions_cycle,
    quiet,
    throwaway_database,
)
from search.hybrid import CANDIDATES
from search.keywords import keyword_query
from search.services import PUBLIC_AUDIENCES, hybrid_search, retrieve
from search.terms import term_weights
from search.tooling.benchmarks.plans import (
    VECTOR_LITERAL,
    StatementCapture,
    cte_milliseconds,
    explain_as_run,
    index_definition,
    relevant_lines,
    search_settings,
)
from search.tooling.benchmarks.recall import RecallPoint, recall_measure
from search.tooling.benchmarks.synthetic import (
    CHUNKS_PER_DOCUMENT,
    SeedChunk,
    chunks_insert,
    corpus_identifiers,
    documents_insert,
    seed_chunks,
    seeds_load,
    synthetic_vectors,
    vectors_copy,
)

SQL_P50_TARGET_MS = 15.0
SQL_P95_TARGET_MS = 40.0
RETRIEVAL_P50_TARGET_MS = 250.0
WARM_UP = 20
BATCH_ROWS = 10_000
GIN_INDEX = "kb_chunk_tsv_gin"
# Enough for the 100k-chunk HNSW graph to fit in memory while it is built: with the 64MB default
# it does not, and the build took 65 s instead of 22 s here. 1M chunks need ~4GB (see
# docs/operations.md, "Sizing").
BUILD_MAINTENANCE_WORK_MEM = "1GB"
RECALL_QUERIES = 200
DATABASE_NAME = "test_groundwork_search_bench"

Percentiles = dict[int, float]  # p50, p95, p99 (kb.tooling.benchmarking.percentiles)


@dataclass(frozen=True)
class HnswOptions:
    """How the benchmark builds and searches the HNSW index (the defaults are the settings')."""

    m: int
    ef_construction: int
    maintenance_work_mem: str = BUILD_MAINTENANCE_WORK_MEM
    ef_search: tuple[int, ...] = ()  # recall is measured at each; empty: HNSW_EF_SEARCH only

    @classmethod
    def from_settings(cls) -> HnswOptions:
        return cls(m=settings.HNSW_M, ef_construction=settings.HNSW_EF_CONSTRUCTION)

    def __str__(self) -> str:
        return (
            f"m {self.m}, ef_construction {self.ef_construction}, "
            f"maintenance_work_mem {self.maintenance_work_mem}"
        )


@dataclass(frozen=True)
class IndexBuild:
    documents: int
    load_seconds: float  # documents and chunks written, before any index
    gin_seconds: float
    hnsw_seconds: float
    hnsw_peak_mb: float | None  # peak memory (PSS) of the build's processes; None if unreadable
    hnsw_spilled: bool  # the graph outgrew maintenance_work_mem during the build (slow)
    table_bytes: int  # kb_chunk with its TOAST
    hnsw_bytes: int
    gin_bytes: int
    database_bytes: int


@dataclass(frozen=True)
class HybridTimings:
    """Hybrid SQL latency, as retrieve() sends it, over the timed questions."""

    percentiles: Percentiles
    by_kind: dict[str, tuple[int, Percentiles]]  # "identifier" / "plain": (questions, ms)
    slowest: list[tuple[float, str]]  # (ms, question), the three slowest


@dataclass(frozen=True)
class ShownPlan:
    label: str  # "median" or "slowest"
    execution_ms: float
    question: str
    lines: list[str]  # vector literals elided


@dataclass(frozen=True)
class PlanEvidence:
    """EXPLAIN (ANALYZE, BUFFERS) of the hybrid SQL for every distinct question, unforced."""

    plans: int
    hnsw: int  # plans using the HNSW index
    gin: int  # plans using the GIN index
    keyword_plans: int  # plans whose keyword leg looked up candidates (terms not all too common)
    jit: int
    seq_scan: int  # plans reading kb_chunk by seq scan
    execution_ms: float  # median
    leg_ms: dict[str, Percentiles]  # per CTE: vector_leg, keyword_leg
    hnsw_index: str
    shown: list[ShownPlan]


@dataclass(frozen=True)
class RetrievalTimings:
    """Full retrieve() latency, embedding each question live."""

    percentiles: Percentiles
    stages: dict[str, float]  # median ms per stage
    reranker: str
    # The local ranking stage alone over STAGE_CANDIDATES fused candidates of each question, in
    # this process (one core), whichever reranker is configured.
    stage_percentiles: Percentiles | None = None


@dataclass(frozen=True)
class SearchBenchReport:
    chunks: int
    build: IndexBuild
    server_settings: str  # pgvector version and the search-relevant server settings
    sql: HybridTimings
    explain: PlanEvidence
    retrieval: RetrievalTimings
    hnsw: HnswOptions
    recall: list[RecallPoint]
    seconds: float  # the whole run


def search_benchmark(
    *,
    corpus: Path,
    chunks: int,
    questions: int,
    keep: bool = False,
    full_plans: bool = False,
    hnsw: HnswOptions | None = None,
    recall_queries: int = RECALL_QUERIES,
    progress: Callable[[str], None],
) -> SearchBenchReport:
    """Build a synthetic ``chunks``-chunk index from ``corpus`` (its ``*.md`` pages and the
    questions of its ``eval.jsonl``) in a throwaway database, and measure it. ``keep`` leaves
    the database behind; ``full_plans`` keeps every line of the EXPLAIN plans shown; ``hnsw``
    says how the HNSW index is built and at which ``ef_search`` its recall is measured,
    against exact search, on ``recall_queries`` queries."""
    hnsw = hnsw or HnswOptions.from_settings()
    run_started = time.perf_counter()
    steps = _Steps(progress)
    embedder = get_embedder()

    seeds = seed_chunks(corpus, embedder)
    steps.step(f"embedding {len(seeds)} sample-corpus chunks (the vectors' building blocks)")
    started = time.perf_counter()
    seed_vectors = embedder.embed_documents([seed.embedding_text for seed in seeds])
    steps.done(started)
    identifiers = corpus_identifiers(seeds)
    asked = questions_cycle(corpus / "eval.jsonl", WARM_UP + questions)
    unique = sorted(set(asked))
    steps.step(f"embedding {len(unique)} eval questions once (so only the SQL is timed)")
    started = time.perf_counter()
    question_vectors = dict(zip(unique, embedder.embed_documents(unique).tolist(), strict=True))
    steps.done(started)

    steps.step(f"creating the throwaway database {DATABASE_NAME}")
    with throwaway_database(DATABASE_NAME, keep=keep):
        model = embedding_model_register(embedder=embedder)
        build = _index_build(
            model, seeds, seed_vectors, identifiers, chunks=chunks, hnsw=hnsw, steps=steps
        )
        server_settings = search_settings()
        sql = _hybrid_time(model, asked, question_vectors, steps=steps)
        explain = _plans_explain(model, unique, question_vectors, full=full_plans, steps=steps)
        retrieval = _retrieval_time(asked, steps=steps)
        queries = _recall_queries(seed_vectors, question_vectors, recall_queries)
        steps.step(
            f"HNSW recall@10 against exact search on {len(queries)} queries "
            f"({min(len(unique), len(queries))} eval questions, the rest synthetic)"
        )
        recall = recall_measure(
            model,
            queries,
            PUBLIC_AUDIENCES,
            ef_search=hnsw.ef_search or (settings.HNSW_EF_SEARCH,),
            progress=steps.say,
        )
    return SearchBenchReport(
        chunks=chunks,
        build=build,
        server_settings=server_settings,
        sql=sql,
        explain=explain,
        retrieval=retrieval,
        hnsw=hnsw,
        recall=recall,
        seconds=time.perf_counter() - run_started,
    )


def _recall_queries(
    seed_vectors: np.ndarray, question_vectors: dict[str, list[float]], count: int
) -> np.ndarray:
    """The eval questions' own vectors, then synthetic ones (drawn like the chunks') up to
    ``count``: real questions sit where real askers' do, the rest give the count."""
    real = np.asarray(list(question_vectors.values()), dtype=np.float32)[:count]
    missing = count - len(real)
    if missing <= 0:
        return real
    synthetic, _, _ = synthetic_vectors(seed_vectors, missing, np.random.default_rng(20261201))
    return np.concatenate([real, synthetic]) if len(real) else synthetic


class _Steps:
    """``step...`` then ``  done in N s`` lines, through the caller's progress callback."""

    def __init__(self, progress: Callable[[str], None]) -> None:
        self.say = progress

    def step(self, message: str) -> None:
        self.say(f"{message}...")

    def done(self, started: float) -> float:
        seconds = time.perf_counter() - started
        self.say(f"  done in {seconds:.1f} s")
        return seconds


# --- Building the index ---------------------------------------------------------------------------


def _index_build(
    model: EmbeddingModel,
    seeds: list[SeedChunk],
    seed_vectors: np.ndarray,
    identifiers: list[str],
    *,
    chunks: int,
    hnsw: HnswOptions,
    steps: _Steps,
) -> IndexBuild:
    hnsw_definition = index_definition(model.hnsw_index_name)
    gin_definition = index_definition(GIN_INDEX)
    documents = -(-chunks // CHUNKS_PER_DOCUMENT)
    with connection.cursor() as cursor:
        # Both indexes are built once after loading: faster than maintaining them per row.
        cursor.execute(f"DROP INDEX {model.hnsw_index_name}, {GIN_INDEX}")
        cursor.execute("SELECT setseed(0.20261129)")
        steps.step(f"inserting {documents:,} documents (10% internal, 5% retired)")
        first_document = documents_insert(cursor, seeds, documents)
        seeds_load(cursor, seeds)
        rng = np.random.default_rng(20261129)
        loading = time.perf_counter()
        for first in range(0, chunks, BATCH_ROWS):
            count = min(BATCH_ROWS, chunks - first)
            vectors, seed_a, seed_b = synthetic_vectors(seed_vectors, count, rng)
            vectors_copy(cursor, vectors, seed_a, seed_b, first_row=first)
            chunks_insert(cursor, model, identifiers, first_document=first_document, batch=count)
            done = first + count
            steps.say(
                f"  chunks {done:>9,}/{chunks:,} ({done / chunks:4.0%})  "
                f"{time.perf_counter() - loading:6.1f} s"
            )
        cursor.execute("DROP TABLE bench_vector, bench_seed")
        load_seconds = time.perf_counter() - loading

        steps.step(f"building {GIN_INDEX}")
        started = time.perf_counter()
        cursor.execute(gin_definition)
        gin_seconds = steps.done(started)

        steps.step(f"building {model.hnsw_index_name} ({hnsw}, for the build only)")
        cursor.execute("SET maintenance_work_mem = %s", [hnsw.maintenance_work_mem])
        cursor.execute("SELECT pg_backend_pid()")
        build_pid = cursor.fetchone()[0]
        notices: list[str] = []
        raw = connection.connection

        def notice_keep(diagnostic: psycopg.errors.Diagnostic) -> None:
            notices.append(diagnostic.message_primary or "")

        raw.add_notice_handler(notice_keep)
        started = time.perf_counter()
        try:
            with _index_build_progress(steps.say, build_pid=build_pid) as memory:
                # The production statement, so the index is what kb.services creates.
                hnsw_index_create(model, m=hnsw.m, ef_construction=hnsw.ef_construction)
        finally:
            raw.remove_notice_handler(notice_keep)
        hnsw_seconds = steps.done(started)
        spilled = any("no longer fits into maintenance_work_mem" in notice for notice in notices)
        for notice in notices:
            steps.say(f"  pgvector: {notice}")
        cursor.execute("RESET maintenance_work_mem")
        if _without_parameters(index_definition(model.hnsw_index_name)) != _without_parameters(
            hnsw_definition
        ):
            raise BenchmarkError("the rebuilt HNSW index differs from the registered one")

        steps.step("VACUUM (ANALYZE): planner statistics and a settled visibility map")
        started = time.perf_counter()
        cursor.execute("VACUUM (ANALYZE) kb_document, kb_chunk")
        steps.done(started)
        cursor.execute(
            "SELECT pg_table_size('kb_chunk'), pg_relation_size(%s::regclass), "
            "pg_relation_size(%s::regclass), pg_database_size(current_database())",
            [model.hnsw_index_name, GIN_INDEX],
        )
        table_bytes, hnsw_bytes, gin_bytes, database_bytes = cursor.fetchone()
    steps.say(
        f"  sizes: kb_chunk {_mb(table_bytes)}, HNSW {_mb(hnsw_bytes)}, GIN {_mb(gin_bytes)}, "
        f"database {_mb(database_bytes)}; load, index builds and vacuum took "
        f"{time.perf_counter() - loading:.1f} s"
    )
    return IndexBuild(
        documents=documents,
        load_seconds=load_seconds,
        gin_seconds=gin_seconds,
        hnsw_seconds=hnsw_seconds,
        hnsw_peak_mb=memory.peak_mb,
        hnsw_spilled=spilled,
        table_bytes=table_bytes,
        hnsw_bytes=hnsw_bytes,
        gin_bytes=gin_bytes,
        database_bytes=database_bytes,
    )


def _mb(size: int) -> str:
    return f"{size / 2**20:,.0f} MB"


def _without_parameters(definition: str) -> str:
    """An index definition without its ``WITH (...)`` storage parameters."""
    return re.sub(r" WITH \([^)]*\)", "", definition)


class _BuildMemory:
    """The peak proportional set size (PSS) of an index build's backend and its parallel
    workers, sampled from /proc: only readable when the server runs on this machine."""

    def __init__(self) -> None:
        self.peak_mb: float | None = None

    def sample(self, pids: list[int]) -> None:
        total_kb = 0
        for pid in pids:
            try:
                with open(f"/proc/{pid}/smaps_rollup") as rollup:
                    total_kb += next(
                        int(line.split()[1]) for line in rollup if line.startswith("Pss:")
                    )
            except (OSError, StopIteration, ValueError):
                continue  # a worker that just ended, or a server on another machine
        if total_kb:
            self.peak_mb = max(self.peak_mb or 0.0, total_kb / 1024)


@contextmanager
def _index_build_progress(say: Callable[[str], None], *, build_pid: int) -> Iterator[_BuildMemory]:
    """Report pg_stat_progress_create_index every 10 s, and sample the build's memory every
    second, from a second connection."""
    stop = threading.Event()
    memory = _BuildMemory()

    def poll() -> None:
        try:
            ticks = 0
            while not stop.wait(1):
                ticks += 1
                with connections["default"].cursor() as cursor:
                    cursor.execute(
                        "SELECT pid FROM pg_stat_activity WHERE pid = %s OR leader_pid = %s",
                        [build_pid, build_pid],
                    )
                    memory.sample([row[0] for row in cursor.fetchall()])
                    if ticks % 10:
                        continue
                    cursor.execute(
                        "SELECT phase, blocks_done, blocks_total, tuples_done "
                        "FROM pg_stat_progress_create_index"
                    )
                    for phase, blocks_done, blocks_total, tuples_done in cursor.fetchall():
                        share = f"{blocks_done / blocks_total:.0%}" if blocks_total else "-"
                        peak = f", peak {memory.peak_mb:,.0f} MB" if memory.peak_mb else ""
                        say(f"  ... {phase}: heap blocks {share}, {tuples_done:,} tuples{peak}")
        finally:
            connections["default"].close()

    poller = threading.Thread(target=poll, name="index-build-progress", daemon=True)
    poller.start()
    try:
        yield memory
    finally:
        stop.set()
        poller.join()


# --- Measuring ------------------------------------------------------------------------------------


def _hybrid_time(
    model: EmbeddingModel, asked: list[str], vectors: dict[str, list[float]], *, steps: _Steps
) -> HybridTimings:
    steps.step(
        f"hybrid SQL: {len(asked) - WARM_UP} questions after {WARM_UP} warm-up, audience public"
    )
    timings: list[tuple[float, str, str]] = []
    for number, question in enumerate(asked):
        keywords = keyword_query(question)
        # Identifier questions get their own keyword weight; both kinds run both legs.
        kind = "identifier" if keywords.identifier_phrases else "plain"
        started = time.perf_counter()
        hybrid_search(
            embedding_model=model,
            query_vector=vectors[question],
            keywords=keywords,
            audiences=PUBLIC_AUDIENCES,
            limit=CANDIDATES,
        )
        elapsed = (time.perf_counter() - started) * 1000
        if number >= WARM_UP:
            timings.append((elapsed, question, kind))
    by_kind: dict[str, list[float]] = {}
    for ms, _, kind in timings:
        by_kind.setdefault(kind, []).append(ms)
    return HybridTimings(
        percentiles=percentiles([ms for ms, _, _ in timings]),
        by_kind={kind: (len(ms), percentiles(ms)) for kind, ms in sorted(by_kind.items())},
        slowest=[(ms, question) for ms, question, _ in sorted(timings, reverse=True)[:3]],
    )


def _plans_explain(
    model: EmbeddingModel,
    questions: list[str],
    vectors: dict[str, list[float]],
    *,
    full: bool,
    steps: _Steps,
) -> PlanEvidence:
    """EXPLAIN (ANALYZE, BUFFERS) of the exact statement hybrid_search sends, with the plan it
    runs with (the prepared statement's generic plan), unforced."""
    steps.step(f"EXPLAIN (ANALYZE, BUFFERS) of the hybrid SQL for {len(questions)} questions")
    plans: list[tuple[float, str, str]] = []
    selecting: list[str] = []  # the plans whose keyword leg looked up candidates of its own
    for question in questions:
        capture = StatementCapture()
        with connection.execute_wrapper(capture):
            hybrid_search(
                embedding_model=model,
                query_vector=vectors[question],
                keywords=keyword_query(question),
                audiences=PUBLIC_AUDIENCES,
                limit=CANDIDATES,
            )
        sql, params = capture.statements[-1]
        plan = explain_as_run(sql, params, options="ANALYZE, BUFFERS")
        match = re.search(r"Execution Time: ([\d.]+) ms", plan)
        plans.append((float(match.group(1)) if match else 0.0, question, plan))
        keywords = keyword_query(question)
        if (
            not keywords.is_empty
            and term_weights(embedding_model=model, keywords=keywords).selecting
        ):
            selecting.append(plan)
    plans.sort()
    shown = [
        ShownPlan(
            label=label,
            execution_ms=ms,
            question=question,
            lines=(
                [VECTOR_LITERAL.sub("'[...]'", line) for line in plan.splitlines()]
                if full
                else relevant_lines(plan)
            ),
        )
        for label, (ms, question, plan) in (
            ("median", plans[len(plans) // 2]),
            ("slowest", plans[-1]),
        )
    ]
    legs = {
        leg: [ms for _, _, plan in plans if (ms := cte_milliseconds(plan, leg)) is not None]
        for leg in ("vector_leg", "keyword_leg")
    }
    return PlanEvidence(
        plans=len(plans),
        hnsw=sum(model.hnsw_index_name in plan for _, _, plan in plans),
        gin=sum(GIN_INDEX in plan for plan in selecting),
        keyword_plans=len(selecting),
        jit=sum("JIT:" in plan for _, _, plan in plans),
        seq_scan=sum("Seq Scan on kb_chunk" in plan for _, _, plan in plans),
        execution_ms=statistics.median(ms for ms, _, _ in plans),
        leg_ms={leg: percentiles(ms) for leg, ms in legs.items() if ms},
        hnsw_index=model.hnsw_index_name,
        shown=shown,
    )


def _retrieval_time(asked: list[str], *, steps: _Steps) -> RetrievalTimings:
    steps.step(
        f"retrieve(): {len(asked) - WARM_UP} questions after {WARM_UP} warm-up, "
        "embedding each question live"
    )
    totals: list[float] = []
    stages: dict[str, list[float]] = {}
    reranker = "none"
    with quiet("groundwork.search"):
        for number, question in enumerate(asked):
            result = retrieve(question=question)
            if number < WARM_UP:
                continue
            if result.degraded:
                raise BenchmarkError(f"retrieval degraded during the benchmark: {result.errors}")
            reranker = result.reranker
            totals.append(result.timings_ms["total"])
            for stage, ms in result.timings_ms.items():
                stages.setdefault(stage, []).append(ms)
    return RetrievalTimings(
        percentiles=percentiles(totals),
        stages={stage: statistics.median(ms) for stage, ms in stages.items()},
        reranker=reranker,
        stage_percentiles=_stage_time(sorted(set(asked)), steps=steps),
    )


STAGE_CANDIDATES = 100


def _stage_time(questions: list[str], *, steps: _Steps) -> Percentiles:
    """The local ranking stage's features and model over ``STAGE_CANDIDATES`` fused candidates
    per question (five times each; the stage scores the first ``DEPTH`` when it serves): what
    it costs beside the statement."""
    from search.rerankers.features import RankingQuestion
    from search.rerankers.local import LocalRanker, stage_scores

    booster = LocalRanker().booster
    steps.step(f"the local ranking stage on {STAGE_CANDIDATES} candidates per question")
    timings = []
    for question in questions:
        result = retrieve(
            question=question, rerank=False, limit=STAGE_CANDIDATES, candidates=STAGE_CANDIDATES
        )
        asked = RankingQuestion.of(question, result)
        for _ in range(5):
            started = time.perf_counter()
            stage_scores(booster, asked, result.hits, depth=STAGE_CANDIDATES)
            timings.append((time.perf_counter() - started) * 1000)
    return percentiles(timings)
