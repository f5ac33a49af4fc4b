"""The follow-up decision with the searches stubbed by fixed results: the wording gates, the
evidence (retrieval's confidence alone vs joined) decides."""

from __future__ import annotations

import pytest

from assistant.follow_ups import anchor_of, follow_up_search, joined_query
from search.results import RetrievalResult
from tests.support.retrieval import one_hit_result

ANCHOR = "How do webhook retries work?"


def _result(question: str, similarity: float | None) -> RetrievalResult:
    return one_hit_result(
        question=question,
        path="webhooks/retries.md",
        title="Webhook retries",
        text="…",
        similarity=similarity,
    )


def _search(alone: float | None, joined: float | None, searched: list[str]):
    def search(query: str) -> RetrievalResult:
        searched.append(query)
        return _result(query, joined if query.startswith(ANCHOR) else alone)

    return search


def test_a_question_with_its_own_wording_is_searched_once_alone() -> None:
    searched: list[str] = []

    result = follow_up_search(
        question="Which currencies do you support?",
        anchor=ANCHOR,
        search=_search(0.2, 0.9, searched),
    )

    assert (result.follow_up, result.query, searched) == (
        False,
        "Which currencies do you support?",
        ["Which currencies do you support?"],
    )
    assert result.evidence() is None


def test_a_leaning_question_is_joined_when_that_finds_the_closer_passage() -> None:
    searched: list[str] = []

    result = follow_up_search(
        question="how many times?", anchor=ANCHOR, search=_search(0.22, 0.65, searched)
    )

    assert result.follow_up and result.query == f"{ANCHOR} how many times?"
    assert result.result.question == result.query
    assert result.evidence() == {
        "follow_up": True,
        "alone_confidence": 0.22,
        "joined_confidence": 0.65,
    }


def test_a_leaning_question_that_finds_better_alone_stays_alone() -> None:
    searched: list[str] = []

    result = follow_up_search(
        question="Refund policy?", anchor=ANCHOR, search=_search(0.69, 0.65, searched)
    )

    assert not result.follow_up and result.query == "Refund policy?"
    assert result.result.question == "Refund policy?" and len(searched) == 2


def test_without_similarities_the_wording_decides() -> None:
    result = follow_up_search(
        question="how many times?", anchor=ANCHOR, search=_search(None, None, [])
    )

    assert result.follow_up


def test_a_first_question_has_nothing_to_lean_on() -> None:
    searched: list[str] = []

    result = follow_up_search(
        question="and annual?", anchor=None, search=_search(0.1, 0.9, searched)
    )

    assert not result.follow_up and searched == ["and annual?"]


@pytest.mark.parametrize(
    ("question", "anchor"),
    [
        ("and for annual plans?", "Can I get a refund on a monthly plan?"),
        ("how many times?", "How do webhook retries work?"),
    ],
)
def test_the_earlier_question_is_read_back_from_the_joined_query(question, anchor) -> None:
    # when
    query = joined_query(question=question, anchor=anchor)

    # then
    assert anchor_of(query=query, question=question) == anchor
    assert anchor_of(query=question, question=question) is None
