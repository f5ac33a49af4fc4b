"""The analytics page at a million stored questions, for ``make bench``: load the questions in
bulk (``INSERT … SELECT generate_series`` in batches, so the rollup's statement triggers fire as
they would for a COPY), build the rollup once, then time the page as staff see it: with nothing
to recount, and right after a burst of today's questions, votes and hand-offs (the page
recounts today first).

Runs against the database this process is connected to (``analytics_bench`` makes a
throwaway one)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from assistant.analytics.rollup import rollup_refresh
from assistant.models import Message
from kb.models import Document
from kb.tooling.benchmarking import BenchmarkError

CATEGORIES = ("billing", "policies", "account", "api", "plans", "security")
DOCUMENTS = 40
SPREAD_DAYS = 365

_CONVERSATIONS = """
INSERT INTO assistant_conversation (public_id, client_key_hash, created_at)
SELECT gen_random_uuid(), 'bench-' || i, now() FROM generate_series(1, %(count)s) AS i
"""

# Message i (0-based) is asked (i / total) of SPREAD_DAYS ago, newest first, in conversation
# first + 2i/5 (two or three questions each); its status, audience and cited pages follow from
# i by fixed arithmetic, so every run loads the same data.
_MESSAGES = """
INSERT INTO assistant_message (
    public_id, conversation_id, question, retrieval_query, answer, status, citations,
    generator, quoted, cached, degraded, snapshot, audience, created_at, answered_at
)
SELECT gen_random_uuid(), %(first_conversation)s + (i * 2) / 5,
       q.question, q.question, 'An answer.', s.status,
       CASE WHEN s.status IN ('answered', 'flagged') THEN
           jsonb_build_array(
               jsonb_build_object('document_id', d.ids[1 + mod(i * 31, %(document_count)s)]),
               jsonb_build_object('document_id', d.ids[1 + mod(i * 17, %(document_count)s)]))
       ELSE '[]'::jsonb END,
       'bench', false, false, false, '{}'::jsonb,
       CASE WHEN mod(i * 13, 10) < 2 THEN 'internal' ELSE 'public' END,
       t.asked, t.asked + interval '4 seconds'
FROM generate_series(%(start)s::bigint, %(stop)s::bigint - 1) AS i
CROSS JOIN (SELECT %(documents)s::bigint[] AS ids) d
CROSS JOIN LATERAL (
    SELECT now() - interval '1 day' * %(spread_days)s * i / %(total)s AS asked
) t
CROSS JOIN LATERAL (
    SELECT CASE WHEN mod(i * 7919, 100) < 70 THEN 'answered'
                WHEN mod(i * 7919, 100) < 85 THEN 'not_in_docs'
                WHEN mod(i * 7919, 100) < 93 THEN 'flagged'
                ELSE 'failed' END AS status
) s
CROSS JOIN LATERAL (
    SELECT (%(questions)s::text[])[1 + mod(i * 7, %(question_count)s)] AS question
) q
"""

_FEEDBACK = """
INSERT INTO assistant_feedback (message_id, client_key_hash, vote, comment, created_at, updated_at)
SELECT id, 'voter', CASE WHEN mod(id, 3) = 0 THEN 'down' ELSE 'up' END, '', created_at, created_at
FROM assistant_message WHERE mod(id, 5) = 0 AND id >= %(first_message)s
"""

# One conversation in 25 asks for a person: most within hours of the last answer, some a day
# and a half later (not a hand-off of that answer).
_SUPPORT = """
INSERT INTO assistant_supportrequest (
    public_id, conversation_id, client_key_hash, email, message, status, created_at
)
SELECT gen_random_uuid(), conversation_id, 'bench', 'bench@example.com', 'Help', 'new',
       max(answered_at) + CASE WHEN mod(conversation_id, 4) = 0 THEN interval '36 hours'
                               ELSE interval '2 hours' END
