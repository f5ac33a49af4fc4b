"""Reads of the analytics page: the counts per day and per week for a period, an audience and
a cited category, from the rollup (``QuestionDay``, kept equal to a direct count by
``assistant.analytics.rollup``), and who may read them."""

from __future__ import annotations

import datetime
import zoneinfo
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields, replace

from django.conf import settings
from django.db.models import Sum

from assistant.analytics.models import QuestionDay
from kb.actors import Actor, actor_has_perm

# What the analytics page reads is every question customers asked: the message view
# permission, the same as the content-gaps page, and staff only.
ANALYTICS_PERMISSION = "assistant.view_message"
COUNTED = (
    "asked",
    "answered",
    "refused",
    "unserved",
    "handed_to_support",
    "thumbs_up",
    "thumbs_down",
    "deflected_confirmed",
    "deflected_assumed",
)


def may_view_analytics(*, actor: Actor) -> bool:
    """Active staff who may read stored questions (the page lists some of them)."""
    return bool(getattr(actor, "is_staff", False) and actor_has_perm(actor, ANALYTICS_PERMISSION))


@dataclass(frozen=True)
class AnalyticsFilters:
    start: datetime.date  # first day, inclusive, in settings.TIME_ZONE
    end: datetime.date  # last day, inclusive
    audience: str | None = None  # Message.Audience value; None: every asker
    category: str | None = None  # a cited page's category; None: every question

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1


@dataclass(frozen=True)
class PeriodCounts:
    """The counts of the questions asked in one bucket (a day, a week or the whole period)."""

    start: datetime.date
    end: datetime.date  # inclusive
    asked: int = 0
    answered: int = 0
    refused: int = 0
    unserved: int = 0
    handed_to_support: int = 0
    thumbs_up: int = 0
    thumbs_down: int = 0
    deflected_confirmed: int = 0
    deflected_assumed: int = 0

    def share(self, name: str) -> float | None:
        """``name``'s count as a share of the questions asked (None when none were)."""
        return getattr(self, name) / self.asked if self.asked else None

    def __add__(self, other: PeriodCounts) -> PeriodCounts:
        summed = {name: getattr(self, name) + getattr(other, name) for name in COUNTED}
        return replace(
            self, start=min(self.start, other.start), end=max(self.end, other.end), **summed
        )


def day_bounds(filters: AnalyticsFilters) -> tuple[datetime.datetime, datetime.datetime]:
    """The period as aware datetimes: the first day's midnight and the midnight after the last
    day, in settings.TIME_ZONE (the rollup's days)."""
    zone = zoneinfo.ZoneInfo(settings.TIME_ZONE)
    start = datetime.datetime.combine(filters.start, datetime.time(), tzinfo=zone)
    end = datetime.datetime.combine(
        filters.end + datetime.timedelta(days=1), datetime.time(), tzinfo=zone
    )
    return start, end


def question_days(filters: AnalyticsFilters) -> list[PeriodCounts]:
    """Every day of the period, oldest first, with zeros for a day without questions: one
    grouped read of the rollup."""
    rows = QuestionDay.objects.filter(day__range=(filters.start, filters.end))
    if filters.category is None:
        rows = rows.filter(category__isnull=True)
    else:
        rows = rows.filter(category=filters.category)
    if filters.audience is not None:
        rows = rows.filter(audience=filters.audience)
    by_day = {
        row["day"]: row
        for row in rows.values("day").annotate(**{name: Sum(name) for name in COUNTED})
    }
    days = []
    for offset in range(filters.days):
        day = filters.start + datetime.timedelta(days=offset)
        counts = by_day.get(day, {})
        days.append(
            PeriodCounts(start=day, end=day, **{name: counts.get(name, 0) for name in COUNTED})
        )
    return days


def question_weeks(days: Sequence[PeriodCounts]) -> list[PeriodCounts]:
    """The days summed by ISO week (Monday first); the period's first and last weeks may be
    partial: their ``start`` and ``end`` say which days they hold."""
    weeks: dict[datetime.date, PeriodCounts] = {}
    for day in days:
        monday = day.start - datetime.timedelta(days=day.start.weekday())
        weeks[monday] = weeks[monday] + day if monday in weeks else day
    return [weeks[monday] for monday in sorted(weeks)]


def period_total(buckets: Iterable[PeriodCounts], *, filters: AnalyticsFilters) -> PeriodCounts:
    total = PeriodCounts(start=filters.start, end=filters.end)
    for bucket in buckets:
        total = total + bucket
    return total


def cited_categories() -> list[str]:
    """The categories of the pages answers cited (what the category filter offers)."""
    rows = QuestionDay.objects.filter(category__isnull=False).values_list("category", flat=True)
    return sorted({category for category in rows.distinct() if category is not None})


def counted_fields() -> list[str]:
    """The counts' names in column order (the CSV's header after the date)."""
    return [each.name for each in fields(PeriodCounts) if each.name in COUNTED]
