"""Connector benchmark: Zendesk and Intercom runs over 5,000 stub articles (first import, 1%
edited, nothing changed), in a throwaway database (make bench)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from kb.embedders import get_embedder
from kb.tooling.benchmarking import BenchmarkError, quiet, throwaway_database
from kb.tooling.benchmarks.connectors import connector_runs

DATABASE_NAME = "test_groundwork_connector_bench"


class Command(BaseCommand):
    help = "Benchmark the connectors against local stub APIs: time, memory, texts embedded."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--articles", type=int, default=5000)
        parser.add_argument("--connectors", default="zendesk,intercom")

    def handle(self, *args: object, articles: int, connectors: str, **options: object) -> None:
        embedder = get_embedder()
        embedder.embed_documents(["warm up the runtime"] * 4)
        self.stdout.write("creating a throwaway benchmark database...")
        self.stdout.write(
            f"{'connector':<10}{'run':<26}{'total s':>9}{'embed s':>9}{'sync s':>8}"
            f"{'embedded':>10}{'written':>9}{'removed':>9}{'requests':>10}{'peak +MB':>10}"
        )
        for name in (part for part in connectors.split(",") if part):
            with (
                throwaway_database(DATABASE_NAME),
                quiet("groundwork.kb"),
                quiet("groundwork.connectors"),
            ):
                try:
                    runs = connector_runs(connector=name, articles=articles, embedder=embedder)
                except BenchmarkError as exc:
                    raise CommandError(str(exc)) from exc
            for run in runs:
                self.stdout.write(
                    f"{name:<10}{run.name:<26}{run.seconds:>9.1f}{run.embed_seconds:>9.1f}"
                    f"{run.sync_seconds:>8.1f}{run.texts_embedded:>10,}{run.indexed:>9,}"
                    f"{run.removed:>9,}{run.requests:>10,}{run.peak_rss_growth_mb:>10.0f}"
                )
