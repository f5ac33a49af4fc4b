"""The offline fusion fit (search.tooling.tuning.fusion) replays the product's fusion on dumps."""

from __future__ import annotations

from dataclasses import replace

import pytest

from search.tooling.tuning.fusion import (
    PHRASE_GRID,
    TOPIC_GRID,
    DumpedCandidate,
    DumpedCase,
    dumped_candidate,
    fused_order,
    page_topic_folds,
    phrase_folds,
    shipped_ndcg,
)
from tests.support.retrieval import one_hit_result


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


def _quoting(case_id: str, *, coverage: float) -> DumpedCase:
    """The labelled section ("right.md", "Options") is a little behind another page's section
    in both legs and alone holds the question's phrases."""

    def candidate(path: str, heading: str, similarity: float, phrases: float) -> DumpedCandidate:
        return DumpedCandidate(
            path, heading, similarity, similarity * 5, True, True, 0.5, phrase_share=phrases
        )

    return DumpedCase(
        id=case_id,
        question="The symbol used before displaying the context.",
        kind="definition",
        relevant=("right.md",),
        relevant_sections=("Options",),
        identifier=False,
        coverage=coverage,
        candidates=(
            candidate("wrong.md", "Intro", 0.60, 0.25),
            candidate("right.md", "Options", 0.55, 1.0),
            candidate("other.md", "Intro", 0.30, 0.0),
        ),
    )


def test_a_phrase_weight_is_chosen_on_every_fold_where_quotes_hold_their_phrases() -> None:
    sets = {name: [_quoting(f"{name}{n}", coverage=1.0) for n in range(3)] for name in "abc"}

    folds, best = phrase_folds(sets)

    assert best > 0
    for fold in folds:
        assert fold.quoted_phrase > 0
        assert fold.without == pytest.approx(0.6309, abs=1e-3) and fold.ndcg == 1.0
        assert fold.section_without == 0.0 and fold.section_recall == 1.0


def test_phrases_count_only_for_a_question_that_quotes_the_docs() -> None:
    # the same candidates, but no passage holds the question's rare words: a paraphrase
    sets = {name: [_quoting(f"{name}{n}", coverage=0.5) for n in range(3)] for name in "ab"}

    folds, best = phrase_folds(sets)

    assert best == PHRASE_GRID[0] == 0.0
    assert all(fold.ndcg == fold.without and fold.section_recall == 0.0 for fold in folds)


def test_the_replay_ranks_the_page_a_cross_reference_names_as_the_product_does() -> None:
    # given a page whose best candidate only sends the reader to the labelled page, as the
    # product's hit records it (search.references)
    found = one_hit_result(
        path="wrong.md",
        title="Errors",
        heading_path="Errors > Logging",
        text="See [Logging](right.md) for how to e-mail errors to admins.",
        similarity=0.52,
    ).hits[0]
    hit = replace(found, keyword_score=2.2, refers_to="right.md")
    reference = dumped_candidate(hit)
    case = replace(
        _case("x", topic_gap=0.0),
        candidates=(
            reference,
            DumpedCandidate("right.md", "", 0.50, 2.0, True, True),
            DumpedCandidate("other.md", "", 0.30, 0.5, True, True),
        ),
    )

    # then the dump keeps the page it names, and the replay puts that page first
    assert reference.refers_to == "right.md"
    assert fused_order(case, keyword_weight=0.3, page_topic=0.0)[:2] == ["right.md", "wrong.md"]
    plain = replace(case, candidates=(replace(reference, refers_to=None), *case.candidates[1:]))
    assert fused_order(plain, keyword_weight=0.3, page_topic=0.0)[:2] == ["wrong.md", "right.md"]
