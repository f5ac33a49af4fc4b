"""Keeping the analytics rollup (``QuestionDay``) equal to a direct count of the messages.

The database triggers of migration 0008 mark a UTC day stale whenever something a day's
counts read changes; ``rollup_refresh`` recounts every local day those UTC days overlap, from
the messages themselves, and clears the marks. The page calls it before reading (usually a
day or two: today's questions), and a periodic task calls it every minute.

What a question counts as is decided here, once, in ``_RECOUNT`` (docs/answers.md, "Help-center
analytics", says the same in words):

- answered: status ``answered``; refused: ``not_in_docs``; unserved: flagged, failed, pending;
- handed to support: a support request from the question's conversation, sent at or after
  the question and at most ``HANDOFF_WINDOW`` after its answer (after the asking when it was
  never answered);
- thumbs up / down: the question has at least one such vote;
- deflected, assumed: answered and not handed to support;
- deflected, confirmed: answered, a thumbs up, and not handed to support.
"""

from __future__ import annotations

import datetime
import zoneinfo
from collections.abc import Callable, Iterable

import structlog
from django.conf import settings
from django.db import connection, transaction

from assistant.analytics.models import QuestionDay

log = structlog.get_logger("groundwork.assistant")

HANDOFF_WINDOW = datetime.timedelta(hours=24)
# Stale UTC days recounted per transaction: a backlog (the first refresh after the upgrade)
# commits as it goes instead of holding one long transaction.
REFRESH_BATCH_DAYS = 31
# pg_advisory_xact_lock key: one refresher at a time ("gw-analytics" as a number).
_REFRESH_LOCK = 0x67772D616E61

_RECOUNT = """
WITH days AS (SELECT unnest(%(days)s::date[]) AS day),
asked AS (
    SELECT days.day, m.id, m.status, m.audience, m.citations, m.created_at, m.answered_at,
           m.conversation_id
    FROM days
    JOIN assistant_message m
      ON m.created_at >= (days.day::timestamp AT TIME ZONE %(time_zone)s)
     AND m.created_at < ((days.day + 1)::timestamp AT TIME ZONE %(time_zone)s)
),
judged AS (
    SELECT a.day, a.id, a.status, a.audience, a.citations,
           EXISTS (SELECT 1 FROM assistant_feedback f
                   WHERE f.message_id = a.id AND f.vote = 'up') AS thumbs_up,
           EXISTS (SELECT 1 FROM assistant_feedback f
                   WHERE f.message_id = a.id AND f.vote = 'down') AS thumbs_down,
           EXISTS (SELECT 1 FROM assistant_supportrequest s
                   WHERE s.conversation_id = a.conversation_id
                     AND s.created_at >= a.created_at
                     AND s.created_at <= COALESCE(a.answered_at, a.created_at)
                                         + make_interval(secs => %(window_seconds)s)
           ) AS handed
    FROM asked a
),
scoped AS (
    SELECT j.*, NULL::varchar AS category FROM judged j
    UNION ALL
    SELECT j.*, cited.category
    FROM judged j
    JOIN LATERAL (
        SELECT DISTINCT d.category
        FROM jsonb_array_elements(
            CASE WHEN jsonb_typeof(j.citations) = 'array' THEN j.citations ELSE '[]'::jsonb END
        ) AS c(value)
        JOIN kb_document d ON d.id = (c.value ->> 'document_id')::bigint
        WHERE c.value ? 'document_id'
    ) cited ON true
)
INSERT INTO assistant_questionday (
    day, time_zone, audience, category, asked, answered, refused, unserved, handed_to_support,
    thumbs_up, thumbs_down, deflected_confirmed, deflected_assumed
)
SELECT day, %(time_zone)s, audience, category,
       count(*),
       count(*) FILTER (WHERE status = 'answered'),
       count(*) FILTER (WHERE status = 'not_in_docs'),
       count(*) FILTER (WHERE status NOT IN ('answered', 'not_in_docs')),
       count(*) FILTER (WHERE handed),
       count(*) FILTER (WHERE thumbs_up),
       count(*) FILTER (WHERE thumbs_down),
       count(*) FILTER (WHERE status = 'answered' AND thumbs_up AND NOT handed),
       count(*) FILTER (WHERE status = 'answered' AND NOT handed)
FROM scoped
GROUP BY day, audience, category
"""

