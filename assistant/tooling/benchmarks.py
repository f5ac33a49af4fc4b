"""Answer latency as a customer feels it, for ``make bench``: time to the first streamed byte of
answer text and to the final answer, through the chat's own views (the htmx ask, then its
server-sent-events stream) with the configured generator (the offline one by default); and the
same over HTTP with many customers at once against a running server (``load_run``).

Needs an indexed help center (``manage.py kb_sync corpus``). Leaves nothing behind: the
conversations are rolled back and the questions' cache entries deleted, before and after, so
every answer is computed (a cached answer would measure Redis, not the pipeline).
"""

from __future__ import annotations

import contextlib
import http.cookiejar
import re
import threading
import time
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import psutil
from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction
from django.http import StreamingHttpResponse
from django.test import Client, override_settings

from assistant.generators import get_generator
from assistant.models import Message
from assistant.services import answer_cache_key
from kb.models import EmbeddingModel
from kb.selectors.index_version import index_version
from kb.tooling.benchmarking import BenchmarkError, percentiles
from search.services import PUBLIC_AUDIENCES

STREAM_URL = re.compile(r'sse-connect="(?P<url>/answers/(?P<id>[0-9a-f-]{36})/events)"')
DELTA_EVENT = b"event: delta"
FINAL_EVENT = b"event: final"
LOAD_REQUEST_TIMEOUT_SECONDS = 300
SAMPLE_SECONDS = 0.25


def answer_latency(questions: list[str], *, warm_up: bool = True) -> dict[str, Any]:
    """p50/p95 of time to first answer byte and total answer time over ``questions``, in ms.

    The first question is asked once before measuring (unless ``warm_up`` is off) so loading
    the embedding model is not counted against one unlucky question."""
    if not questions:
        raise BenchmarkError("answer_latency needs at least one question")
    if not EmbeddingModel.objects.active().exists():
        raise BenchmarkError("nothing is indexed: run `manage.py kb_sync corpus` first")
    generator = get_generator()
    keys = [
        answer_cache_key(
            question=question,
            audiences=PUBLIC_AUDIENCES,
            generator=generator.name,
            version=index_version(),
        )
        for question in questions
    ]
    samples: list[dict[str, Any]] = []
    cache.delete_many(keys)
    try:
        # No rate limit: the benchmark asks faster than any one customer may. The test client
        # calls itself "testserver".
        with (
            override_settings(
                ASK_RATE_LIMIT_PER_MINUTE=10**9,
                ALLOWED_HOSTS=[*settings.ALLOWED_HOSTS, "testserver"],
            ),
            transaction.atomic(),
        ):
            if warm_up:
                _ask_and_stream(questions[0])
                cache.delete_many(keys)
            for question in questions:
                samples.append(_ask_and_stream(question))
            transaction.set_rollback(True)
    finally:
        cache.delete_many(keys)

    def summary(values: Sequence[float]) -> dict[str, float]:
        measured = percentiles(values)
        return {"p50": round(measured[50], 1), "p95": round(measured[95], 1)}

    first = [s["first_byte_ms"] for s in samples if s["first_byte_ms"] is not None]
    return {
        "questions": len(samples),
        "generator": generator.name,
        "first_byte_ms": summary(first) if first else None,
        "total_ms": summary([s["total_ms"] for s in samples]),
        "retrieval_ms": summary([s["retrieval_ms"] for s in samples]),
        "generation_ms": summary([s["generation_ms"] for s in samples]),
        "statuses": dict(Counter(s["status"] for s in samples)),
    }


def _ask_and_stream(question: str) -> dict[str, Any]:
    """One question the way the page asks it: a fresh visitor, an htmx POST, then the stream."""
    client = Client()
    started = time.perf_counter()
    asked = client.post("/ask", {"question": question}, HTTP_HX_REQUEST="true")
    if asked.status_code != 200:
        raise BenchmarkError(f"asking {question[:60]!r} answered {asked.status_code}")
    stream_url = STREAM_URL.search(asked.content.decode())
    if stream_url is None:
        raise BenchmarkError("the ask returned no answer stream to follow")
    stream = client.get(stream_url.group("url"))
    if not isinstance(stream, StreamingHttpResponse):
        raise BenchmarkError(f"the answer stream answered {stream.status_code} without streaming")
    first_byte = total = None
    for chunk in stream.streaming_content:
        now = (time.perf_counter() - started) * 1000
        if first_byte is None and DELTA_EVENT in chunk:
            first_byte = now
        if FINAL_EVENT in chunk:
            total = now
    if total is None:
        raise BenchmarkError(f"the stream for {question[:60]!r} ended without a final answer")
    message = Message.objects.get(public_id=stream_url.group("id"))
    timings = message.snapshot.get("timings_ms", {})
    return {
        "first_byte_ms": first_byte,
        "total_ms": total,
        "retrieval_ms": timings.get("retrieval", 0.0),
        "generation_ms": timings.get("generation", 0.0),
        "status": message.status,
    }


