from __future__ import annotations

import math
from pathlib import Path

import pytest

from search.tooling.evaluation import (
    EvalCase,
    EvalCaseError,
    cases_load,
    ndcg_at,
    outcome_from_hits,
    ranked_documents,
    recall_at,
    reciprocal_rank,
    summarise,
    threshold_for,
    threshold_sweep,
)


def test_documents_rank_by_their_first_chunk() -> None:
    assert ranked_documents(["a.md", "b.md", "a.md", "c.md", "b.md"]) == ["a.md", "b.md", "c.md"]


def test_recall_counts_relevant_documents_within_the_cut() -> None:
    ranked = ["x.md", "a.md", "y.md", "b.md"]

    assert recall_at(ranked, ["a.md", "b.md"], 1) == 0
    assert recall_at(ranked, ["a.md", "b.md"], 2) == 0.5
    assert recall_at(ranked, ["a.md", "b.md"], 5) == 1


def test_reciprocal_rank_is_one_over_the_first_hit() -> None:
    assert reciprocal_rank(["x.md", "y.md", "a.md"], ["a.md"]) == pytest.approx(1 / 3)
    assert reciprocal_rank(["x.md"] * 10 + ["a.md"], ["a.md"]) == 0


def test_ndcg_is_one_for_an_ideal_order_and_discounted_otherwise() -> None:
    assert ndcg_at(["a.md", "b.md", "x.md"], ["a.md", "b.md"]) == pytest.approx(1.0)
    expected = (1 / math.log2(3)) / (1 + 1 / math.log2(3))
    assert ndcg_at(["x.md", "a.md"], ["a.md", "b.md"]) == pytest.approx(expected)


def test_cases_file_errors_name_the_line(tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"question": "ok", "relevant": ["a.md"]}\n{"question": 3}\n')

    with pytest.raises(EvalCaseError, match=r"cases\.jsonl:2"):
        cases_load(cases)


def test_cases_load_defaults_ids_and_relevance(tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"question": "crypto?"}\n\n{"id": "x", "question": "q", "relevant": ["a"]}\n')

    loaded = cases_load(cases)

    assert [(c.id, c.answerable) for c in loaded] == [("line-1", False), ("x", True)]


def test_threshold_is_the_highest_that_keeps_enough_answers() -> None:
    class _Outcome:
        def __init__(self, score: float, answerable: bool) -> None:
            self.top_score = score
            self.case = type("Case", (), {"answerable": answerable})()

    outcomes = [_Outcome(s, True) for s in (0.5, 0.6, 0.7, 0.8)] + [
        _Outcome(s, False) for s in (0.3, 0.55)
    ]

    chosen = threshold_for(threshold_sweep(outcomes), keep=0.75)

    assert chosen is not None and chosen.threshold == 0.6
    assert chosen.unanswerable_refused == 1.0


def test_sections_are_scored_by_path_and_heading_path() -> None:
    case = EvalCase(
        id="c",
        question="q",
        relevant=("a.md",),
        relevant_sections=("A > Limits",),
        kind="definition",
    )
    hits = [
        ("a.md", "A > Intro"),  # the right page, the wrong section
        ("b.md", "A > Limits"),  # the right label on the wrong page
        ("a.md", "A > Intro"),  # a second chunk of a section already ranked
        ("a.md", "A > Limits"),
    ]

    outcome = outcome_from_hits(case, hits, k=5)

    assert outcome.metrics["recall@1"] == 1.0
    assert outcome.section_units == [("a.md", "A > Intro"), ("b.md", "A > Limits"), hits[3]]
    assert outcome.section_metrics["recall@1"] == 0.0
    assert outcome.section_metrics["recall@5"] == 1.0
    assert outcome.section_metrics["mrr@10"] == pytest.approx(1 / 3)
    assert outcome.section_metrics["ndcg@10"] == pytest.approx(1 / math.log2(4))


def test_summary_averages_sections_only_over_labelled_cases_and_per_kind() -> None:
    labelled = EvalCase("l", "q", ("a.md",), ("A",), kind="natural")
    unlabelled = EvalCase("u", "q", ("a.md",), (), kind="definition")
    outcomes = [
        outcome_from_hits(labelled, [("a.md", "B"), ("a.md", "A")], k=5),
        outcome_from_hits(unlabelled, [("x.md", ""), ("a.md", "A")], k=5),
    ]

    summary = summarise("row", outcomes, k=5)

    assert summary.metrics["recall@1"] == 0.5
    assert summary.section_cases == 1
    assert summary.section_metrics["mrr@10"] == 0.5
    assert summary.by_kind["natural"].metrics["mrr@10"] == 1.0
    assert summary.by_kind["definition"].metrics["mrr@10"] == 0.5
    assert summary.by_kind["definition"].section_cases == 0
