"""Contradiction-list benchmark: the time to compute it (one SQL statement of HNSW probes,
then the value comparison) on the sample corpus and on it grown to a few thousand chunks.

Runs in a throwaway database (created and dropped here), so it never touches real data."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from kb.actors import SYSTEM
from kb.embedders import get_embedder
from kb.management.progress import progress_bar
from kb.models import EmbeddingModel
from kb.services.sync import corpus_sync
from kb.tooling.benchmarking import quiet, throwaway_database
from kb.tooling.benchmarks.attention import contradictions_time, pages_copy

DATABASE_NAME = "test_groundwork_attention_bench"
# A page load that has to compute the list (the first after a change) should stay under this.
TARGET_MS = 2000.0


class Command(BaseCommand):
    help = "Benchmark the probable-contradictions list at a few thousand chunks (make bench)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--corpus", type=Path, default=settings.BASE_DIR / "corpus")
        parser.add_argument("--copies", type=int, default=7, help="noisy copies of each page")
        parser.add_argument("--repeats", type=int, default=3, help="runs per size (median)")

    def handle(self, *args: object, corpus: Path, copies: int, repeats: int, **options: object):
        self.stdout.write("creating a throwaway benchmark database...")
        with throwaway_database(DATABASE_NAME), quiet("groundwork.kb"):
            self.stdout.write(f"indexing {corpus} (embeds every chunk once)...")
            with progress_bar("indexing") as progress:
                corpus_sync(
                    directory=corpus, embedder=get_embedder(), actor=SYSTEM, progress=progress
                )
            model = EmbeddingModel.objects.active().get()
            self.stdout.write(f"{'chunks':>8}{'pairs':>8}{'listed':>8}{'median':>11}")
            for copy_number in range(copies + 1):
                if copy_number:
                    self.stdout.write(f"copying the pages ({copy_number}/{copies})...")
                    pages_copy(embedding_model=model, copy_number=copy_number)
                if copy_number not in (0, copies // 2, copies):
                    continue
                timing = contradictions_time(embedding_model=model, repeats=repeats)
                verdict = "ok" if timing.median_ms < TARGET_MS else "ABOVE TARGET"
                self.stdout.write(
                    f"{timing.chunks:>8}{timing.pairs:>8}{timing.contradictions:>8}"
                    f"{timing.median_ms:>9.0f} ms   {verdict}"
                )
        self.stdout.write(f"target: under {TARGET_MS:.0f} ms to compute the list on a page load")
