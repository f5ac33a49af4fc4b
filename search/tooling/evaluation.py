"""Retrieval evaluation: recall@k, MRR@10 and nDCG@10 per retrieval configuration, at page and
at section level.

Documents are ranked in the order of their first chunk in the hit list (max-pooling), so a page
that fills several slots counts once. Sections are ranked the same way by their unit
(path, heading path): a chunk counts for a section when its heading path equals the section's
label, and a case's relevant sections are its `relevant_sections` labels on its relevant pages.
A case with no relevant documents is "unanswerable" for this asker (not in the docs, internal,
or retired) and is scored by the no-answer rule instead.
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


SectionUnit = tuple[str, str]  # (document path, heading path)
METRIC_KEYS = (*tuple(f"recall@{cut}" for cut in CUTOFFS), "mrr@10", "ndcg@10")


def ranked_documents(paths: Iterable[str]) -> list[str]:
    """Distinct document paths in the order of their first appearance."""
    return list(dict.fromkeys(paths))


def relevant_sections(case: EvalCase) -> list[SectionUnit]:
    return [(path, label) for path in case.relevant for label in case.relevant_sections]


def ranking_metrics(ranked: Sequence[object], relevant: Sequence[object]) -> dict[str, float]:
    """recall@1/5/10, MRR@10 and nDCG@10 of one ranking of distinct units."""
    return {
        **{f"recall@{cut}": recall_at(ranked, relevant, cut) for cut in CUTOFFS},
        "mrr@10": reciprocal_rank(ranked, relevant),
        "ndcg@10": ndcg_at(ranked, relevant),
    }


def recall_at(ranked: Sequence[object], relevant: Sequence[object], k: int) -> float:
    return len(set(ranked[:k]) & set(relevant)) / len(relevant)


def reciprocal_rank(ranked: Sequence[object], relevant: Sequence[object], k: int = 10) -> float:
    for position, path in enumerate(ranked[:k], start=1):
        if path in relevant:
            return 1.0 / position
    return 0.0


def ndcg_at(ranked: Sequence[object], relevant: Sequence[object], k: int = 10) -> float:
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
    section_units: list[SectionUnit] = field(default_factory=list)  # distinct, best first
    metrics: dict[str, float] = field(default_factory=dict)
    section_metrics: dict[str, float] = field(default_factory=dict)  # {} without section labels
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
    return outcome_from_hits(
        case,
        [(hit.path, hit.heading_path) for hit in result.hits],
        degraded=result.degraded,
        top_score=result.confidence,
        k=k,
        no_answer_threshold=no_answer_threshold,
    )


def outcome_from_hits(
    case: EvalCase,
    hits: Sequence[SectionUnit],
    *,
    degraded: bool = False,
    top_score: float | None = None,
    k: int,
    no_answer_threshold: float | None = None,
) -> CaseOutcome:
    """Score one case from its hits, best first, each a (document path, heading path)."""
    ranked = ranked_documents(path for path, _ in hits)
    outcome = CaseOutcome(
        case=case,
        ranked=ranked,
        sections=[heading_path for _, heading_path in hits],
        degraded=degraded,
        top_score=top_score,
        section_units=list(dict.fromkeys(hits)),
    )
    if case.answerable:
        outcome.metrics = ranking_metrics(ranked, case.relevant)
        if case.relevant_sections:
            outcome.section_metrics = ranking_metrics(
                outcome.section_units, relevant_sections(case)
            )
        outcome.passed = recall_at(ranked, case.relevant, k) > 0
    else:
        # Nothing relevant may be shown: correct when retrieval is not confident of anything.
        outcome.passed = not hits or (
            no_answer_threshold is not None
            and outcome.top_score is not None
            and outcome.top_score < no_answer_threshold
        )
    return outcome


@dataclass(frozen=True)
class KindSummary:
    cases: int
    metrics: dict[str, float]  # page level
    section_cases: int  # cases with section labels
    section_metrics: dict[str, float]

    def as_json(self) -> dict[str, object]:
        return {
            "cases": self.cases,
            "page": self.metrics,
            "section_cases": self.section_cases,
            "section": self.section_metrics,
        }


@dataclass
class Summary:
    name: str
    answerable: int
    unanswerable: int
    metrics: dict[str, float]
    no_answer_accuracy: float | None
    failed: list[CaseOutcome]
    section_cases: int = 0
    section_metrics: dict[str, float] = field(default_factory=dict)
    by_kind: dict[str, KindSummary] = field(default_factory=dict)

    def as_json(self) -> dict[str, object]:
        return {
            "row": self.name,
            "answerable": self.answerable,
            "unanswerable": self.unanswerable,
            "no_answer_accuracy": self.no_answer_accuracy,
            "page": self.metrics,
            "section_cases": self.section_cases,
            "section": self.section_metrics,
            "by_kind": {kind: summary.as_json() for kind, summary in self.by_kind.items()},
        }


def _means(outcomes: Sequence[CaseOutcome], keys: Sequence[str], *, sections: bool) -> dict:
    values = [o.section_metrics if sections else o.metrics for o in outcomes]
    values = [v for v in values if v]
    return {key: (sum(v[key] for v in values) / len(values)) if values else 0.0 for key in keys}


def summarise(name: str, outcomes: Sequence[CaseOutcome], *, k: int) -> Summary:
    answerable = [o for o in outcomes if o.case.answerable]
    unanswerable = [o for o in outcomes if not o.case.answerable]
    keys = list(METRIC_KEYS)
    if f"recall@{k}" not in keys:
        keys.insert(0, f"recall@{k}")
        for outcome in answerable:
            outcome.metrics[f"recall@{k}"] = recall_at(outcome.ranked, outcome.case.relevant, k)
    with_sections = [o for o in answerable if o.section_metrics]
    kinds = sorted({o.case.kind for o in answerable if o.case.kind})
    by_kind = {}
    for kind in kinds:
        of_kind = [o for o in answerable if o.case.kind == kind]
        by_kind[kind] = KindSummary(
            cases=len(of_kind),
            metrics=_means(of_kind, keys, sections=False),
            section_cases=sum(1 for o in of_kind if o.section_metrics),
            section_metrics=_means(of_kind, METRIC_KEYS, sections=True),
        )
    no_answer = sum(o.passed for o in unanswerable) / len(unanswerable) if unanswerable else None
    return Summary(
        name=name,
        answerable=len(answerable),
        unanswerable=len(unanswerable),
        metrics=_means(answerable, keys, sections=False),
        no_answer_accuracy=no_answer,
        failed=[o for o in outcomes if not o.passed],
        section_cases=len(with_sections),
        section_metrics=_means(with_sections, METRIC_KEYS, sections=True),
        by_kind=by_kind,
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
