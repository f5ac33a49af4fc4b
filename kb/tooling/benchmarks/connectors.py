"""Connector benchmark: one connector's runs over a local stub of its API holding N short
articles: a first import, a run after 1% of them were edited and 0.2% deleted upstream, and a
run with nothing changed.

Each run is timed whole and with the embedder's own time taken out (the local model on a
shared CPU is most of a first import, and is measured by ``kb_bench``); the texts embedded are
counted, since only edited articles may be embedded again. Memory is the process's peak
resident size, which ``getrusage`` only ever raises: a run's growth over the peak before it.
Runs against the database this process is connected to (``connector_bench`` makes a
throwaway one). The stubs are the tests' (``tests.support``): this is lab code.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kb.actors import SYSTEM
from kb.connectors.http import RetryPolicy, UpstreamClient
from kb.connectors.intercom import IntercomConnector
from kb.connectors.zendesk import ZendeskConnector
from kb.embedders import Embedder
from kb.services.sync.connector import connector_sync
from kb.tooling.benchmarking import BenchmarkError

if TYPE_CHECKING:
    from tests.support.help_center_stub import HelpCenterStub

EDITED_SHARE = 0.01
DELETED_SHARE = 0.002
TOPICS = ("refunds", "invoices", "passwords", "exports", "webhooks", "teams", "billing", "sso")


@dataclass(frozen=True)
class ConnectorRun:
    name: str  # "first import", "1% edited", "nothing changed"
    seconds: float
    embed_seconds: float
    texts_embedded: int
    indexed: int
    removed: int
    unchanged: int
    requests: int
    peak_rss_growth_mb: float

    @property
    def sync_seconds(self) -> float:
        return self.seconds - self.embed_seconds


class TimedEmbedder:
    """The real embedder, counting the texts it embeds and the time it spends on them."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self.key = inner.key
        self.provider = inner.provider
        self.model_name = inner.model_name
        self.dimensions = inner.dimensions
        self.max_input_tokens = inner.max_input_tokens
        self.texts = 0
        self.seconds = 0.0

    def count_tokens(self, text: str) -> int:
        return self._inner.count_tokens(text)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        started = time.perf_counter()
        vectors = self._inner.embed_documents(texts)
        self.seconds += time.perf_counter() - started
        self.texts += len(texts)
        return vectors

    def embed_query(self, text: str) -> np.ndarray:
        return self._inner.embed_query(text)


def connector_runs(*, connector: str, articles: int, embedder: Embedder) -> list[ConnectorRun]:
    """The three runs of ``connector`` ("zendesk" or "intercom") over ``articles`` articles."""
    from tests.support.intercom_stub import VERSION, IntercomStub
    from tests.support.zendesk_stub import ZendeskStub

    stub: HelpCenterStub = ZendeskStub() if connector == "zendesk" else IntercomStub()
    with stub:
        for number in range(1, articles + 1):
            _article_put(stub, number, edition=1)
        headers = {"Authorization": stub.authorization}
        if connector == "intercom":
            headers["Intercom-Version"] = VERSION
        client = UpstreamClient(base_url=stub.origin, headers=headers, policy=RetryPolicy())
        upstream = (
            ZendeskConnector(client=client)
            if connector == "zendesk"
            else IntercomConnector(client=client)
        )
        timed = TimedEmbedder(embedder)
        runs = [_run("first import", upstream, timed)]
        edited = range(1, articles + 1, round(1 / EDITED_SHARE))
        for number in edited:
            _article_put(stub, number, edition=2)
        for number in range(articles, articles - round(articles * DELETED_SHARE), -1):
            stub.delete(number)
        runs.append(
            _run(
                f"{len(edited)} edited, {round(articles * DELETED_SHARE)} deleted", upstream, timed
            )
        )
        runs.append(_run("nothing changed", upstream, timed))
    if runs[1].indexed != len(edited) or runs[2].texts_embedded:
        raise BenchmarkError(
            f"the runs after the import wrote {runs[1].indexed} articles (expected "
            f"{len(edited)}) and then embedded {runs[2].texts_embedded} texts (expected 0)"
        )
    return runs


def _article_put(stub: HelpCenterStub, number: int, *, edition: int) -> None:
    topic = TOPICS[number % len(TOPICS)]
    stub.put(
        number,
        title=f"About {topic}, article {number}",
        body=f"<p>Article {number} explains {topic}, edition {edition}.</p>"
        f"<p>Ask support when the steps for {topic} do not match your account.</p>",
        category=topic.title(),
    )


def _run(
    name: str, connector: ZendeskConnector | IntercomConnector, embedder: TimedEmbedder
) -> ConnectorRun:
    texts, embed_seconds = embedder.texts, embedder.seconds
    requests = connector.client.requests_made
    peak_before = _peak_rss_mb()
    started = time.perf_counter()
    report = connector_sync(connector=connector, embedder=embedder, actor=SYSTEM)
    seconds = time.perf_counter() - started
    return ConnectorRun(
        name=name,
        seconds=seconds,
        embed_seconds=embedder.seconds - embed_seconds,
        texts_embedded=embedder.texts - texts,
        indexed=len(report.sync.indexed),
        removed=len(report.sync.removed),
        unchanged=report.sync.unchanged,
        requests=connector.client.requests_made - requests,
        peak_rss_growth_mb=_peak_rss_mb() - peak_before,
    )


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
