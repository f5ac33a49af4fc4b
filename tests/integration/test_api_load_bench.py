"""The answer API's load benchmark (``api_load_bench``, run by ``make bench``) measured against a
live server: it times each streamed ask to its first and final events and counts failures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assistant.api.keys import api_key_revoke
from assistant.tooling.api_benchmarks import api_load_run
from kb.actors import SYSTEM
from tests.support.api import new_key
from tests.support.chat import REFUND_QUESTION, UNANSWERABLE_QUESTION

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("empty_cache")]


def test_api_load_run_times_every_streamed_ask(live_server, help_center: Path) -> None:
    _, key = new_key()
    seen: list[int] = []

    report = api_load_run(
        base_url=live_server.url,
        key=key,
        server_pid=os.getpid(),
        questions=[REFUND_QUESTION, UNANSWERABLE_QUESTION],
        askers=3,
        asks_per_asker=2,
        settle_seconds=0,
        progress=lambda done, total: seen.append(done),
    )

    assert (report.asks, report.completed, report.failed) == (6, 6, 0)
    assert 0 < report.first_event_ms["p50"] <= report.final_event_ms["p50"]
    assert report.first_event_ms["p95"] <= report.final_event_ms["p95"]
    assert sorted(seen) == [1, 2, 3, 4, 5, 6]
    assert report.rss_before_mb > 0


def test_an_ask_the_api_refuses_is_counted_as_failed(live_server, help_center: Path) -> None:
    api_key, key = new_key()
    api_key_revoke(api_key=api_key, actor=SYSTEM)

    report = api_load_run(
        base_url=live_server.url,
        key=key,
        server_pid=os.getpid(),
        questions=[REFUND_QUESTION],
        askers=2,
        settle_seconds=0,
    )

    assert (report.completed, report.failed) == (0, 2)
    assert "401" in report.failures[0]
