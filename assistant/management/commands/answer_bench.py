"""Answer latency benchmark: time to first streamed byte and total answer time, p50/p95.

Runs in a throwaway database holding the sample help center, through the chat's own views (the
htmx ask, then its event stream), with the configured generator (the offline extractive one
unless ANTHROPIC_API_KEY is set). Timings on shared machines are noisy: read them as a range.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from assistant.tooling.benchmarks import answer_latency
from kb.actors import SYSTEM
from kb.embedders import get_embedder
from kb.services.sync import corpus_sync
from kb.tooling.benchmarking import BenchmarkError, throwaway_database

DATABASE_NAME = "test_groundwork_answer_bench"


class Command(BaseCommand):
    help = "Time to first streamed byte and total answer time for the configured generator."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--questions", type=int, default=20, help="answerable eval questions")
        parser.add_argument("--corpus", type=Path, default=settings.BASE_DIR / "corpus")

    def handle(self, *args: object, questions: int, corpus: Path, **options: object) -> None:
        cases_path = corpus / "eval.jsonl"
        if not cases_path.is_file():
            raise CommandError(f"no eval cases at {cases_path}")
        cases = [json.loads(line) for line in cases_path.read_text().splitlines() if line.strip()]
        asked = [case["question"] for case in cases if case["relevant"]][:questions]
        if len(asked) < questions:
            raise CommandError(f"only {len(asked)} answerable questions in {cases_path}")
        started = time.perf_counter()
        self.stdout.write(f"creating the throwaway database {DATABASE_NAME} and indexing {corpus}")
        with throwaway_database(DATABASE_NAME):
            corpus_sync(directory=corpus, embedder=get_embedder(), actor=SYSTEM)
            self.stdout.write(f"asking {len(asked)} questions through the chat views...")
            try:
                report = answer_latency(asked)
            except BenchmarkError as exc:
                raise CommandError(str(exc)) from exc
        self._print(report, seconds=time.perf_counter() - started)

    def _print(self, report: dict[str, Any], *, seconds: float) -> None:
        self.stdout.write("")
        self.stdout.write(
            f"answer_bench: {report['questions']} questions, generator {report['generator']}, "
            f"outcomes {report['statuses']}"
        )
        self.stdout.write(f"{'metric':40} {'p50':>10} {'p95':>10}")
        for label, key in (
            ("time to first streamed byte", "first_byte_ms"),
            ("total answer time", "total_ms"),
            ("  of which retrieval", "retrieval_ms"),
            ("  of which generation", "generation_ms"),
        ):
            values = report[key]
            if values is None:
                self.stdout.write(f"{label:40} {'-':>10} {'-':>10}")
                continue
            self.stdout.write(f"{label:40} {values['p50']:>7.0f} ms {values['p95']:>7.0f} ms")
        self.stdout.write(f"whole run: {seconds:.0f} s")