FROM assistant_message
WHERE mod(conversation_id, 25) = 0 AND id >= %(first_message)s
GROUP BY conversation_id
"""


@dataclass(frozen=True)
class LoadReport:
    messages: int
    feedback: int
    support_requests: int
    load_seconds: float
    rollup_seconds: float
    rollup_days: int


@dataclass(frozen=True)
class PageTiming:
    label: str
    url: str
    median_ms: float
    max_ms: float
    runs: int


def questions_load(
    *,
    count: int,
    questions: Sequence[str],
    batch: int = 100_000,
    progress: Callable[[int, int], None] | None = None,
) -> LoadReport:
    """Store ``count`` questions over the last ``SPREAD_DAYS`` days with their votes and
    support requests, then build the rollup; returns what was stored and how long each took."""
    if not questions:
        raise BenchmarkError("questions_load needs at least one question text")
    started = time.perf_counter()
    documents = _documents()
    with connection.cursor() as cursor:
        cursor.execute(_CONVERSATIONS, {"count": count * 2 // 5 + 1})
        cursor.execute("SELECT min(id), max(id), count(*) FROM assistant_conversation")
        first, last, conversations = cursor.fetchone()
        if last - first + 1 != conversations:
            raise BenchmarkError("the conversations' ids are not contiguous: use an empty database")
        cursor.execute("SELECT COALESCE(max(id), 0) + 1 FROM assistant_message")
        (first_message,) = cursor.fetchone()
        for start in range(0, count, batch):
            cursor.execute(
                _MESSAGES,
                {
                    "first_conversation": first,
                    "documents": documents,
                    "document_count": len(documents),
                    "questions": list(questions),
                    "question_count": len(questions),
                    "start": start,
                    "stop": min(start + batch, count),
                    "total": count,
                    "spread_days": SPREAD_DAYS,
                },
            )
            if progress is not None:
                progress(min(start + batch, count), count)
        cursor.execute(_FEEDBACK, {"first_message": first_message})
        feedback = cursor.rowcount
        cursor.execute(_SUPPORT, {"first_message": first_message})
        support = cursor.rowcount
        cursor.execute("ANALYZE")
    loaded = time.perf_counter()
    days = rollup_refresh()
    return LoadReport(
        messages=count,
        feedback=feedback,
        support_requests=support,
        load_seconds=loaded - started,
        rollup_seconds=time.perf_counter() - loaded,
        rollup_days=days,
    )


def _documents() -> list[int]:
    ids = []
    for number in range(DOCUMENTS):
        document = Document.objects.create(
            path=f"bench/page-{number}.md",
            title=f"Page {number}",
            category=CATEGORIES[number % len(CATEGORIES)],
            body="# Page\n\nText.",
        )
        ids.append(document.pk)
    return ids


def staff_client() -> Client:
    user = User.objects.create_superuser("analytics-bench", "bench@example.com", "unused")
    client = Client(HTTP_HOST="localhost")
    client.force_login(user)
    return client


def page_time(client: Client, *, label: str, url: str, runs: int) -> PageTiming:
    """Median and worst of ``runs`` loads of ``url`` (each one as staff see it)."""
    elapsed = []
    for _ in range(runs):
        started = time.perf_counter()
        response = client.get(url)
        elapsed.append((time.perf_counter() - started) * 1000)
        if response.status_code != 200:
            raise BenchmarkError(f"{url} answered {response.status_code}, not 200")
    return PageTiming(
        label=label, url=url, median_ms=statistics.median(elapsed), max_ms=max(elapsed), runs=runs
    )


def todays_burst(*, questions: int) -> None:
    """``questions`` new questions asked in the last hour, a vote on every fifth and a support
    request from every 25th conversation: today's row becomes stale, as on a live site."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT max(id) + 1 FROM assistant_message")
        (first_message,) = cursor.fetchone()
        cursor.execute("SELECT max(id) + 1 FROM assistant_conversation")
        (first_conversation,) = cursor.fetchone()
    with connection.cursor() as cursor:
        cursor.execute(_CONVERSATIONS, {"count": questions * 2 // 5 + 1})
        cursor.execute(
            _MESSAGES,
            {
                "first_conversation": first_conversation,
                "documents": list(Document.objects.values_list("pk", flat=True)),
                "document_count": DOCUMENTS,
                "questions": list(Message.objects.values_list("question", flat=True)[:50]),
                "question_count": min(50, Message.objects.count()),
                "start": 0,
                "stop": questions,
                "total": questions * SPREAD_DAYS * 24,  # all within the last hour
                "spread_days": SPREAD_DAYS,
            },
        )
        cursor.execute(_FEEDBACK, {"first_message": first_message})
        cursor.execute(_SUPPORT, {"first_message": first_message})
