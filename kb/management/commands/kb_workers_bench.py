"""``manage.py kb_workers_bench``: 1, 2 and 4 worker processes, each given the database and
broker by URL as separate machines would be, index 1,000 synthetic documents and a burst of 200
edits; prints throughput per worker count and the audit (lost / indexed twice / mixed), which
must be 0 / 0 / 0. The measuring is ``kb.tooling.benchmarks.workers``; each run has its own
throwaway database. Workers run the embedder on one core each (``LOCAL_EMBEDDER_THREADS=1``), so
the curve shows what more processes buy on this machine's cores.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from kb.embedders import HASHING_MODEL_KEY, LOCAL_MODEL_KEY, embedder_for
from kb.services import embedding_model_add
from kb.tooling.benchmarking import BenchmarkError, throwaway_database
from kb.tooling.benchmarks.workers import WorkersRun, workers_run

DATABASE_NAME = "test_groundwork_workers_bench"


class Command(BaseCommand):
    help = "Index an import and a burst of edits with 1, 2 and 4 worker processes; audit it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workers", default="1,2,4", help="worker counts, comma separated")
        parser.add_argument("--documents", type=int, default=1000)
        parser.add_argument("--edits", type=int, default=200)
        parser.add_argument(
            "--model",
            default=LOCAL_MODEL_KEY,
            choices=[LOCAL_MODEL_KEY, HASHING_MODEL_KEY],
            help="the embedding model the workers run (feature hashing measures the machinery)",
        )
        parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per run")

    def handle(self, *args: object, **options: object) -> None:
        try:
            counts = [int(part) for part in str(options["workers"]).split(",") if part.strip()]
        except ValueError:
            raise CommandError("--workers takes integers separated by commas, e.g. 1,2,4") from None
        documents, edits = int(options["documents"]), int(options["edits"])  # type: ignore[call-overload]
        if not counts or min(counts) < 1 or documents < 1 or edits < 0:
            raise CommandError("--workers, --documents must be positive and --edits not negative")
        embedder = embedder_for(str(options["model"]))
        runs: list[WorkersRun] = []
        for count in counts:
            self.stdout.write(f"{count} worker(s): {documents} documents, {edits} edits...")
            try:
                with (
                    throwaway_database(DATABASE_NAME),
                    tempfile.TemporaryDirectory(prefix="groundwork-workers-") as logs,
                ):
                    model = embedding_model_add(embedder=embedder)
                    runs.append(
                        workers_run(
                            workers=count,
                            documents=documents,
                            edits=edits,
                            embedding_model=model,
                            log_dir=Path(logs),
                            timeout=float(options["timeout"]),  # type: ignore[arg-type]
                            worker_env={"LOCAL_EMBEDDER_THREADS": "1"},
                            progress=self.stdout.write,
                        )
                    )
            except BenchmarkError as exc:
                raise CommandError(str(exc)) from exc
            self.stdout.write(f"  done in {runs[-1].seconds:.1f} s")
        self._print(runs, model_key=embedder.key)
        if any(run.lost or run.indexed_twice or run.mixed for run in runs):
            raise CommandError("the audit found lost, twice-indexed or mixed documents (above)")

    def _print(self, runs: list[WorkersRun], *, model_key: str) -> None:
        base = runs[0].documents_per_second / runs[0].workers if runs else 0.0
        self.stdout.write("")
        self.stdout.write(f"kb_workers_bench: {model_key}, one embedder core per worker")
        self.stdout.write(
            f"{'workers':>7} {'seconds':>8} {'docs/s':>8} {'speed-up':>9} "
            f"{'writes':>7} {'lost':>5} {'twice':>6} {'mixed':>6}"
        )
        for run in runs:
            speed_up = run.documents_per_second / base if base else 0.0
            self.stdout.write(
                f"{run.workers:>7} {run.seconds:>8.1f} {run.documents_per_second:>8.1f} "
                f"{speed_up:>8.2f}x {run.writes:>7} {run.lost:>5} {run.indexed_twice:>6} "
                f"{run.mixed:>6}"
            )