# --- Load: many customers at once against a running server ----------------------------------

FAILED_ANSWER_MARK = "notice-failed"  # _answer.html's class for an answer that failed


@dataclass(frozen=True)
class LoadReport:
    askers: int
    asks: int
    completed: int
    failures: list[str]
    first_event_ms: dict[str, float]
    final_event_ms: dict[str, float]
    rss_before_mb: float
    rss_peak_mb: float
    rss_after_mb: float
    connections_peak: int
    connections_after: int
    seconds: float

    @property
    def failed(self) -> int:
        return self.asks - self.completed


def load_run(
    *,
    base_url: str,
    server_pid: int,
    questions: Sequence[str],
    askers: int = 50,
    asks_per_asker: int = 3,
    settle_seconds: float = 10.0,
) -> LoadReport:
    """``askers`` customers at once, each asking ``asks_per_asker`` questions in turn the way
    the page does (htmx ask, then the event stream), against the server at ``base_url``.
    Measures the server's memory (its process tree's RSS) before, at the peak and
    ``settle_seconds`` after the last answer, and its database connections."""
    if not questions:
        raise BenchmarkError("load_run needs at least one question")
    sampler = _ServerSampler(server_pid)
    before = sampler.rss_mb()
    samples: list[_AskSample] = []
    failures: list[str] = []
    lock = threading.Lock()

    def asker(number: int) -> None:
        session = _Asker(base_url)
        for turn in range(asks_per_asker):
            question = questions[(number * asks_per_asker + turn) % len(questions)]
            try:
                sample = session.ask(question)
            except Exception as exc:  # each failure is counted and reported, never fatal
                with lock:
                    failures.append(f"{type(exc).__name__}: {exc}"[:300])
                continue
            with lock:
                samples.append(sample)

    return askers_run(
        asker=asker,
        askers=askers,
        asks=askers * asks_per_asker,
        sampler=sampler,
        rss_before_mb=before,
        samples=samples,
        failures=failures,
        settle_seconds=settle_seconds,
    )


