"""Retrieval evaluation: document-level recall@k, MRR@10 and nDCG@10 per retrieval configuration.

Documents are ranked in the order of their first chunk in the hit list, so a page that fills
several slots counts once. A case with no relevant documents is "unanswerable" for this asker
(not in the docs, internal, or retired) and is scored by the no-answer rule instead.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from search.results import RetrievalResult

CUTOFFS = (1, 5, 10)


class EvalCaseError(ValueError):
    """A line of the cases file is not a valid case; says which line and why."""


@dataclass(frozen=True)
class EvalCase:
    id: str
    question: str
    relevant: tuple[str, ...]
    relevant_sections: tuple[str, ...] = ()
    kind: str = ""

    @property
    def answerable(self) -> bool:
        return bool(self.relevant)


def cases_load(path: Path) -> list[EvalCase]:
    cases = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
            except json.JSONDecodeError as exc:
                raise EvalCaseError(f"{path}:{number}: not JSON ({exc.msg})") from exc
            if not isinstance(raw, dict) or not isinstance(raw.get("question"), str):
                raise EvalCaseError(f"{path}:{number}: needs a string 'question'")
            relevant = raw.get("relevant", [])
            if not isinstance(relevant, list) or not all(isinstance(p, str) for p in relevant):
                raise EvalCaseError(f"{path}:{number}: 'relevant' must be a list of paths")
            cases.append(
                EvalCase(
                    id=str(raw.get("id") or f"line-{number}"),
                    question=raw["question"],
                    relevant=tuple(relevant),
                    relevant_sections=tuple(raw.get("relevant_sections") or ()),
                    kind=str(raw.get("kind") or ""),
                )
            )
    if not cases:
        raise EvalCaseError(f"{path}: no cases")
    return cases


def ranked_documents(paths: Iterable[str]) -> list[str]:
    """Distinct document paths in the order of their first appearance."""
    return list(dict.fromkeys(paths))


def recall_at(ranked: Sequence[str], relevant: Sequence[str], k: int) -> float:
    return len(set(ranked[:k]) & set(relevant)) / len(relevant)


def reciprocal_rank(ranked: Sequence[str], relevant: Sequence[str], k: int = 10) -> float:
    for position, path in enumerate(ranked[:k], start=1):
        if path in relevant:
            return 1.0 / position
    return 0.0


def ndcg_at(ranked: Sequence[str], relevant: Sequence[str], k: int = 10) -> float:
    gains = sum(
        1.0 / math.log2(position + 1)
        for position, path in enumerate(ranked[:k], start=1)
        if path in relevant
    )
    ideal = sum(1.0 / math.log2(position + 1) for position in range(1, min(k, len(relevant)) + 1))
    return gains / ideal


@dataclass
class CaseOutcome:
    case: EvalCase
    ranked: list[str]
    sections: list[str]
    degraded: bool
    top_score: float | None
    metrics: dict[str, float] = field(default_factory=dict)
    passed: bool = True

    def as_json(self) -> dict[str, object]:
        return {
            "id": self.case.id,
            "question": self.case.question,
            "ranked": self.ranked,
            "sections": self.sections,
            "degraded": self.degraded,
        }


def outcome_score(
    case: EvalCase, result: RetrievalResult, *, k: int, no_answer_threshold: float | None
) -> CaseOutcome:
    ranked = ranked_documents(hit.path for hit in result.hits)
    outcome = CaseOutcome(
        case=case,
        ranked=ranked,
        sections=[hit.heading_path for hit in result.hits],
        degraded=result.degraded,
        top_score=result.confidence,
    )
    if case.answerable:
        outcome.metrics = {
            **{f"recall@{cut}": recall_at(ranked, case.relevant, cut) for cut in CUTOFFS},
            "mrr@10": reciprocal_rank(ranked, case.relevant),
            "ndcg@10": ndcg_at(ranked, case.relevant),
        }
        outcome.passed = recall_at(ranked, case.relevant, k) > 0
    else:
        # Nothing relevant may be shown: correct when retrieval is not confident of anything.
        outcome.passed = not result.hits or (
            no_answer_threshold is not None
            and outcome.top_score is not None
            and outcome.top_score < no_answer_threshold
        )
    return outcome


@dataclass
class Summary:
    name: str
    answerable: int
    unanswerable: int
    metrics: dict[str, float]
    no_answer_accuracy: float | None
    failed: list[CaseOutcome]


def summarise(name: str, outcomes: Sequence[CaseOutcome], *, k: int) -> Summary:
    answerable = [o for o in outcomes if o.case.answerable]
    unanswerable = [o for o in outcomes if not o.case.answerable]
    keys = [f"recall@{cut}" for cut in CUTOFFS] + ["mrr@10", "ndcg@10"]
    if f"recall@{k}" not in keys:
        keys.insert(0, f"recall@{k}")
        for outcome in answerable:
            outcome.metrics[f"recall@{k}"] = recall_at(outcome.ranked, outcome.case.relevant, k)
    metrics = {
        key: (sum(o.metrics[key] for o in answerable) / len(answerable)) if answerable else 0.0
        for key in keys
    }
    no_answer = sum(o.passed for o in unanswerable) / len(unanswerable) if unanswerable else None
    return Summary(
        name=name,
        answerable=len(answerable),
        unanswerable=len(unanswerable),
        metrics=metrics,
        no_answer_accuracy=no_answer,
        failed=[o for o in outcomes if not o.passed],
    )


@dataclass(frozen=True)
class ThresholdPoint:
    threshold: float
    answerable_kept: float  # share of answerable cases whose confidence clears the threshold
    unanswerable_refused: float  # share of unanswerable cases below it


def threshold_sweep(outcomes: Sequence[CaseOutcome]) -> list[ThresholdPoint]:
    """How a no-answer threshold trades answered questions for refused ones, at every cut."""
    answerable = [o.top_score or 0.0 for o in outcomes if o.case.answerable]
    unanswerable = [o.top_score or 0.0 for o in outcomes if not o.case.answerable]
    if not answerable or not unanswerable:
        return []
    points = []
    for threshold in sorted({round(score, 2) for score in answerable + unanswerable}):
        points.append(
            ThresholdPoint(
                threshold=threshold,
                answerable_kept=sum(s >= threshold for s in answerable) / len(answerable),
                unanswerable_refused=sum(s < threshold for s in unanswerable) / len(unanswerable),
            )
        )
    return points


def threshold_for(points: Sequence[ThresholdPoint], *, keep: float = 0.95) -> ThresholdPoint | None:
    """The highest threshold that still answers at least ``keep`` of the answerable cases."""
    eligible = [point for point in points if point.answerable_kept >= keep]
    return max(eligible, key=lambda point: point.threshold) if eligible else None
