"""Test-question run time per save, p50/p95: the sample help center's answer-eval questions as
test questions of the pages that answer them, each page edited and indexed once, its questions
answered by the real pipeline (the offline extractive answerer unless ANTHROPIC_API_KEY is set).
Runs in a throwaway database; timings on shared machines are noisy: read them as a range."""

from __future__ import annotations

import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from assistant.tooling.test_question_benchmarks import (
    guarded_pages,
    test_question_save_timings,
    timing_summary,
)
from kb.actors import SYSTEM
from kb.embedders import get_embedder
from kb.services.sync import corpus_sync
from kb.tooling.benchmarking import throwaway_database

DATABASE_NAME = "test_groundwork_test_question_bench"


class Command(BaseCommand):
    help = "Time to answer a page's test questions after each save is indexed (p50/p95)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--corpus", type=Path, default=settings.BASE_DIR / "corpus")

    def handle(self, *args: object, corpus: Path, **options: object) -> None:
        cases = corpus / "answer-eval.jsonl"
        if not cases.is_file():
            raise CommandError(f"no answer-eval cases at {cases}")
        pages = guarded_pages(cases)
        started = time.perf_counter()
        self.stdout.write(f"creating the throwaway database {DATABASE_NAME} and indexing {corpus}")
        with throwaway_database(DATABASE_NAME):
            corpus_sync(directory=corpus, embedder=get_embedder(), actor=SYSTEM)
            questions = sum(len(edits) for edits in pages.values())
            self.stdout.write(f"{questions} test questions on {len(pages)} pages; saving each...")
            timings = test_question_save_timings(pages, progress=self.stdout.write)
        summary = timing_summary(timings)
        self.stdout.write("")
        self.stdout.write(
            f"test_question_bench: {summary['saves']} saves, {summary['questions']} questions "
            f"answered, {summary['flagged']} flagged (each edit added an unrelated sentence)"
        )
        for timing in timings:
            for flag in timing.flags:
                self.stdout.write(f"  flagged on {timing.path}: {flag}")
        self.stdout.write(f"{'metric':40} {'p50':>10} {'p95':>10}")
        for label, key in (("test questions per save", "save"), ("per question", "question")):
            p50, p95 = summary[f"{key}_p50_ms"], summary[f"{key}_p95_ms"]
            self.stdout.write(f"{label:40} {p50:>7.0f} ms {p95:>7.0f} ms")
        self.stdout.write(f"whole run: {time.perf_counter() - started:.0f} s")
