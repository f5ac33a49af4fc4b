"""The analytics charts: inline SVG the strict Content-Security-Policy accepts (no script, no
style attribute), text escaped, bars as tall as their numbers, round axis steps."""

from __future__ import annotations

import re

import pytest

from assistant.analytics.charts import HEIGHT, Series, lines, nice_ceiling, stacked_bars


@pytest.mark.parametrize(
    ("highest", "top"), [(0, 4), (3, 4), (21, 24), (50, 60), (97, 100), (1234, 1600)]
)
def test_the_axis_top_is_four_whole_round_steps_at_or_above_the_highest_value(highest, top):
    assert nice_ceiling(highest) == top
    assert (top / 4).is_integer()


def test_bars_are_stacked_in_proportion_and_carry_their_numbers_as_tooltips() -> None:
    chart = stacked_bars(
        chart_id="c",
        title="Questions <asked>",
        description="d",
        labels=["Nov 01", "Nov 02"],
        series=[Series("answered", "Answered", [30, 10]), Series("refused", "Refused", [10, 0])],
    )

    svg = str(chart.svg)
    heights = [float(h) for h in re.findall(r'<rect [^>]*height="([0-9.]+)"', svg)]
    assert len(heights) == 3  # a zero segment draws nothing
    assert heights[0] == pytest.approx(3 * heights[1]) == pytest.approx(3 * heights[2])
    assert "<title>Nov 01: 30 answered</title>" in svg
    assert "Questions &lt;asked&gt;" in svg and "<asked>" not in svg
    assert "style=" not in svg and "<script" not in svg


def test_a_rate_of_no_questions_is_a_gap_in_the_line_not_a_zero() -> None:
    chart = lines(
        chart_id="r",
        title="Deflection",
        description="d",
        labels=["a", "b", "c", "d", "e"],
        series=[Series("assumed", "Assumed", [0.5, 1.0, None, 0.25, 0.5])],
        percent=True,
    )

    svg = str(chart.svg)
    assert svg.count("<polyline") == 2  # a-b and d-e
    assert svg.count("<circle") == 4
    assert "<title>b: 100% assumed</title>" in svg
    assert f'y="{HEIGHT - 10}"' in svg  # the bucket labels under the axis
