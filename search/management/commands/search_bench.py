"""Retrieval benchmark at scale: hybrid SQL latency and index use at N chunks, full retrieval.

Runs in a throwaway database (created and dropped here) filled with a synthetic index built from
the sample corpus: chunk texts are the corpus's own sentences (so the GIN index sees real
vocabulary and identifiers) and vectors are mixtures of the corpus's real embeddings plus noise
(so HNSW sees the clustered geometry of real embeddings; uniform random vectors make it look
unrealistically bad or good). Timings on shared machines are noisy: read them as a range.
"""

from __future__ import annotations

import re
import statistics
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, connections

from kb.benchmarking import BenchmarkError, percentiles, throwaway_database
from kb.embedders import get_embedder
from kb.models import EmbeddingModel
from kb.services import embedding_model_register, hnsw_index_create
from search.benchmarks.plans import (
    VECTOR_LITERAL,
    StatementCapture,
    cte_milliseconds,
    index_definition,
    relevant_lines,
    search_settings,
)
from search.benchmarks.stats import questions_cycle, quiet
from search.benchmarks.synthetic import (
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
from search.hybrid import hybrid_search
from search.keywords import keyword_query
from search.services import PUBLIC_AUDIENCES, retrieve

SQL_P50_TARGET_MS = 15.0
SQL_P95_TARGET_MS = 40.0
RETRIEVAL_P50_TARGET_MS = 250.0
WARM_UP = 20
BATCH_ROWS = 10_000
CANDIDATES = 20  # what retrieve() asks hybrid_search for
GIN_INDEX = "kb_chunk_tsv_gin"
# Enough for the 100k-chunk HNSW graph to fit in memory while it is built: with the 64MB default
# it does not, and the build took 65 s instead of 22 s here.
BUILD_MAINTENANCE_WORK_MEM = "1GB"
DATABASE_NAME = "test_groundwork_search_bench"


class Command(BaseCommand):
    help = "Benchmark hybrid SQL and retrieval on a synthetic 100k-chunk index (make bench)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--chunks", type=int, default=100_000)
        parser.add_argument("--questions", type=int, default=200, help="timed, after a warm-up")
        parser.add_argument("--keep", action="store_true", help="keep the benchmark database")
        parser.add_argument("--corpus", type=Path, default=settings.BASE_DIR / "corpus")

    def handle(self, *args: object, **options: object) -> None:
        try:
            self._run(*args, **options)
        except BenchmarkError as exc:
            raise CommandError(str(exc)) from exc

    def _run(
        self,
        *args: object,
        chunks: int,
        questions: int,
        keep: bool,
        corpus: Path,
        **options: object,
    ) -> None:
        if chunks < 1000:
            raise CommandError("--chunks must be at least 1000")
        if questions < 10:
            raise CommandError("--questions must be at least 10")
        if not (corpus / "eval.jsonl").is_file():
            raise CommandError(f"no sample corpus at {corpus} (expected eval.jsonl and *.md)")
        run_started = time.perf_counter()
        self.verbosity = int(options.get("verbosity", 1))
        embedder = get_embedder()

        seeds = seed_chunks(corpus, embedder)
        self._step(f"embedding {len(seeds)} sample-corpus chunks (the vectors' building blocks)")
        started = time.perf_counter()
        seed_vectors = embedder.embed_documents([seed.embedding_text for seed in seeds])
        self._done(started)
        identifiers = corpus_identifiers(seeds)
        asked = questions_cycle(corpus / "eval.jsonl", WARM_UP + questions)
        unique = sorted(set(asked))
        self._step(f"embedding {len(unique)} eval questions once (so only the SQL is timed)")
        started = time.perf_counter()
        question_vectors = dict(zip(unique, embedder.embed_documents(unique).tolist(), strict=True))
        self._done(started)

        self._step(f"creating the throwaway database {DATABASE_NAME}")
        report: dict[str, object] = {}
        with throwaway_database(DATABASE_NAME, keep=keep):
            model = embedding_model_register(embedder=embedder)
            report["build"] = self._build_index(
                model, seeds, seed_vectors, identifiers, chunks=chunks
            )
            report["settings"] = search_settings()
            report["sql"] = self._time_hybrid(model, asked, question_vectors)
            report["explain"] = self._explain(model, unique, question_vectors)
            report["retrieval"] = self._time_retrieval(asked)
        if keep:
            self.stdout.write(
                f"kept database {DATABASE_NAME} (--keep); the next run replaces it, "
                f"or: DROP DATABASE {DATABASE_NAME}"
            )
        self._print(report, chunks=chunks, seconds=time.perf_counter() - run_started)

    # --- Building the index -----------------------------------------------------------------------

    def _build_index(
        self,
        model: EmbeddingModel,
        seeds: list[SeedChunk],
        seed_vectors: np.ndarray,
        identifiers: list[str],
        *,
        chunks: int,
    ) -> dict[str, object]:
        hnsw_definition = index_definition(model.hnsw_index_name)
        gin_definition = index_definition(GIN_INDEX)
        documents = -(-chunks // CHUNKS_PER_DOCUMENT)
        with connection.cursor() as cursor:
            # Both indexes are built once after loading: faster than maintaining them per row.
            cursor.execute(f"DROP INDEX {model.hnsw_index_name}, {GIN_INDEX}")
            cursor.execute("SELECT setseed(0.20261129)")
            self._step(f"inserting {documents:,} documents (10% internal, 5% retired)")
            first_document = documents_insert(cursor, seeds, documents)
            seeds_load(cursor, seeds)
            rng = np.random.default_rng(20261129)
            loading = time.perf_counter()
            for first in range(0, chunks, BATCH_ROWS):
                count = min(BATCH_ROWS, chunks - first)
                vectors, seed_a, seed_b = synthetic_vectors(seed_vectors, count, rng)
                vectors_copy(cursor, vectors, seed_a, seed_b, first_row=first)
                chunks_insert(
                    cursor, model, identifiers, first_document=first_document, batch=count
                )
                done = first + count
                self.stdout.write(
                    f"  chunks {done:>9,}/{chunks:,} ({done / chunks:4.0%})  "
                    f"{time.perf_counter() - loading:6.1f} s"
                )
            cursor.execute("DROP TABLE bench_vector, bench_seed")

            self._step(f"building {GIN_INDEX}")
            started = time.perf_counter()
            cursor.execute(gin_definition)
            gin_seconds = self._done(started)

            self._step(
                f"building {model.hnsw_index_name} (maintenance_work_mem "
                f"{BUILD_MAINTENANCE_WORK_MEM} for the build only)"
            )
            cursor.execute("SET maintenance_work_mem = %s", [BUILD_MAINTENANCE_WORK_MEM])
            started = time.perf_counter()
            with self._index_build_progress():
                # The production statement, so the index is exactly what kb.services creates.
                hnsw_index_create(model)
            hnsw_seconds = self._done(started)
            cursor.execute("RESET maintenance_work_mem")
            if index_definition(model.hnsw_index_name) != hnsw_definition:
                raise CommandError("the rebuilt HNSW index differs from the registered one")

            self._step("VACUUM (ANALYZE): planner statistics and a settled visibility map")
            started = time.perf_counter()
            cursor.execute("VACUUM (ANALYZE) kb_document, kb_chunk")
            self._done(started)
            cursor.execute(
                "SELECT pg_size_pretty(pg_relation_size(%s::regclass)), "
                "pg_size_pretty(pg_relation_size(%s::regclass)), "
                "pg_size_pretty(pg_table_size('kb_chunk'))",
                [model.hnsw_index_name, GIN_INDEX],
            )
            hnsw_size, gin_size, table_size = cursor.fetchone()
        self.stdout.write(
            f"  sizes: kb_chunk {table_size}, HNSW {hnsw_size}, GIN {gin_size}; "
            f"load, index builds and vacuum took {time.perf_counter() - loading:.1f} s"
        )
        return {"documents": documents, "gin_s": gin_seconds, "hnsw_s": hnsw_seconds}

    @contextmanager
    def _index_build_progress(self) -> Iterator[None]:
        """Report pg_stat_progress_create_index every 10 s from a second connection."""
        stop = threading.Event()

        def poll() -> None:
            try:
                while not stop.wait(10):
                    with connections["default"].cursor() as cursor:
                        cursor.execute(
                            "SELECT phase, blocks_done, blocks_total, tuples_done "
                            "FROM pg_stat_progress_create_index"
                        )
                        for phase, blocks_done, blocks_total, tuples_done in cursor.fetchall():
                            share = f"{blocks_done / blocks_total:.0%}" if blocks_total else "-"
                            self.stdout.write(
                                f"  ... {phase}: heap blocks {share}, {tuples_done:,} tuples"
                            )
            finally:
                connections["default"].close()

        poller = threading.Thread(target=poll, name="index-build-progress", daemon=True)
        poller.start()
        try:
            yield
        finally:
            stop.set()
            poller.join()

    # --- Measuring --------------------------------------------------------------------------------

    def _time_hybrid(
        self, model: EmbeddingModel, asked: list[str], vectors: dict[str, list[float]]
    ) -> dict[str, object]:
        self._step(
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
        values = [ms for ms, _, _ in timings]
        for ms, question, _ in sorted(timings, reverse=True)[:3]:
            self.stdout.write(f"  slow: {ms:7.1f} ms  {question[:90]}")
        by_kind: dict[str, list[float]] = {}
        for ms, _, kind in timings:
            by_kind.setdefault(kind, []).append(ms)
        return {
            "p": percentiles(values),
            "by_kind": {kind: (len(ms), percentiles(ms)) for kind, ms in sorted(by_kind.items())},
        }

    def _explain(
        self, model: EmbeddingModel, questions: list[str], vectors: dict[str, list[float]]
    ) -> dict[str, object]:
        """EXPLAIN (ANALYZE, BUFFERS) of the exact statement hybrid_search sends, unforced."""
        self._step(f"EXPLAIN (ANALYZE, BUFFERS) of the hybrid SQL for {len(questions)} questions")
        plans: list[tuple[float, str, str]] = []
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
            with connection.cursor() as cursor:
                cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, params)
                plan = "\n".join(row[0] for row in cursor.fetchall())
            match = re.search(r"Execution Time: ([\d.]+) ms", plan)
            plans.append((float(match.group(1)) if match else 0.0, question, plan))
        plans.sort()
        uses = {
            "hnsw": sum(model.hnsw_index_name in plan for _, _, plan in plans),
            "gin": sum(GIN_INDEX in plan for _, _, plan in plans),
            # Every question with a term the index holds runs the keyword leg through GIN.
            "keyword_plans": sum("tsv @@" in plan for _, _, plan in plans),
            "jit": sum("JIT:" in plan for _, _, plan in plans),
            "seq_scan": sum("Seq Scan on kb_chunk" in plan for _, _, plan in plans),
        }
        shown = [("median", plans[len(plans) // 2]), ("slowest", plans[-1])]
        for label, (ms, question, plan) in shown:
            self.stdout.write(f"  {label} plan ({ms:.1f} ms): {question[:80]}")
            lines = (
                [VECTOR_LITERAL.sub("'[...]'", line) for line in plan.splitlines()]
                if self.verbosity >= 2
                else relevant_lines(plan)
            )
            for line in lines:
                self.stdout.write(f"    {line}")
        legs = {
            leg: [ms for _, _, plan in plans if (ms := cte_milliseconds(plan, leg)) is not None]
            for leg in ("vector_leg", "keyword_leg")
        }
        return {
            **uses,
            "plans": len(plans),
            "execution_ms": statistics.median(ms for ms, _, _ in plans),
            "leg_ms": {leg: percentiles(ms) for leg, ms in legs.items() if ms},
            "hnsw_index": model.hnsw_index_name,
        }

    def _time_retrieval(self, asked: list[str]) -> dict[str, object]:
        self._step(
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
                    raise CommandError(f"retrieval degraded during the benchmark: {result.errors}")
                reranker = result.reranker
                totals.append(result.timings_ms["total"])
                for stage, ms in result.timings_ms.items():
                    stages.setdefault(stage, []).append(ms)
        return {
            "p": percentiles(totals),
            "stages": {stage: statistics.median(ms) for stage, ms in stages.items()},
            "reranker": reranker,
        }

    # --- Output -----------------------------------------------------------------------------------

    def _step(self, message: str) -> None:
        self.stdout.write(f"{message}...")

    def _done(self, started: float) -> float:
        seconds = time.perf_counter() - started
        self.stdout.write(f"  done in {seconds:.1f} s")
        return seconds

    def _print(self, report: dict, *, chunks: int, seconds: float) -> None:
        build, sql, explain, retrieval = (
            report["build"],
            report["sql"],
            report["explain"],
            report["retrieval"],
        )
        sql_p, retrieval_p = sql["p"], retrieval["p"]

        def verdict(ok: bool) -> str:
            return "ok" if ok else "MISSED"

        def used(count: int) -> str:
            return "PASS" if count == explain["plans"] else "FAIL"

        rows = [
            ("HNSW index build", f"{build['hnsw_s']:.1f} s", "-", "info"),
            ("GIN index build", f"{build['gin_s']:.1f} s", "-", "info"),
            (
                "hybrid SQL p50",
                f"{sql_p[50]:.1f} ms",
                f"< {SQL_P50_TARGET_MS:.0f} ms",
                verdict(sql_p[50] < SQL_P50_TARGET_MS),
            ),
            (
                "hybrid SQL p95",
                f"{sql_p[95]:.1f} ms",
                f"< {SQL_P95_TARGET_MS:.0f} ms",
                verdict(sql_p[95] < SQL_P95_TARGET_MS),
            ),
            ("hybrid SQL p99", f"{sql_p[99]:.1f} ms", "-", "info"),
            *(
                (f"  {kind} ({count}) p50 / p95", f"{p[50]:.1f} / {p[95]:.1f}", "ms", "info")
                for kind, (count, p) in sql["by_kind"].items()
            ),
            (
                "EXPLAIN median execution",
                f"{explain['execution_ms']:.1f} ms",
                "-",
                "info",
            ),
            *(
                (f"  EXPLAIN {leg} p50 / p95", f"{p[50]:.1f} / {p[95]:.1f}", "ms", "info")
                for leg, p in explain["leg_ms"].items()
            ),
            (
                f"plans using {explain['hnsw_index']}",
                f"{explain['hnsw']}/{explain['plans']}",
                "all",
                used(explain["hnsw"]),
            ),
            (
                f"keyword-leg plans using {GIN_INDEX}",
                f"{explain['gin']}/{explain['keyword_plans']}",
                "all",
                "PASS" if explain["gin"] == explain["keyword_plans"] else "FAIL",
            ),
            (
                "  plans reading kb_chunk by seq scan",
                f"{explain['seq_scan']}/{explain['plans']}",
                "-",
                "info",
            ),
            (
                "retrieval p50",
                f"{retrieval_p[50]:.1f} ms",
                f"< {RETRIEVAL_P50_TARGET_MS:.0f} ms",
                verdict(retrieval_p[50] < RETRIEVAL_P50_TARGET_MS),
            ),
            ("retrieval p95", f"{retrieval_p[95]:.1f} ms", "-", "info"),
        ]
        rows += [
            (f"  retrieval median: {stage}", f"{ms:.1f} ms", "-", "info")
            for stage, ms in retrieval["stages"].items()
        ]
        self.stdout.write("")
        self.stdout.write(
            f"search_bench: {chunks:,} chunks over {build['documents']:,} documents; "
            f"{report['settings']}; reranker {retrieval['reranker']}"
        )
        if explain["jit"]:
            self.stdout.write(f"JIT compiled {explain['jit']}/{explain['plans']} plans")
        self.stdout.write(f"{'metric':<44}{'measured':>12}{'target':>12}  verdict")
        for name, measured, target, outcome in rows:
            self.stdout.write(f"{name:<44}{measured:>12}{target:>12}  {outcome}")
        self.stdout.write(f"whole run: {seconds:.0f} s")
