"""The no-answer rule's two thresholds, chosen by leave-one-set-out over the quote dumps
(``assistant.tuning.quotes``), which keep each case's retrieval confidence and the share of the
question's words its best passage holds.

A refusal threshold calibrated on one help center does not transfer (the same pair refused 35%
of one's unanswerable questions and 5% of another's), so each set is scored with thresholds
chosen on the others' calibration halves, and the frontier (answerable questions refused
against unanswerable ones refused) is printed per set.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from assistant.tooling.tuning.quotes import dump_half

THRESHOLDS = tuple(round(0.20 + 0.02 * step, 2) for step in range(21))  # 0.20 .. 0.60
UNSUPPORTED = tuple(round(0.40 + 0.02 * step, 2) for step in range(16))  # 0.40 .. 0.70
MAX_ANSWERABLE_REFUSED = 0.05  # the target; past it a refused answerable question costs 4x


@dataclass(frozen=True)
class Refusal:
    """``assistant.no_answer.no_answer_decide``'s rule on a dump's recorded signals. The dump
    keeps the question's coverage as the decision left it (common words set aside only where
    it looked at them), so a replay at other thresholds is close, not exact; at today's pair it
    gave the decision the pipeline made on all 383 cases of the four dumps."""

    threshold: float
    unsupported: float

    def refuses(self, row: dict[str, Any]) -> bool:
        confidence = row["confidence"]
        if confidence is None or confidence < self.threshold:
            return True
        return confidence < self.unsupported and row["coverage"] == 0


@dataclass(frozen=True)
class RefusalScore:
    unanswerable_refused: float
    answerable_refused: float

    @property
    def objective(self) -> float:
        excess = max(0.0, self.answerable_refused - MAX_ANSWERABLE_REFUSED)
        return self.unanswerable_refused - self.answerable_refused - 4 * excess


def refusal_score(rows: Sequence[dict[str, Any]], rule: Refusal) -> RefusalScore:
    answerable = [row for row in rows if row["answerable"]]
    unanswerable = [row for row in rows if not row["answerable"]]
    return RefusalScore(
        unanswerable_refused=_share(unanswerable, rule),
        answerable_refused=_share(answerable, rule),
    )


def _share(rows: Sequence[dict[str, Any]], rule: Refusal) -> float:
    return sum(rule.refuses(row) for row in rows) / len(rows) if rows else 0.0


def refusal_fit(sets: Sequence[Sequence[dict[str, Any]]]) -> Refusal:
    """The pair with the best mean objective over ``sets`` (each set counts once)."""
    rules = [Refusal(t, u) for t in THRESHOLDS for u in UNSUPPORTED if u >= t]
    return max(
        rules,
        key=lambda rule: (
            statistics.fmean(refusal_score(rows, rule).objective for rows in sets),
            -rule.threshold,  # ties: refuse less
            -rule.unsupported,
        ),
    )


def refusal_fit_report(dumps: dict[str, list[dict[str, Any]]], *, today: Refusal) -> list[str]:
    calibration = dump_half(dumps, "calibration")
    report = dump_half(dumps, "report")
    shipped = refusal_fit(list(calibration.values()))
    lines = [f"refusal fitted on every calibration half: {shipped}"]
    lines.append(f"{'set':<28}{'rule':<34}{'unans. refused':>15}{'ans. refused':>13}")
    for name in dumps:
        others = [rows for other, rows in calibration.items() if other != name]
        held_out = refusal_fit(others) if others else shipped
        for label, rule in (("today", today), ("all sets", shipped), ("LOSO", held_out)):
            score = refusal_score(report[name], rule)
            lines.append(
                f"{name:<28}{label + ' ' + str((rule.threshold, rule.unsupported)):<34}"
                f"{score.unanswerable_refused:>15.1%}{score.answerable_refused:>13.1%}"
            )
        frontier = []
        for threshold in (0.3, 0.35, 0.4, 0.45, 0.5, 0.55):
            score = refusal_score(
                dumps[name], Refusal(threshold, max(threshold, today.unsupported))
            )
            frontier.append(
                f"{threshold}: {score.unanswerable_refused:.0%}/{score.answerable_refused:.0%}"
            )
        lines.append(f"  frontier (all cases, unans./ans. refused): {'  '.join(frontier)}")
    return lines
