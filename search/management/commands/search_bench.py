"""Retrieval benchmark at scale: hybrid SQL latency and index use at N chunks, full retrieval.

The measuring is ``search.tooling.benchmarks.retrieval``: it runs in a throwaway database holding a
synthetic index built from the sample corpus and returns a report, which this command prints.
Timings on shared machines are noisy: read them as a range.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from kb.tooling.benchmarking import BenchmarkError
from search.tooling.benchmarks.recall import RECALL_AT
from search.tooling.benchmarks.retrieval import (
    BUILD_MAINTENANCE_WORK_MEM,
    DATABASE_NAME,
    GIN_INDEX,
    RECALL_QUERIES,
    RETRIEVAL_P50_TARGET_MS,
    SQL_P50_TARGET_MS,
    SQL_P95_TARGET_MS,
    STAGE_CANDIDATES,
    HnswOptions,
    SearchBenchReport,
    search_benchmark,
)

RECALL_TARGET = 0.95


def _ef_search_list(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise CommandError(
            f"--ef-search takes integers separated by commas (got {text!r})"
        ) from None
    if not values or min(values) < 1:
        raise CommandError(f"--ef-search takes positive integers (got {text!r})")
    return values


STAGE_TARGET_MS = 5.0  # the local ranking stage over 100 candidates on one core (issue #25)


class Command(BaseCommand):
    help = (
        "Benchmark hybrid SQL, retrieval and HNSW recall on a synthetic index "
        "(100k chunks by default; --chunks 1000000 for the sizing run)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--chunks", type=int, default=100_000)
        parser.add_argument("--questions", type=int, default=200, help="timed, after a warm-up")
        parser.add_argument("--keep", action="store_true", help="keep the benchmark database")
        parser.add_argument("--corpus", type=Path, default=settings.BASE_DIR / "corpus")
        parser.add_argument(
            "--hnsw-m", type=int, default=settings.HNSW_M, help="HNSW links per node (HNSW_M)"
        )
        parser.add_argument(
            "--ef-construction",
            type=int,
            default=settings.HNSW_EF_CONSTRUCTION,
            help="HNSW build breadth (HNSW_EF_CONSTRUCTION)",
        )
        parser.add_argument(
            "--maintenance-work-mem",
            default=BUILD_MAINTENANCE_WORK_MEM,
            help="memory for the HNSW build; the graph must fit (about 4GB at 1M chunks)",
        )
        parser.add_argument(
            "--ef-search",
            default=str(settings.HNSW_EF_SEARCH),
            help="comma-separated hnsw.ef_search values to measure recall at "
            "(the hybrid SQL runs with HNSW_EF_SEARCH)",
        )
        parser.add_argument("--recall-queries", type=int, default=RECALL_QUERIES)

    def handle(
        self,
        *args: object,
        chunks: int,
        questions: int,
        keep: bool,
        corpus: Path,
        hnsw_m: int,
        ef_construction: int,
        maintenance_work_mem: str,
        ef_search: str,
        recall_queries: int,
        verbosity: int = 1,
        **options: object,
    ) -> None:
        if chunks < 1000:
            raise CommandError("--chunks must be at least 1000")
        if questions < 10:
            raise CommandError("--questions must be at least 10")
        if not 2 <= hnsw_m <= 100 or not 4 <= ef_construction <= 1000:
            raise CommandError("--hnsw-m must be 2-100 and --ef-construction 4-1000 (pgvector)")
        if recall_queries < 10:
            raise CommandError("--recall-queries must be at least 10")
        hnsw = HnswOptions(
            m=hnsw_m,
            ef_construction=ef_construction,
            maintenance_work_mem=maintenance_work_mem,
            ef_search=_ef_search_list(ef_search),
        )
        if not (corpus / "eval.jsonl").is_file():
            raise CommandError(f"no sample corpus at {corpus} (expected eval.jsonl and *.md)")
        try:
            report = search_benchmark(
                corpus=corpus,
                chunks=chunks,
                questions=questions,
                keep=keep,
                full_plans=verbosity >= 2,
                hnsw=hnsw,
                recall_queries=recall_queries,
                progress=self.stdout.write,
            )
        except BenchmarkError as exc:
            raise CommandError(str(exc)) from exc
        if keep:
            self.stdout.write(
                f"kept database {DATABASE_NAME} (--keep); the next run replaces it, "
                f"or: DROP DATABASE {DATABASE_NAME}"
            )
        self._print(report)

    def _print(self, report: SearchBenchReport) -> None:
        build, sql, explain, retrieval = (
            report.build,
            report.sql,
            report.explain,
            report.retrieval,
        )
        sql_p, retrieval_p = sql.percentiles, retrieval.percentiles
        for ms, question in sql.slowest:
            self.stdout.write(f"  slow: {ms:7.1f} ms  {question[:90]}")
        for shown in explain.shown:
            self.stdout.write(
                f"  {shown.label} plan ({shown.execution_ms:.1f} ms): {shown.question[:80]}"
            )
            for line in shown.lines:
                self.stdout.write(f"    {line}")

        def verdict(ok: bool) -> str:
            return "ok" if ok else "MISSED"

        def used(count: int) -> str:
            return "PASS" if count == explain.plans else "FAIL"

        def mb(size: float) -> str:
            return f"{size / 2**20:,.0f} MB"

        peak = "-" if build.hnsw_peak_mb is None else f"{build.hnsw_peak_mb:,.0f} MB"
        rows = [
            ("load (documents and chunks)", f"{build.load_seconds:.1f} s", "-", "info"),
            ("HNSW index build", f"{build.hnsw_seconds:.1f} s", "-", "info"),
            ("  HNSW build peak memory (PSS)", peak, "-", "info"),
            (
                "  graph fit in maintenance_work_mem",
                "no" if build.hnsw_spilled else "yes",
                "yes",
                "MISSED" if build.hnsw_spilled else "ok",
            ),
            ("GIN index build", f"{build.gin_seconds:.1f} s", "-", "info"),
            ("size: kb_chunk (with TOAST)", mb(build.table_bytes), "-", "info"),
            ("size: HNSW index", mb(build.hnsw_bytes), "-", "info"),
            ("size: GIN index", mb(build.gin_bytes), "-", "info"),
            ("size: whole database", mb(build.database_bytes), "-", "info"),
            *(
                (
                    f"HNSW recall@{RECALL_AT}, ef_search {point.ef_search}",
                    f"{point.recall:.3f}",
                    f">= {RECALL_TARGET}",
                    verdict(point.recall >= RECALL_TARGET),
                )
                for point in report.recall
            ),
            *(
                (
                    f"  vector leg p50 / p95, ef_search {point.ef_search}",
                    f"{point.latency[50]:.1f} / {point.latency[95]:.1f}",
                    "ms",
                    "info",
                )
                for point in report.recall
            ),
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
                for kind, (count, p) in sql.by_kind.items()
            ),
            ("EXPLAIN median execution", f"{explain.execution_ms:.1f} ms", "-", "info"),
            *(
                (f"  EXPLAIN {leg} p50 / p95", f"{p[50]:.1f} / {p[95]:.1f}", "ms", "info")
                for leg, p in explain.leg_ms.items()
            ),
            (
                f"plans using {explain.hnsw_index}",
                f"{explain.hnsw}/{explain.plans}",
                "all",
                used(explain.hnsw),
            ),
            (
                f"keyword-leg plans using {GIN_INDEX}",
                f"{explain.gin}/{explain.keyword_plans}",
                "all",
                "PASS" if explain.gin == explain.keyword_plans else "FAIL",
            ),
            (
                "  plans reading kb_chunk by seq scan",
                f"{explain.seq_scan}/{explain.plans}",
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
            *(
                (f"  retrieval median: {stage}", f"{ms:.1f} ms", "-", "info")
                for stage, ms in retrieval.stages.items()
            ),
            *(
                (
                    f"local ranking stage, {STAGE_CANDIDATES} candidates p50 / p95",
                    f"{stage_p[50]:.2f} / {stage_p[95]:.2f}",
                    f"< {STAGE_TARGET_MS:.0f} ms",
                    verdict(stage_p[95] < STAGE_TARGET_MS),
                )
                for stage_p in [retrieval.stage_percentiles]
                if stage_p is not None
            ),
        ]
        self.stdout.write("")
        self.stdout.write(
            f"search_bench: {report.chunks:,} chunks over {build.documents:,} documents; "
            f"{report.server_settings}; reranker {retrieval.reranker}"
        )
        self.stdout.write(f"HNSW {report.hnsw}")
        if explain.jit:
            self.stdout.write(f"JIT compiled {explain.jit}/{explain.plans} plans")
        self.stdout.write(f"{'metric':<44}{'measured':>12}{'target':>12}  verdict")
        for name, measured, target, outcome in rows:
            self.stdout.write(f"{name:<44}{measured:>12}{target:>12}  {outcome}")
        self.stdout.write(f"whole run: {report.seconds:.0f} s")
