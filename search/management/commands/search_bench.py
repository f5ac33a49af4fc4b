"""Retrieval benchmark at scale: hybrid SQL latency and index use at N chunks, full retrieval.

The measuring is ``search.benchmarks.retrieval``: it runs in a throwaway database holding a
synthetic index built from the sample corpus and returns a report, which this command prints.
Timings on shared machines are noisy: read them as a range.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from kb.benchmarking import BenchmarkError
from search.benchmarks.retrieval import (
    DATABASE_NAME,
    GIN_INDEX,
    RETRIEVAL_P50_TARGET_MS,
    SQL_P50_TARGET_MS,
    SQL_P95_TARGET_MS,
    SearchBenchReport,
    search_benchmark,
)


class Command(BaseCommand):
    help = "Benchmark hybrid SQL and retrieval on a synthetic 100k-chunk index (make bench)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--chunks", type=int, default=100_000)
        parser.add_argument("--questions", type=int, default=200, help="timed, after a warm-up")
        parser.add_argument("--keep", action="store_true", help="keep the benchmark database")
        parser.add_argument("--corpus", type=Path, default=settings.BASE_DIR / "corpus")

    def handle(
        self,
        *args: object,
        chunks: int,
        questions: int,
        keep: bool,
        corpus: Path,
        verbosity: int = 1,
        **options: object,
    ) -> None:
        if chunks < 1000:
            raise CommandError("--chunks must be at least 1000")
        if questions < 10:
            raise CommandError("--questions must be at least 10")
        if not (corpus / "eval.jsonl").is_file():
            raise CommandError(f"no sample corpus at {corpus} (expected eval.jsonl and *.md)")
        try:
            report = search_benchmark(
                corpus=corpus,
                chunks=chunks,
                questions=questions,
                keep=keep,
                full_plans=verbosity >= 2,
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

        rows = [
            ("HNSW index build", f"{build.hnsw_seconds:.1f} s", "-", "info"),
            ("GIN index build", f"{build.gin_seconds:.1f} s", "-", "info"),
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
        ]
        self.stdout.write("")
        self.stdout.write(
            f"search_bench: {report.chunks:,} chunks over {build.documents:,} documents; "
            f"{report.server_settings}; reranker {retrieval.reranker}"
        )
        if explain.jit:
            self.stdout.write(f"JIT compiled {explain.jit}/{explain.plans} plans")
        self.stdout.write(f"{'metric':<44}{'measured':>12}{'target':>12}  verdict")
        for name, measured, target, outcome in rows:
            self.stdout.write(f"{name:<44}{measured:>12}{target:>12}  {outcome}")
        self.stdout.write(f"whole run: {report.seconds:.0f} s")
