"""Answer latency as a customer feels it, for ``make bench``: time to the first streamed byte of
answer text and to the final answer, through the chat's own views (the htmx ask, then its
server-sent-events stream) with the configured generator (the offline one by default).

Needs an indexed help center (``manage.py kb_sync corpus``). Leaves nothing behind: the
conversations are rolled back and the questions' cache entries deleted, before and after, so
every answer is computed (a cached answer would measure Redis, not the pipeline).
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.test import Client, override_settings

from assistant.generators import get_generator
from assistant.models import Message
from assistant.services import answer_cache_key, index_version
from kb.benchmarking import BenchmarkError, percentiles
from kb.models import EmbeddingModel
from search.services import PUBLIC_AUDIENCES

STREAM_URL = re.compile(r'sse-connect="(?P<url>/answers/(?P<id>[0-9a-f-]{36})/events)"')
DELTA_EVENT = b"event: delta"
FINAL_EVENT = b"event: final"


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
