"""The analytics page's charts as inline SVG drawn on the server from our own numbers: no
script, no outside library, nothing the Content-Security-Policy would have to allow (colours
come from classes in static/assistant/analytics.css, not from style attributes). Each chart
has a title and a description for screen readers; the page's tables hold the same numbers."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

WIDTH, HEIGHT = 760, 200
LEFT, RIGHT, TOP, BOTTOM = 48, 12, 12, 30
X_LABELS = 7  # at most this many bucket labels under the axis


@dataclass(frozen=True)
class Series:
    key: str  # css class suffix: chart-<key>
    label: str
    values: Sequence[float | None]  # one per bucket; None: no value (a rate of no questions)


@dataclass(frozen=True)
class Chart:
    title: str  # shown above the drawing
    svg: SafeString
    series: Sequence[Series]  # the legend, in drawing order


def nice_ceiling(value: float) -> float:
    """The axis top for ``value``: four equal steps of a round size (1, 1.5, 2, 2.5, 3, 4, 5, 6
    or 8 times a power of ten, whole numbers only) that reach it; 4 for 0 or less."""
    if value <= 0:
        return 4.0
    wanted = value / 4
    power = 10 ** math.floor(math.log10(wanted))
    for step in (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        size = step * power
        if size >= wanted and size == int(size):
            return float(size * 4)
    return 40.0 * power  # pragma: no cover


def stacked_bars(
    *, chart_id: str, title: str, description: str, labels: Sequence[str], series: Sequence[Series]
) -> Chart:
    """One bar per bucket, its series stacked bottom-up in order; each segment has a tooltip."""
    totals = [sum(each.values[index] or 0 for each in series) for index in range(len(labels))]
    top = nice_ceiling(max(totals, default=0))
    plot_width, plot_height = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_width / max(len(labels), 1)
    bar = max(slot * 0.8, 1.0)
    parts = [_open(chart_id, title, description), *_y_axis(top, percent=False)]
    for index, label in enumerate(labels):
        x = LEFT + index * slot + (slot - bar) / 2
        base = 0.0
        for each in series:
            value = each.values[index] or 0
            if not value:
                continue
            y_top = TOP + plot_height * (1 - (base + value) / top)
            height = plot_height * value / top
            parts.append(
                f'<rect class="chart-{each.key}" x="{x:.1f}" y="{y_top:.1f}" '
                f'width="{bar:.1f}" height="{height:.1f}"><title>{escape(label)}: '
                f"{value:,.0f} {escape(each.label.lower())}</title></rect>"
            )
            base += value
    parts += _x_labels(labels, slot)
    parts.append("</svg>")
    return Chart(title=title, svg=mark_safe("".join(parts)), series=series)


def lines(
    *,
    chart_id: str,
    title: str,
    description: str,
    labels: Sequence[str],
    series: Sequence[Series],
    percent: bool,
) -> Chart:
    """One line per series (a gap where a value is None), a dot on each point with a tooltip;
    ``percent``: values are shares 0..1 drawn on a 0-100 % axis."""
    highest = max((v for each in series for v in each.values if v is not None), default=0)
    top = 1.0 if percent else nice_ceiling(highest)
    plot_width, plot_height = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_width / max(len(labels), 1)
    parts = [_open(chart_id, title, description), *_y_axis(top, percent=percent)]
    for each in series:
        runs: list[list[str]] = [[]]
        dots = []
        for index, value in enumerate(each.values):
            if value is None:
                runs.append([])
                continue
            x = LEFT + index * slot + slot / 2
            y = TOP + plot_height * (1 - value / top)
            runs[-1].append(f"{x:.1f},{y:.1f}")
            shown = f"{value:.0%}" if percent else f"{value:,.0f}"
            dots.append(
                f'<circle class="chart-{each.key}" cx="{x:.1f}" cy="{y:.1f}" r="2.5">'
                f"<title>{escape(labels[index])}: {shown} {escape(each.label.lower())}</title>"
                "</circle>"
            )
        for run in runs:
            if len(run) > 1:
                parts.append(
                    f'<polyline class="chart-line chart-{each.key}" points="{" ".join(run)}"/>'
                )
        parts += dots
    parts += _x_labels(labels, slot)
    parts.append("</svg>")
    return Chart(title=title, svg=mark_safe("".join(parts)), series=series)


def _open(chart_id: str, title: str, description: str) -> str:
    return (
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-labelledby="{chart_id}-title {chart_id}-desc" xmlns="http://www.w3.org/2000/svg">'
        f'<title id="{chart_id}-title">{escape(title)}</title>'
        f'<desc id="{chart_id}-desc">{escape(description)}</desc>'
    )


def _y_axis(top: float, *, percent: bool) -> list[str]:
    plot_height = HEIGHT - TOP - BOTTOM
    parts = []
    for step in range(5):
        value = top * step / 4
        y = TOP + plot_height * (1 - step / 4)
        text = f"{value:.0%}" if percent else f"{value:,.0f}"
        parts.append(
            f'<line class="chart-grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" '
            f'y1="{y:.1f}" y2="{y:.1f}"/><text class="chart-tick" x="{LEFT - 6}" '
            f'y="{y + 4:.1f}" text-anchor="end">{text}</text>'
        )
    return parts


def _x_labels(labels: Sequence[str], slot: float) -> list[str]:
    if not labels:
        return []
    every = max(1, math.ceil(len(labels) / X_LABELS))
    shown = set(range(0, len(labels), every)) | {len(labels) - 1}
    if len(labels) - 1 - max(shown - {len(labels) - 1}, default=-every) < every / 2:
        shown.discard(max(shown - {len(labels) - 1}, default=-1))  # no two labels overlapping
    return [
        f'<text class="chart-tick" x="{LEFT + index * slot + slot / 2:.1f}" '
        f'y="{HEIGHT - 10}" text-anchor="middle">{escape(labels[index])}</text>'
        for index in sorted(shown)
    ]
