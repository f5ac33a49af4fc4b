"""The "Help-center analytics" admin page (admin/analytics/) and its CSV: parse the filters,
bring the rollup up to date, read it, render. Staff with the message view permission only."""

from __future__ import annotations

import csv
import datetime
from dataclasses import dataclass

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone
from django.views.decorators.http import require_GET

from assistant.analytics import charts
from assistant.analytics.rollup import HANDOFF_WINDOW, rollup_refresh
from assistant.analytics.selectors import (
    AnalyticsFilters,
    PeriodCounts,
    cited_categories,
    counted_fields,
    may_view_analytics,
    period_total,
    question_days,
    question_weeks,
)
from assistant.analytics.topics import TOPIC_QUESTIONS, TOPIC_SAMPLE, question_topics
from assistant.models import Message

PERIODS = (7, 30, 90, 365)
DEFAULT_PERIOD = 30
DAILY_CHARTS_UP_TO = 90  # longer periods are charted by week
AUDIENCES = {"": "Everyone", **dict(Message.Audience.choices)}


class FiltersRejected(ValueError):
    """A filter's value is not one the page offers; the message says which and what is."""


@dataclass(frozen=True)
class TableRow:
    counts: PeriodCounts
    label: str

    def share(self, name: str) -> str:
        share = self.counts.share(name)
        return "-" if share is None else f"{share:.0%}"

    @property
    def shares(self) -> dict[str, str]:
        return {name: self.share(name) for name in counted_fields()}

    @property
    def confirmed_share(self) -> str:
        return self.share("deflected_confirmed")

    @property
    def assumed_share(self) -> str:
        return self.share("deflected_assumed")


def analytics_filters(request: HttpRequest, *, today: datetime.date) -> AnalyticsFilters:
    """The period (last N days, today included), audience and category asked for. Raises
    ``FiltersRejected`` for a value the page does not offer."""
    period = request.GET.get("days", "") or str(DEFAULT_PERIOD)
    if not period.isdigit() or int(period) not in PERIODS:
        raise FiltersRejected(
            f"The period must be one of {', '.join(map(str, PERIODS))} days (got {period!r})."
        )
    audience = request.GET.get("audience", "")
    if audience not in AUDIENCES:
        raise FiltersRejected(f"The audience must be public or internal (got {audience!r}).")
    category = request.GET.get("category", "")
    return AnalyticsFilters(
        start=today - datetime.timedelta(days=int(period) - 1),
        end=today,
        audience=audience or None,
        category=category or None,
    )


def _today() -> datetime.date:
    return timezone.localdate()


@require_GET
def analytics_view(request: HttpRequest) -> HttpResponse:
    if not may_view_analytics(actor=request.user):
        raise PermissionDenied
    try:
        filters = analytics_filters(request, today=_today())
    except FiltersRejected as exc:
        filters = AnalyticsFilters(
            start=_today() - datetime.timedelta(days=DEFAULT_PERIOD - 1), end=_today()
        )
        return _page(request, filters, error=str(exc), status=400)
    rollup_refresh()
    if request.GET.get("format") == "csv":
        return _daily_csv(filters)
    return _page(request, filters)


def _page(
    request: HttpRequest, filters: AnalyticsFilters, *, error: str = "", status: int = 200
) -> TemplateResponse:
    days = question_days(filters) if not error else []
    weeks = question_weeks(days)
    daily = filters.days <= DAILY_CHARTS_UP_TO
    buckets = days if daily else weeks
    rows = [TableRow(counts=bucket, label=_label(bucket, daily=daily)) for bucket in buckets]
    query = request.GET.copy()
    query["format"] = "csv"
    context = {
        **admin.site.each_context(request),
        "title": "Help-center analytics",
        "error": error,
        "filters": filters,
        "periods": PERIODS,
        "period": filters.days,
        "audiences": AUDIENCES.items(),
        "audience": filters.audience or "",
        "categories": cited_categories(),
        "category": filters.category or "",
        "total": TableRow(counts=period_total(days, filters=filters), label="Whole period"),
        "bucket_name": "day" if daily else "week",
        "rows": rows,
        "weeks": [TableRow(counts=week, label=_label(week, daily=False)) for week in weeks],
        "charts": _charts(rows) if rows else [],
        "topics": question_topics(filters) if not error else None,
        "unanswered": question_topics(filters, unanswered=True) if not error else None,
        "topic_sample": TOPIC_SAMPLE,
        "topic_questions": TOPIC_QUESTIONS,
        "handoff_hours": int(HANDOFF_WINDOW.total_seconds() // 3600),
        "csv_query": query.urlencode(),
    }
    return TemplateResponse(request, "admin/assistant/analytics.html", context, status=status)


def _label(bucket: PeriodCounts, *, daily: bool) -> str:
    if daily:
        return bucket.start.isoformat()
    return f"week of {bucket.start.isoformat()}"


def _charts(rows: list[TableRow]) -> list[charts.Chart]:
    labels = [row.counts.start.strftime("%b %d") for row in rows]
    counts = [row.counts for row in rows]
    return [
        charts.stacked_bars(
            chart_id="chart-questions",
            title="Questions asked",
            description="Questions asked per bucket: answered, refused (not in our docs), "
            "and flagged, failed or unanswered. The table below holds the numbers.",
            labels=labels,
            series=[
                charts.Series("answered", "Answered", [c.answered for c in counts]),
                charts.Series("refused", "Refused", [c.refused for c in counts]),
                charts.Series("unserved", "Flagged, failed, pending", [c.unserved for c in counts]),
            ],
        ),
        charts.lines(
            chart_id="chart-deflection",
            title="Deflection, as a share of questions asked",
            description="Assumed deflection (answered, no support request within 24 hours) "
            "and confirmed deflection (the same with a thumbs up).",
            labels=labels,
            series=[
                charts.Series("assumed", "Assumed", [c.share("deflected_assumed") for c in counts]),
                charts.Series(
                    "confirmed", "Confirmed", [c.share("deflected_confirmed") for c in counts]
                ),
            ],
            percent=True,
        ),
        charts.lines(
            chart_id="chart-feedback",
            title="Thumbs and hand-offs to support",
            description="Questions with a thumbs up, with a thumbs down, and handed to support.",
            labels=labels,
            series=[
                charts.Series("up", "Thumbs up", [c.thumbs_up for c in counts]),
                charts.Series("down", "Thumbs down", [c.thumbs_down for c in counts]),
                charts.Series("handed", "Handed to support", [c.handed_to_support for c in counts]),
            ],
            percent=False,
        ),
    ]


def _daily_csv(filters: AnalyticsFilters) -> HttpResponse:
    """The daily table: one row per day of the period (numbers and dates only)."""
    names = counted_fields()
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    audience = filters.audience or "all"
    response["Content-Disposition"] = (
        f'attachment; filename="help-center-analytics-{filters.start}-{filters.end}-{audience}.csv"'
    )
    writer = csv.writer(response)
    writer.writerow(["day", *names])
    for day in question_days(filters):
        writer.writerow([day.start.isoformat(), *(getattr(day, name) for name in names)])
    return response