_MARK_EVERY_DAY = """
INSERT INTO assistant_questiondaystale (utc_day)
SELECT DISTINCT (created_at AT TIME ZONE 'UTC')::date FROM assistant_message
"""

_STALE_DAYS = """
SELECT DISTINCT utc_day FROM assistant_questiondaystale WHERE id <= %(upto)s
ORDER BY utc_day LIMIT %(limit)s
"""

# Deletes the marks committed when it starts; the recount that follows, in the same
# transaction, reads at least what they marked. A mark committed later stays for the next
# refresh, and if the recount fails the deletion is rolled back with it.
_CLEAR_STALE = "DELETE FROM assistant_questiondaystale WHERE utc_day = ANY(%(days)s)"


def local_days(utc_day: datetime.date, time_zone: str) -> set[datetime.date]:
    """The local days (in ``time_zone``) that the UTC day ``utc_day`` overlaps: one or two."""
    zone = zoneinfo.ZoneInfo(time_zone)
    start = datetime.datetime.combine(utc_day, datetime.time(), tzinfo=datetime.UTC)
    last = start + datetime.timedelta(days=1) - datetime.timedelta(microseconds=1)
    return {start.astimezone(zone).date(), last.astimezone(zone).date()}


def rollup_refresh(*, progress: Callable[[int, int], None] | None = None) -> int:
    """Recount every stale day; returns how many local days were recounted. Safe to run at
    any time and from several processes at once (they take turns)."""
    _time_zone_follow()
    # Only the marks made before this call: on a busy site today is marked again every few
    # moments, and a refresh that chased them would never end (the next one counts them).
    with connection.cursor() as cursor:
        cursor.execute("SELECT COALESCE(max(id), 0) FROM assistant_questiondaystale")
        (upto,) = cursor.fetchone()
    recounted = 0
    while True:
        done, remaining = _refresh_batch(upto=upto)
        recounted += done
        if progress is not None and (done or recounted):
            progress(recounted, recounted + remaining)
        if not done:
            break
    if recounted:
        log.info("analytics_rollup_refreshed", days=recounted)
    return recounted


@transaction.atomic
def _time_zone_follow() -> None:
    """Rows counted in another time zone (``TIME_ZONE`` changed) have the wrong day
    boundaries: delete them all and mark every day for recounting."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_REFRESH_LOCK])
        if QuestionDay.objects.exclude(time_zone=settings.TIME_ZONE).exists():
            QuestionDay.objects.all().delete()
            cursor.execute(_MARK_EVERY_DAY)


@transaction.atomic
def _refresh_batch(*, upto: int) -> tuple[int, int]:
    """One transaction: the first ``REFRESH_BATCH_DAYS`` UTC days marked (by marks up to id
    ``upto``), their local days recounted and their marks cleared. Returns (local days
    recounted, marked UTC days left)."""
    time_zone = settings.TIME_ZONE
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_REFRESH_LOCK])
        cursor.execute(_STALE_DAYS, {"limit": REFRESH_BATCH_DAYS, "upto": upto})
        utc_days = [row[0] for row in cursor.fetchall()]
        if not utc_days:
            return 0, 0
        days = sorted(_local_days_of(utc_days, time_zone))
        cursor.execute(_CLEAR_STALE, {"days": utc_days})
        QuestionDay.objects.filter(day__in=days).delete()
        cursor.execute(
            _RECOUNT,
            {
                "days": days,
                "time_zone": time_zone,
                "window_seconds": HANDOFF_WINDOW.total_seconds(),
            },
        )
        cursor.execute("SELECT count(DISTINCT utc_day) FROM assistant_questiondaystale")
        (remaining,) = cursor.fetchone()
    return len(days), remaining


def _local_days_of(utc_days: Iterable[datetime.date], time_zone: str) -> set[datetime.date]:
    days: set[datetime.date] = set()
    for utc_day in utc_days:
        days |= local_days(utc_day, time_zone)
    return days
