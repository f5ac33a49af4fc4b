"""analytics_bench loads its questions with set-based SQL: the rows must fit the schema as it
is now, and the rollup the load builds must equal a direct count of what it loaded."""

from __future__ import annotations

import pytest
from django.db.models import Exists, OuterRef

from assistant.analytics.models import QuestionDay
from assistant.analytics.rollup import rollup_refresh
from assistant.models import Feedback, Message
from assistant.tooling.analytics_benchmarks import (
    page_time,
    questions_load,
    staff_client,
    todays_burst,
)

pytestmark = pytest.mark.django_db


def test_the_loaded_questions_fit_the_schema_and_the_rollup_counts_them() -> None:
    # when
    report = questions_load(count=3000, questions=["How do refunds work?", "Is there an app?"])
    todays_burst(questions=200)
    rollup_refresh()

    # then
    assert report.messages == 3000 and report.feedback == 600
    assert Message.objects.count() == 3200
    rows = QuestionDay.objects.filter(category__isnull=True)
    assert sum(rows.values_list("asked", flat=True)) == 3200
    up = Feedback.objects.filter(message=OuterRef("pk"), vote="up")
    answered = Message.objects.filter(status="answered").count()
    thumbs_up = Message.objects.filter(Exists(up)).count()
    assert sum(rows.values_list("answered", flat=True)) == answered > 0
    assert sum(rows.values_list("thumbs_up", flat=True)) == thumbs_up > 0
    timing = page_time(staff_client(), label="30 days", url="/admin/analytics/?days=30", runs=1)
    assert timing.median_ms > 0
