"""Document page rendering benchmark: pages of 1k/10k/30k identical headings and 100/1k/10k
links, viewed once (rendered) and again (cached), in a throwaway database (make bench)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandParser

from kb.tooling.benchmarking import quiet, throwaway_database
from kb.tooling.benchmarks.rendering import page_cost

DATABASE_NAME = "test_groundwork_render_bench"


class Command(BaseCommand):
    help = "Benchmark /docs/<page> for many headings and links: cost per item, queries per view."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--headings", default="1000,10000,30000")
        parser.add_argument("--links", default="100,1000,10000")

    def handle(self, *args: object, headings: str, links: str, **options: object) -> None:
        sizes = {"headings": headings, "links": links}
        self.stdout.write("creating a throwaway benchmark database...")
        with throwaway_database(DATABASE_NAME), quiet("groundwork.kb"), quiet("groundwork.request"):
            self.stdout.write(
                f"{'page of':>9}{'items':>8}{'KB':>7}{'first ms':>10}{'µs/item':>9}"
                f"{'again ms':>10}{'queries first/again':>21}"
            )
            for kind, counts in sizes.items():
                for items in (int(count) for count in counts.split(",") if count):
                    cost = page_cost(kind=kind, items=items)
                    self.stdout.write(
                        f"{kind:>9}{items:>8}{cost.body_bytes / 1000:>7.0f}{cost.first_ms:>10.0f}"
                        f"{cost.first_us_per_item:>9.0f}{cost.again_ms:>10.1f}"
                        f"{f'{cost.first_queries}/{cost.again_queries}':>21}"
                    )
