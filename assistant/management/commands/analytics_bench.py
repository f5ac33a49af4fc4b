"""Analytics page benchmark: a million stored questions (with votes and support requests)
loaded in bulk, the rollup built once, then the page timed as staff load it, for a month and a
year, filtered and not, and right after a burst of today's questions (make bench).

Runs in a throwaway database (created and dropped here), so it never touches real data."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from assistant.tooling.analytics_benchmarks import (
    page_time,
    questions_load,
    staff_client,
    todays_burst,
)
from kb.tooling.benchmarking import BenchmarkError, quiet, throwaway_database

DATABASE_NAME = "test_groundwork_analytics_bench"
TARGET_MS = 1000.0  # the page, at a million stored questions
PAGES = (
    ("30 days", "/admin/analytics/?days=30"),
    ("365 days", "/admin/analytics/?days=365"),
    (
        "365 days, internal, billing",
        "/admin/analytics/?days=365&audience=internal&category=billing",
    ),
    ("365 days, CSV", "/admin/analytics/?days=365&format=csv"),
)


class Command(BaseCommand):
    help = "Time the help-center analytics page at a million stored questions."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--messages", type=int, default=1_000_000)
        parser.add_argument("--runs", type=int, default=5, help="loads per page (median)")
        parser.add_argument("--burst", type=int, default=2000, help="today's new questions")
        parser.add_argument("--corpus", type=Path, default=settings.BASE_DIR / "corpus")

    def handle(self, *args: object, messages: int, runs: int, burst: int, corpus: Path, **options):
        cases = corpus / "eval.jsonl"
        if not cases.is_file():
            raise CommandError(f"no eval cases at {cases} (the questions' texts come from it)")
        texts = [json.loads(line)["question"] for line in cases.read_text().splitlines() if line]
        self.stdout.write("creating a throwaway benchmark database...")
        with (
            throwaway_database(DATABASE_NAME),
            quiet("groundwork.request"),
            quiet("groundwork.assistant"),
        ):
            try:
                self._run(messages=messages, runs=runs, burst=burst, texts=texts)
            except BenchmarkError as exc:
                raise CommandError(str(exc)) from exc

    def _run(self, *, messages: int, runs: int, burst: int, texts: list[str]) -> None:
        self.stdout.write(f"loading {messages:,} questions, their votes and support requests...")
        with tqdm(total=messages, unit="question", file=sys.stderr) as bar:
            load = questions_load(
                count=messages, questions=texts, progress=lambda done, _: bar.update(done - bar.n)
            )
        self.stdout.write(
            f"loaded {load.messages:,} questions, {load.feedback:,} votes, "
            f"{load.support_requests:,} support requests in {load.load_seconds:.1f} s; "
            f"rollup of {load.rollup_days} days built in {load.rollup_seconds:.1f} s"
        )
        client = staff_client()
        self.stdout.write(f"{'page':34}{'median':>10}{'max':>10}")
        timings = [page_time(client, label=label, url=url, runs=runs) for label, url in PAGES]
        todays_burst(questions=burst)
        timings.append(
            page_time(client, label=f"30 days after {burst:,} new", url=PAGES[0][1], runs=1)
        )
        for timing in timings:
            verdict = "ok" if timing.median_ms < TARGET_MS else "ABOVE TARGET"
            self.stdout.write(
                f"{timing.label:34}{timing.median_ms:>7.0f} ms{timing.max_ms:>7.0f} ms   {verdict}"
            )
        self.stdout.write(f"target: every page under {TARGET_MS:.0f} ms at {messages:,} questions")
