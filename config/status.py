"""What an operator watches, read in one place: queue depth per queue, index states per model,
answer latency, replica lag. ``manage.py ops_status`` prints it; each figure is one read."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, connections
from django.db.models import Count, Min
from django.utils import timezone

from config.celery_app import app
from kb.models import DocumentIndexState, EmbeddingModel
from kb.runtime.db_router import REPLICA_DB_ALIAS, replica_configured


@dataclass(frozen=True)
class QueueDepth:
    queue: str
    messages: int | None  # None: the broker did not answer
    error: str = ""


@dataclass(frozen=True)
class IndexStates:
    model: str
    state: str  # the model's: active / building / retired
    by_status: dict[str, int]  # pending / indexing / indexed / failed
    not_current: int  # documents whose chunks are not their text as it is now
    oldest_pending_seconds: float | None


@dataclass(frozen=True)
class AnswerLatency:
    answers: int  # answered in the window
    p50_seconds: float | None
    p95_seconds: float | None
    pending: int  # asked, not answered yet


def queue_depths() -> list[QueueDepth]:
    """Messages waiting on each queue, from the broker (Redis or RabbitMQ alike)."""
    depths = []
    try:
        with app.connection_for_read() as connection:
            channel = connection.default_channel
            for queue in (settings.INTERACTIVE_QUEUE, settings.BULK_QUEUE):
                # Declared as Celery declares it (idempotent): a queue no worker has declared
                # yet is then simply empty, on Redis as on RabbitMQ.
                declared = app.amqp.queues[queue].bind(channel).queue_declare()
                depths.append(QueueDepth(queue=queue, messages=declared.message_count))
    except Exception as exc:  # kombu raises many types when the broker is unreachable
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return [
            QueueDepth(queue=queue, messages=None, error=reason)
            for queue in (settings.INTERACTIVE_QUEUE, settings.BULK_QUEUE)
        ]
    return depths


def index_states() -> list[IndexStates]:
    now = timezone.now()
    result = []
    for model in EmbeddingModel.objects.exclude(state=EmbeddingModel.State.RETIRED).order_by("pk"):
        states = DocumentIndexState.objects.filter(embedding_model=model)
        by_status = dict(
            states.values_list("status").annotate(count=Count("pk")).order_by("status")
        )
        oldest = states.filter(status=DocumentIndexState.Status.PENDING).aggregate(
            oldest=Min("queued_at")
        )["oldest"]
        result.append(
            IndexStates(
                model=model.key,
                state=model.state,
                by_status=by_status,
                not_current=states.exclude(pk__in=states.current().values("pk")).count(),
                oldest_pending_seconds=(now - oldest).total_seconds() if oldest else None,
            )
        )
    return result


def answer_latency(*, window: timedelta = timedelta(hours=1)) -> AnswerLatency:
    """Time from a question to its finished answer over the last ``window``."""
    since = timezone.now() - window
    with connections["default"].cursor() as cursor:
        cursor.execute(
            """
            SELECT count(*) FILTER (WHERE answered_at IS NOT NULL),
                   percentile_cont(0.5) WITHIN GROUP (
                       ORDER BY extract(epoch FROM answered_at - created_at)),
                   percentile_cont(0.95) WITHIN GROUP (
                       ORDER BY extract(epoch FROM answered_at - created_at)),
                   count(*) FILTER (WHERE status = 'pending')
            FROM assistant_message WHERE created_at >= %s
            """,
            [since],
        )
        answers, p50, p95, pending = cursor.fetchone()
    return AnswerLatency(
        answers=answers,
        p50_seconds=None if p50 is None else float(p50),
        p95_seconds=None if p95 is None else float(p95),
        pending=pending,
    )


def replica_lag_seconds() -> float | None:
    """How far the replica's last replayed transaction is behind now; None without a replica.
    On an idle primary this grows although nothing is missing: read it with the queue depths."""
    if not replica_configured():
        return None
    try:
        with connections[REPLICA_DB_ALIAS].cursor() as cursor:
            cursor.execute(
                "SELECT extract(epoch FROM now() - pg_last_xact_replay_timestamp()), "
                "pg_is_in_recovery()"
            )
            lag, in_recovery = cursor.fetchone()
    except DatabaseError:
        return float("inf")
    if not in_recovery:
        return 0.0  # not a standby (e.g. the tests' mirror of the primary)
    return float(lag) if lag is not None else 0.0


__all__ = [
    "AnswerLatency",
    "IndexStates",
    "QueueDepth",
    "answer_latency",
    "index_states",
    "queue_depths",
    "replica_lag_seconds",
]