def askers_run(
    *,
    asker: Callable[[int], None],
    askers: int,
    asks: int,
    sampler: _ServerSampler,
    rss_before_mb: float,
    samples: list[_AskSample],
    failures: list[str],
    settle_seconds: float,
) -> LoadReport:
    """Run ``asker(n)`` for n in 0..askers-1, all at once on threads (each appends to
    ``samples`` or ``failures``), while ``sampler`` watches the server; then leave the server
    idle ``settle_seconds``, as it is after a burst, and report."""
    started = time.perf_counter()
    sampler.start()
    threads = [threading.Thread(target=asker, args=(n,), daemon=True) for n in range(askers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    sampler.stop()
    deadline = time.monotonic() + settle_seconds
    while time.monotonic() < deadline:
        time.sleep(0.5)
    return LoadReport(
        askers=askers,
        asks=asks,
        completed=len(samples),
        failures=failures,
        first_event_ms=_p50_p95([s.first_event_ms for s in samples]),
        final_event_ms=_p50_p95([s.final_event_ms for s in samples]),
        rss_before_mb=rss_before_mb,
        rss_peak_mb=max(sampler.rss_peak_mb, rss_before_mb),
        rss_after_mb=sampler.rss_mb(),
        connections_peak=sampler.connections_peak,
        connections_after=_database_connections(),
        seconds=seconds,
    )


def _p50_p95(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {"p50": float("nan"), "p95": float("nan")}
    measured = percentiles(values)
    return {"p50": round(measured[50], 1), "p95": round(measured[95], 1)}


@dataclass(frozen=True)
class _AskSample:
    first_event_ms: float
    final_event_ms: float


class _Asker:
    """One customer: a cookie jar (session and CSRF token) and the page's two requests."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.cookies = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.cookies))
        self._open("/").read()

    def _open(self, path: str, *, form: dict[str, str] | None = None, **headers: str):
        body = urllib.parse.urlencode(form).encode() if form is not None else None
        request = urllib.request.Request(self.base_url + path, data=body, headers=headers)
        return self.opener.open(request, timeout=LOAD_REQUEST_TIMEOUT_SECONDS)

    def ask(self, question: str) -> _AskSample:
        token = next(c.value for c in self.cookies if c.name == "csrftoken" and c.value is not None)
        started = time.perf_counter()
        fragment = self._open(
            "/ask",
            form={"question": question, "csrfmiddlewaretoken": token},
            **{"HX-Request": "true"},
        ).read()
        stream_url = STREAM_URL.search(fragment.decode())
        if stream_url is None:
            raise BenchmarkError("the ask returned no answer stream to follow")
        first_event = final_event = None
        final_lines: list[str] | None = None
        with self._open(stream_url.group("url"), Accept="text/event-stream") as stream:
            for raw_line in stream:
                line = raw_line.decode()
                if final_lines is not None:
                    if not line.strip():
                        break
                    final_lines.append(line)
                elif line.startswith("event: "):
                    now = (time.perf_counter() - started) * 1000
                    first_event = first_event or now
                    if line.startswith("event: final"):
                        final_event, final_lines = now, []
        if final_event is None or final_lines is None:
            raise BenchmarkError("the stream ended without a final event")
        if FAILED_ANSWER_MARK in "".join(final_lines):
            raise BenchmarkError("the final event carried a failed answer")
        return _AskSample(first_event_ms=first_event or final_event, final_event_ms=final_event)


class _ServerSampler:
    """Samples the server's memory and the database's connections every SAMPLE_SECONDS."""

    def __init__(self, server_pid: int) -> None:
        self.server = psutil.Process(server_pid)
        self.rss_peak_mb = 0.0
        self.connections_peak = 0
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def rss_mb(self) -> float:
        total = 0
        for process in [self.server, *self.server.children(recursive=True)]:
            with contextlib.suppress(psutil.NoSuchProcess):
                total += process.memory_info().rss
        return round(total / 2**20, 1)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join()

    def _run(self) -> None:
        try:
            while not self._stopped.wait(SAMPLE_SECONDS):
                self.rss_peak_mb = max(self.rss_peak_mb, self.rss_mb())
                self.connections_peak = max(self.connections_peak, _database_connections())
        finally:
            connection.close()  # this thread's own


def _database_connections() -> int:
    """Connections to this database other than the asking one."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0]


MEMORY_AFTER_LIMIT = 1.5  # x the idle figure: past it the server kept what the load made


def load_report_lines(report: LoadReport, *, name: str) -> list[str]:
    """What a load benchmark (the page's or the API's) prints of its run."""
    lines = [
        "",
        f"{name}: {report.askers} askers, {report.asks} asks in {report.seconds:.0f} s: "
        f"{report.completed} completed, {report.failed} failed",
    ]
    lines += [f"  failure: {failure}" for failure in report.failures[:5]]
    lines.append(f"{'metric':40} {'p50':>10} {'p95':>10}")
    for label, values in (
        ("time to first event", report.first_event_ms),
        ("time to final event", report.final_event_ms),
    ):
        lines.append(f"{label:40} {values['p50']:>7.0f} ms {values['p95']:>7.0f} ms")
    ratio = report.rss_after_mb / report.rss_before_mb
    lines.append(
        f"web RSS: before {report.rss_before_mb:.0f} MB, peak {report.rss_peak_mb:.0f} MB, "
        f"after {report.rss_after_mb:.0f} MB ({ratio:.2f} x before)"
    )
    lines.append(
        f"database connections: peak {report.connections_peak}, after {report.connections_after}"
    )
    return lines


def load_problems(report: LoadReport) -> list[str]:
    """Why a load run fails its targets: any failed ask, or memory not given back."""
    problems = []
    if report.failed:
        problems.append(f"{report.failed} asks failed")
    if report.rss_after_mb > MEMORY_AFTER_LIMIT * report.rss_before_mb:
        problems.append(f"memory after the load exceeds {MEMORY_AFTER_LIMIT} x the idle figure")
    return problems
