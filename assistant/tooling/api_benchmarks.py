"""Load on the answer API, for ``make bench`` (``manage.py api_load_bench``): many programs at
once, each asking over ``POST /api/v1/ask/stream`` with its key, against a running server.

Lab code: it imports the serving code and the page's load benchmark (the server's memory and
connection sampling, the percentiles), never the reverse.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import Callable, Sequence

from assistant.tooling.benchmarks import (
    LOAD_REQUEST_TIMEOUT_SECONDS,
    LoadReport,
    _AskSample,
    _ServerSampler,
    askers_run,
)
from kb.tooling.benchmarking import BenchmarkError


def api_load_run(
    *,
    base_url: str,
    key: str,
    server_pid: int,
    questions: Sequence[str],
    askers: int = 200,
    asks_per_asker: int = 1,
    settle_seconds: float = 10.0,
    progress: Callable[[int, int], None] | None = None,
    timeout_seconds: float = LOAD_REQUEST_TIMEOUT_SECONDS,
) -> LoadReport:
    """``askers`` clients at once, each asking ``asks_per_asker`` questions in turn over the
    streamed ask, all with the same key. Times each ask to its first event and to its final
    one; an ask fails when it errs, its stream ends without a final event, or the final event
    holds a failed answer or an error, or the server sends nothing for ``timeout_seconds``
    (a client's patience: queued behind busy threads, an ask waits without a byte).
    ``progress(done, total)`` is called as asks finish."""
    if not questions:
        raise BenchmarkError("api_load_run needs at least one question")
    sampler = _ServerSampler(server_pid)
    before = sampler.rss_mb()
    samples: list[_AskSample] = []
    failures: list[str] = []
    lock = threading.Lock()
    total = askers * asks_per_asker

    def asker(number: int) -> None:
        for turn in range(asks_per_asker):
            question = questions[(number * asks_per_asker + turn) % len(questions)]
            try:
                sample = _ask_streamed(
                    base_url, key=key, question=question, timeout_seconds=timeout_seconds
                )
            except Exception as exc:  # each failure is counted and reported, never fatal
                with lock:
                    failures.append(f"{type(exc).__name__}: {exc}"[:300])
            else:
                with lock:
                    samples.append(sample)
            if progress is not None:
                with lock:
                    done = len(samples) + len(failures)
                progress(done, total)

    return askers_run(
        asker=asker,
        askers=askers,
        asks=total,
        sampler=sampler,
        rss_before_mb=before,
        samples=samples,
        failures=failures,
        settle_seconds=settle_seconds,
    )


def _ask_streamed(base_url: str, *, key: str, question: str, timeout_seconds: float) -> _AskSample:
    request = urllib.request.Request(
        f"{base_url}/api/v1/ask/stream",
        data=json.dumps({"question": question}).encode(),
        headers={
            "Authorization": f"Bearer {key}",
            "Content-Type": "application/json",
            "Accept": "text/event-stream",
        },
    )
    started = time.perf_counter()
    first_event = final_event = None
    final_data: list[str] | None = None
    with urllib.request.urlopen(request, timeout=timeout_seconds) as stream:
        for raw_line in stream:
            line = raw_line.decode()
            if final_data is not None:
                if not line.strip():
                    break
                final_data.append(line.removeprefix("data: ").rstrip("\n"))
            elif line.startswith("event: "):
                now = (time.perf_counter() - started) * 1000
                first_event = first_event or now
                if line.startswith("event: final"):
                    final_event, final_data = now, []
    if final_event is None or final_data is None:
        raise BenchmarkError("the stream ended without a final event")
    final = json.loads("\n".join(final_data))
    if "error" in final or final.get("status") == "failed":
        raise BenchmarkError(f"the final event carried a failed answer: {str(final)[:200]}")
    return _AskSample(first_event_ms=first_event or final_event, final_event_ms=final_event)
