"""Document page cost: one anonymous view of a page of N identical headings or N links between
pages, the first time (rendered, links looked up) and again (from the page cache).

The time per heading or link should stay about the same as N grows (linear cost), and the
queries should not grow with N at all. Runs against the database this process is connected to
(``render_bench`` makes a throwaway one)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from kb.models import Document
from kb.tooling.benchmarking import BenchmarkError


@dataclass(frozen=True)
class PageCost:
    kind: str  # "headings" or "links"
    items: int
    body_bytes: int
    first_ms: float  # rendered and links looked up
    again_ms: float  # from the page cache
    first_queries: int
    again_queries: int

    @property
    def first_us_per_item(self) -> float:
        return self.first_ms * 1000 / self.items


def headings_body(count: int) -> str:
    """``count`` setext headings all saying ``x``: each needs its own id (x, x-1, x-2, ...)."""
    return "x\n===\n\n" * count


def links_body(count: int) -> str:
    """``count`` links to different page addresses, each with ~8 candidate documents."""
    return "".join(f"- [page {n}](../guides/page-{n}/)\n" for n in range(count))


def page_cost(*, kind: str, items: int) -> PageCost:
    body = headings_body(items) if kind == "headings" else links_body(items)
    path = f"bench/{kind}-{items}.md"
    Document.objects.filter(path=path).delete()
    Document.objects.create(path=path, title=f"{items} {kind}", body=body)
    client = Client(HTTP_HOST="localhost")
    first_ms, first_queries = _view(client, path)
    again_ms, again_queries = _view(client, path)
    return PageCost(
        kind=kind,
        items=items,
        body_bytes=len(body.encode()),
        first_ms=first_ms,
        again_ms=again_ms,
        first_queries=first_queries,
        again_queries=again_queries,
    )


def _view(client: Client, path: str) -> tuple[float, int]:
    with CaptureQueriesContext(connection) as queries:
        started = time.perf_counter()
        response = client.get(f"/docs/{path}")
        elapsed_ms = (time.perf_counter() - started) * 1000
    if response.status_code != 200:
        raise BenchmarkError(f"/docs/{path} answered {response.status_code}, not 200")
    return elapsed_ms, len(queries)
