"""The offline fusion fit (search.tooling.tuning.fusion) replays the product's fusion on dumps."""

from __future__ import annotations

import pytest

from search.tooling.tuning.fusion import (
    TOPIC_GRID,
    DumpedCandidate,
    DumpedCase,
    page_topic_folds,
    shipped_ndcg,
)


def _case(case_id: str, *, topic_gap: float) -> DumpedCase:
    """Page "right" is a little behind page "wrong" in both legs, and ``topic_gap`` closer to
    the question as a whole; a third page fills out the candidates."""

    def candidate(path: str, similarity: float, bm25: float, topic: float) -> DumpedCandidate:
        return DumpedCandidate(path, "", similarity, bm25, True, True, topic)

    return DumpedCase(
        id=case_id,
        question="q",
        kind="natural",
        relevant=("right.md",),
        identifier=False,
        coverage=0.3,
        candidates=(
            candidate("wrong.md", 0.52, 2.2, 0.40),
            candidate("right.md", 0.50, 2.0, 0.40 + topic_gap),
            candidate("other.md", 0.30, 0.5, 0.30),
        ),
    )


def test_a_page_topic_that_separates_the_pages_is_chosen_on_every_fold() -> None:
    sets = {name: [_case(f"{name}{n}", topic_gap=0.3) for n in range(3)] for name in "abc"}

    folds, best = page_topic_folds(sets)

    assert all(fold.without == pytest.approx(0.6309, abs=1e-3) for fold in folds)  # rank 2
    assert all(fold.ndcg == 1.0 and fold.page_topic > 0 for fold in folds)
    assert best > 0
    assert shipped_ndcg(sets["a"], page_topic=0.0) < shipped_ndcg(sets["a"], page_topic=best)


def test_a_page_topic_that_separates_nothing_is_not_chosen() -> None:
    sets = {name: [_case(f"{name}{n}", topic_gap=0.0) for n in range(3)] for name in "ab"}

    folds, best = page_topic_folds(sets)

    # ties go to the smaller weight: no page topic
    assert best == TOPIC_GRID[0] == 0.0
    assert all(fold.page_topic == 0.0 and fold.ndcg == fold.without for fold in folds)
