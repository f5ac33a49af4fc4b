"""The local ranking stage: one feature function for serving and training, a lab that can tell
a useful model from a useless one, and the shipped model file that matches the code."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

from search.rerankers.base import RerankError
from search.rerankers.features import FEATURE_NAMES, RankingQuestion, candidate_features
from search.rerankers.local import DEPTH, MODEL_FILE, LocalRanker, model_metadata
from search.results import Hit
from search.tooling.tuning.fusion import (
    DumpedCandidate,
    DumpedCase,
    dump_write,
    dumped_candidate,
)
from search.tooling.tuning.ranking import (
    dumps_checksum,
    fused,
    leave_one_set_out,
    model_order,
    scores,
    train,
    training_data,
)


def hit(**fields: object) -> Hit:
    base: dict[str, object] = {
        "chunk_id": 1,
        "document_id": 1,
        "path": "a.md",
        "title": "Volumes",
        "heading_path": "Volumes > Extend a volume",
        "text": "Run fly volume extend.",
        "char_start": 0,
        "char_end": 10,
        "updated_on": None,
        "vector_rank": 1,
        "keyword_rank": None,
        "fused_score": 1.0,
        "similarity": 0.5,
        "keyword_score": 0.0,
        "page_topic": 0.4,
        "token_count": 80,
        "page_chunks": 12,
    }
    return Hit(**{**base, **fields})  # type: ignore[arg-type]


QUESTION = RankingQuestion(
    text="How do I make my volume bigger?",
    keyword_coverage=0.4,
    identifier=False,
    term_idfs={"volum": 2.0, "bigger": 3.0},
)


def test_serving_hits_and_dumped_candidates_give_the_same_features() -> None:
    hits = [
        hit(),
        hit(chunk_id=2, path="b.md", title="Pricing", heading_path="", similarity=0.3,
            vector_rank=None, keyword_rank=2, keyword_score=4.0, fused_score=0.2,
            page_chunks=None, page_topic=None),
        hit(chunk_id=3, heading_path="Volumes > Snapshots", similarity=0.45, fused_score=0.5),
    ]  # fmt: skip

    served = candidate_features(QUESTION, hits)
    trained = candidate_features(QUESTION, [dumped_candidate(h) for h in hits])

    np.testing.assert_array_equal(served, trained)
    assert served.shape == (3, len(FEATURE_NAMES))


def test_features_read_the_headings_page_length_and_places() -> None:
    hits = [hit(), hit(chunk_id=2, path="b.md", title="Other", heading_path="Other > Deep > Er")]

    rows = candidate_features(QUESTION, hits)
    column = {name: rows[:, i] for i, name in enumerate(FEATURE_NAMES)}

    assert column["heading_idf_share"][0] == pytest.approx(2.0 / 5.0)  # "Volumes" holds volum
    assert column["title_idf_share"][1] == 0.0
    assert column["section_depth"].tolist() == [2.0, 3.0]
    assert column["page_chunks"][0] == pytest.approx(np.log(12))
    assert column["page_position"].tolist() == [0.0, 1.0]
    assert column["keyword_rank"][0] == pytest.approx(np.log(200))  # the leg missed it


def synthetic_set(name: str, *, questions: int, seed: int) -> list[DumpedCase]:
    """Questions whose right candidate is the one whose heading holds the question's rare word,
    placed anywhere in a fused order that does not know it: a heading signal a model can learn
    and the fused order cannot see."""
    rng = random.Random(seed)
    cases = []
    for number in range(questions):
        candidates = []
        right = rng.randrange(12)
        for position in range(12):
            is_right = position == right
            candidates.append(
                DumpedCandidate(
                    path=f"p{position}.md",
                    heading_path=f"Page {position} > {'rareword' if is_right else 'other'}",
                    similarity=0.5 - 0.01 * position,
                    keyword_score=rng.random(),
                    vector_ranked=True,
                    keyword_ranked=True,
                    page_topic=0.3,
                    title=f"Page {position}",
                    vector_rank=position + 1,
                    keyword_rank=position + 1,
                    fused_score=1.0 - 0.05 * position,
                    token_count=100,
                    page_chunks=5,
                )
            )
        cases.append(
            DumpedCase(
                id=f"{name}-{number}",
                question="where is the rareword setting",
                kind="paraphrase",
                relevant=(f"p{right}.md",),
                identifier=False,
                coverage=0.5,
                candidates=tuple(candidates),
                relevant_sections=(f"Page {right} > rareword",),
                term_idfs={"rareword": 5.0, "set": 1.0},
            )
        )
    return cases


def test_the_held_out_stage_learns_a_signal_the_fused_order_misses() -> None:
    sets = {
        "one/derived": synthetic_set("one", questions=60, seed=1),
        "two/derived": synthetic_set("two", questions=60, seed=2),
        "three/derived": synthetic_set("three", questions=60, seed=3),
    }

    folds = leave_one_set_out(sets, rounds=30)

    for fold in folds:
        assert fold.rows["stage"]["page recall@1"] > 0.9
        assert fold.rows["fused"]["page recall@1"] < 0.2


def test_a_set_is_held_out_with_every_set_over_the_same_documentation() -> None:
    # Two sets over the same pages: holding one out holds out the other, so nothing is left
    # to train its fold on (a model must not learn the held-out corpus from its sibling set).
    sets = {
        "hugo/derived": synthetic_set("hugo", questions=20, seed=4),
        "hugo/paraphrases": synthetic_set("hugo", questions=20, seed=5),
    }

    with pytest.raises(ValueError, match="no question"):
        leave_one_set_out(sets, rounds=5)


def test_training_data_counts_each_set_once() -> None:
    big = synthetic_set("big", questions=90, seed=5)
    small = synthetic_set("small", questions=10, seed=6)

    data = training_data({"big/derived": big, "small/derived": small})

    per_question = data.weights
    assert per_question[:90].sum() == pytest.approx(per_question[90:].sum())
    assert len(data.groups) == 100


def test_fused_order_scores_as_the_dump_ranks() -> None:
    cases = synthetic_set("x", questions=100, seed=8)
    booster = train(training_data({"x/derived": cases}), rounds=60)

    assert scores(cases, fused)["page recall@1"] == pytest.approx(
        sum(case.relevant == ("p0.md",) for case in cases) / len(cases)
    )
    assert model_order(booster)(cases[0])[0] != 0 or cases[0].relevant == ("p0.md",)
    # and the stage's order is every candidate once, the rareword page first for nearly all
    orders = [model_order(booster)(case) for case in cases]
    assert all(sorted(order) == list(range(12)) for order in orders)
    assert scores(cases, model_order(booster))["page recall@1"] >= 0.9


def test_the_shipped_model_matches_the_features_and_names_its_training_data() -> None:
    ranker = LocalRanker()
    metadata = model_metadata()

    assert tuple(ranker.booster.feature_name()) == FEATURE_NAMES
    assert metadata["features"] == list(FEATURE_NAMES)
    assert len(str(metadata["dumps_sha256"])) == 64
    assert str(metadata["command"]).startswith("manage.py search_ranker train")
    assert metadata["depth"] == DEPTH  # served on as many candidates as it was trained on
    scores_ = ranker.rerank(question=QUESTION, hits=[hit(), hit(chunk_id=2, similarity=0.1)])
    assert len(scores_) == 2 and all(np.isfinite(scores_))


def test_a_model_trained_on_other_features_is_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    text = MODEL_FILE.read_text(encoding="utf-8").replace(
        "feature_names=keyword_weight", "feature_names=something_else", 1
    )
    other = tmp_path / "other.txt"
    other.write_text(text, encoding="utf-8")

    with pytest.raises(RerankError, match="other features"):
        LocalRanker(model_file=other)


def test_dumps_checksum_follows_the_bytes_not_the_argument_order(tmp_path) -> None:  # type: ignore[no-untyped-def]
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    dump_write(first, "a/derived", synthetic_set("a", questions=2, seed=9))
    dump_write(second, "b/derived", synthetic_set("b", questions=2, seed=10))
    before = dumps_checksum([second, first])

    assert dumps_checksum([first, second]) == before
    second.write_text(second.read_text() + "\n", encoding="utf-8")
    assert dumps_checksum([first, second]) != before


def test_the_passages_the_caller_reads_stay_the_fusions_choice_in_the_stages_order() -> None:
    import dataclasses

    from search.rerankers.local import DEPTH, stage_scores

    # given: 25 candidates in fused order, the last of the first ten far from the question and
    # the eleventh close to it
    hits = [
        hit(chunk_id=i, path=f"p{i}.md", fused_score=2.0 - 0.05 * i, similarity=0.5)
        for i in range(25)
    ]
    hits[9] = dataclasses.replace(hits[9], similarity=0.05, page_topic=0.05)
    hits[10] = dataclasses.replace(hits[10], similarity=0.95, page_topic=0.9)
    booster = LocalRanker().booster

    # when
    free = stage_scores(booster, QUESTION, hits)
    read_ten = stage_scores(booster, dataclasses.replace(QUESTION, window=10), hits)

    # then: unbounded, the stage moves the eleventh into the first ten; reading ten, the ten
    # are the fusion's, in the stage's order
    top = lambda scores: set(sorted(range(25), key=lambda i: -scores[i])[:10])  # noqa: E731
    assert 10 in top(free)
    assert top(read_ten) == set(range(10))
    order = sorted(range(10), key=lambda i: -read_ten[i])
    assert order == sorted(range(10), key=lambda i: -free[i])
    # and past the model's depth the fused order is kept, after every scored candidate
    assert list(free[DEPTH:]) == sorted(free[DEPTH:], reverse=True)
    assert max(free[DEPTH:]) < min(free[:DEPTH])


def test_a_ranking_question_reads_what_retrieval_found_of_its_words() -> None:
    from tests.support.retrieval import one_hit_result

    result = one_hit_result(path="a.md", title="A", text="Run fly volume extend.", similarity=0.5)
    result.keyword_coverage = 0.95
    result.identifier_phrases = ("fly volume extend",)
    result.term_idfs = {"volum": 2.0}

    asked = RankingQuestion.of("extend my volume", result, window=10)

    assert asked == RankingQuestion(
        text="extend my volume",
        keyword_coverage=0.95,
        identifier=True,
        term_idfs={"volum": 2.0},
        window=10,
    )
    assert asked.keyword_weight == 0.8  # a quoting question trusts the keyword leg


@pytest.mark.parametrize("sections", [3, 10, 20])
def test_the_shipped_stage_keeps_one_pages_order_of_its_sections(sections: int) -> None:
    # given: every candidate is a section of one page (a help center of a few pages), the fused
    # order falling, every other piece of evidence the same
    hits = [
        hit(
            chunk_id=i,
            heading_path=f"Refund Policy > Part {i}",
            fused_score=2.6 - 2.4 * i / sections,
            vector_rank=i + 1,
            keyword_rank=i + 1,
        )
        for i in range(sections)
    ]

    # when
    scores = LocalRanker().rerank(question=QUESTION, hits=hits)

    # then: the page's sections keep the fusion's order (the model lifts a page's lesser chunks,
    # and alone it put "Annual plans" seventh of ten on a three-page help center)
    assert sorted(range(sections), key=lambda i: -scores[i]) == list(range(sections))


def test_the_stage_places_pages_and_each_page_keeps_its_passages_fused_order() -> None:
    from search.rerankers.local import pages_placed

    # given: the model's scores of five candidates in fused order, of pages a, b, a, c, b
    scores = np.array([1.0, 3.0, 5.0, 2.0, 4.0])
    paths = ["a.md", "b.md", "a.md", "c.md", "b.md"]

    # when
    placed = pages_placed(scores, paths)

    # then: each page's best score goes to its first fused passage, its next to its next
    assert list(placed) == [5.0, 4.0, 1.0, 2.0, 3.0]
    order = sorted(range(5), key=lambda i: -placed[i])
    assert [paths[i] for i in order] == ["a.md", "b.md", "b.md", "c.md", "a.md"]
    assert order.index(0) < order.index(2) and order.index(1) < order.index(4)


def test_one_page_view_keeps_a_cases_relevant_page_when_sections_are_labelled() -> None:
    from search.tooling.tuning.ranking import one_page

    # given
    def candidate(path: str, section: str) -> DumpedCandidate:
        return dumped_candidate(hit(path=path, heading_path=section))

    candidates = (
        candidate("b.md", "B"),
        candidate("a.md", "A > One"),
        candidate("c.md", "C"),
        candidate("a.md", "A > Two"),
    )
    case = DumpedCase(
        id="q1",
        question="?",
        kind="paraphrase",
        relevant=("a.md",),
        identifier=False,
        coverage=0.0,
        candidates=candidates,
        relevant_sections=("A > Two",),
    )

    # when
    view = one_page(case)

    # then: the relevant page's candidates alone, in fused order; without sections, no view
    assert view is not None
    assert [c.heading_path for c in view.candidates] == ["A > One", "A > Two"]
    assert one_page(dataclasses.replace(case, relevant_sections=())) is None
