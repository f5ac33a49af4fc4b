"""The analytics rollup: one row per (day, asker audience, cited category) with the counts of
the questions asked that day, and the to-do list of days whose rows must be recounted.

The rollup holds nothing a direct count of the messages would not give: database triggers
(migration 0008) mark a day stale whenever a message, a vote, a support request or a cited
page's category changes, and ``assistant.analytics.rollup.rollup_refresh`` recounts the stale
days before the page reads them. A row with ``category`` NULL counts every question of the day;
a row with a category counts the questions whose answer cited a page of that category (a
question citing two categories is in both rows and once in the NULL row).
"""

from __future__ import annotations

from django.db import models


class QuestionDay(models.Model):
    day = models.DateField()  # in ``time_zone``, the day the question was asked
    time_zone = models.CharField(max_length=64)  # settings.TIME_ZONE when counted
    audience = models.CharField(max_length=10)  # Message.Audience
    # NULL, not "": every question of the day ("" is a real category: pages without one).
    category = models.CharField(max_length=200, null=True)  # noqa: DJ001
    asked = models.PositiveIntegerField(default=0)
    answered = models.PositiveIntegerField(default=0)
    refused = models.PositiveIntegerField(default=0)  # "not in our docs"
    unserved = models.PositiveIntegerField(default=0)  # flagged, failed or still pending
    handed_to_support = models.PositiveIntegerField(default=0)
    thumbs_up = models.PositiveIntegerField(default=0)
    thumbs_down = models.PositiveIntegerField(default=0)
    deflected_confirmed = models.PositiveIntegerField(default=0)
    deflected_assumed = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["day", "audience", "category"],
                name="assistant_questionday_unique",
                nulls_distinct=False,
            )
        ]

    def __str__(self) -> str:
        return f"{self.day} {self.audience} {self.category or 'all'}: {self.asked}"


class QuestionDayStale(models.Model):
    """A UTC day some of whose questions changed since the rollup last counted them. Written
    by the triggers only; ``rollup_refresh`` recounts the local days it overlaps and deletes it.

    Append-only, with no unique day: a writer only ever inserts, so it never waits on a
    refresher deleting the marks it has counted (one day may be marked many times over)."""

    utc_day = models.DateField(db_index=True)

    def __str__(self) -> str:
        return str(self.utc_day)
