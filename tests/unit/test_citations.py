"""Citations checked in code: only retrieved sources may be cited; uncited facts are flagged."""

from __future__ import annotations

import datetime
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assistant.citations import (
    NO_VALID_CITATION,
    ONLY_INVALID_CITATIONS,
    StreamRenumberer,
    check_citations,
    citations_renumber,
    says_not_covered,
)
from assistant.generators.base import Source
from assistant.generators.extractive import not_covered_answer
from assistant.prompting import NOT_COVERED_SENTENCE

QUESTION = "How long do I have to ask for a refund on an annual plan?"


def _sources(count: int) -> list[Source]:
    return [
        Source(
            number=number,
            chunk_id=number,
            document_id=number,
            path=f"policies/page-{number}.md",
            title=f"Page {number}",
            section=f"Page {number}",
            updated_on=datetime.date(2026, 9, 14),
            text="…",
            char_start=0,
            char_end=1,
        )
        for number in range(1, count + 1)
    ]


def test_valid_citations_are_kept_in_order_of_first_use() -> None:
    # given
    answer = "You have 60 days [2]. The refund is prorated [1], by day [2]."

    # when
    check = check_citations(answer=answer, sources=_sources(3), question=QUESTION)

    # then
    assert check.text == answer
    assert check.cited == [2, 1]
    assert check.removed == []
    assert (check.confident, check.flag) == (True, None)


def test_a_citation_of_a_source_that_was_not_retrieved_is_removed() -> None:
    # given
    answer = "You have 60 days [1]. Refunds are instant [7]."

    # when
    check = check_citations(answer=answer, sources=_sources(2), question=QUESTION)

    # then
    assert check.text == "You have 60 days [1]. Refunds are instant."
    assert check.cited == [1]
    assert check.removed == ["[7]"]
    assert check.confident is True


@pytest.mark.parametrize(
    ("answer", "text", "cited", "removed"),
    [
        ("60 days [1][7].", "60 days [1].", [1], ["[7]"]),
        ("60 days [7][1].", "60 days [1].", [1], ["[7]"]),
        ("60 days [1, 7].", "60 days [1].", [1], ["[7]"]),
        ("60 days [1,3].", "60 days [1,3].", [1, 3], []),
        ("60 days [3, 0, 9, 1].", "60 days [3, 1].", [3, 1], ["[0]", "[9]"]),
        ("60 days [1-3].", "60 days [1-3].", [1, 2, 3], []),
        ("60 days [2-5].", "60 days [2, 3].", [2, 3], ["[4]", "[5]"]),
        ("60 days[8] and more [9].", "60 days and more.", [], ["[8]", "[9]"]),
    ],
)
def test_grouped_and_mixed_markers_keep_only_valid_numbers(
    answer: str, text: str, cited: list[int], removed: list[str]
) -> None:
    # when
    check = check_citations(answer=answer, sources=_sources(3), question=QUESTION)

    # then
    assert (check.text, check.cited, check.removed) == (text, cited, removed)


def test_a_factual_answer_without_a_citation_is_flagged_and_not_confident() -> None:
    # when
    check = check_citations(
        answer="You can get a prorated refund within 60 days.",
        sources=_sources(2),
        question=QUESTION,
    )

    # then
    assert check.confident is False
    assert check.flag == NO_VALID_CITATION
    assert check.cited == []


def test_an_answer_citing_only_unretrieved_sources_is_flagged() -> None:
    # when
    check = check_citations(
        answer="You can get a refund within 90 days [4].", sources=_sources(2), question=QUESTION
    )

    # then
    assert check.text == "You can get a refund within 90 days."
    assert check.confident is False
    assert check.flag == ONLY_INVALID_CITATIONS


@pytest.mark.parametrize(
    "answer",
    [
        NOT_COVERED_SENTENCE + " You can contact support at support@example.com.",
        not_covered_answer(),
        "I couldn't find anything about INR pricing in the help center.",
        "The documents don't mention goodwill credits. Our support team can help.",
        "Sorry, the help center doesn't cover self-service portals.",
        "There is no information about that in the documents I was given.",
        "That isn't covered by these pages; please contact support.",
    ],
)
def test_an_answer_saying_the_documents_do_not_cover_it_needs_no_citation(answer: str) -> None:
    # when
    check = check_citations(answer=answer, sources=_sources(3), question=QUESTION)

    # then
    assert says_not_covered(answer)
    assert (check.confident, check.flag) == (True, None)


@pytest.mark.parametrize(
    "answer",
    [
        "You can get a refund within 60 days.",
        "Refunds are covered for annual plans.",
        "Documents are available in Settings > Compliance.",
    ],
)
def test_a_factual_answer_is_not_mistaken_for_a_not_covered_one(answer: str) -> None:
    assert not says_not_covered(answer)


@pytest.mark.parametrize("question", ["thanks!", "Thank you so much", "hi", "ok, bye"])
def test_a_reply_to_small_talk_needs_no_citation(question: str) -> None:
    # when
    check = check_citations(answer="You're welcome!", sources=_sources(1), question=question)

    # then
    assert (check.confident, check.flag) == (True, None)


def test_an_empty_answer_is_not_confident() -> None:
    # when
    check = check_citations(answer="  ", sources=_sources(1), question=QUESTION)

    # then
    assert (check.confident, check.flag) == (False, "empty answer")


def test_brackets_in_code_and_links_are_not_citations() -> None:
    # given
    answer = (
        "Read `items[0]` first [1]. See [2](https://example.com/docs).\n```python\nevents[5]\n```"
    )

    # when
    check = check_citations(answer=answer, sources=_sources(1), question=QUESTION)

    # then
    assert check.text == answer
    assert check.cited == [1]
    assert check.removed == []


def test_sources_absent_makes_every_citation_invalid() -> None:
    # when
    check = check_citations(answer="It is 60 days [1].", sources=[], question=QUESTION)

    # then
    assert check.text == "It is 60 days."
    assert check.confident is False


CITATION = re.compile(r"\[(\d+(?:\s*[-,]\s*\d+)*)\](?!\()")


@given(
    pieces=st.lists(
        st.one_of(
            st.sampled_from(["Refunds take 60 days", " and are prorated", ".", " ", "\n"]),
            st.lists(st.integers(min_value=0, max_value=12), min_size=1, max_size=3).map(
                lambda numbers: "[" + ", ".join(map(str, numbers)) + "]"
            ),
        ),
        max_size=12,
    ),
    retrieved=st.integers(min_value=0, max_value=6),
)
def test_no_answer_ever_keeps_a_citation_of_an_unretrieved_source(
    pieces: list[str], retrieved: int
) -> None:
    # when
    check = check_citations(answer="".join(pieces), sources=_sources(retrieved), question=QUESTION)

    # then
    remaining = [
        int(number)
        for marker in CITATION.findall(check.text)
        for number in re.split(r"\s*,\s*", marker)
    ]
    assert all(1 <= number <= retrieved for number in remaining)
    assert set(check.cited) == set(remaining)
    # and nothing in these pieces says "not covered", so uncited text is never confident
    assert check.confident == bool(check.cited)


def test_markers_are_renumbered_in_order_of_first_citation() -> None:
    # given: retrieval's passages 3 and 1 are cited, 3 first
    check = check_citations(
        answer="It is 30 days [3]. Annual plans are prorated [1][3], see [1, 3] or [1-3].",
        sources=_sources(3),
        question=QUESTION,
    )

    # when
    text = citations_renumber(text=check.text, cited=check.cited)

    # then
    assert check.cited == [3, 1, 2]
    assert text == "It is 30 days [1]. Annual plans are prorated [2][1], see [2, 1] or [2, 3, 1]."


def test_renumbering_leaves_code_and_unknown_markers_alone() -> None:
    text = "Read `items[2]` as the third item [2]; [9] was never cited."

    assert citations_renumber(text=text, cited=[2]) == (
        "Read `items[2]` as the third item [1]; [9] was never cited."
    )


def test_streamed_pieces_are_renumbered_like_the_whole_answer() -> None:
    # given: an answer cut mid-marker, as a model streams it
    answer = "It is 30 days [3]. Annual plans [1, 3] are prorated [1]. See `x[3]` [2][9]."
    pieces = [
        "It is 30 days [",
        "3]. Annual plans [1",
        ", 3] are prorated",
        " [1]. See `x[3]` ",
        "[2][9].",
    ]
    check = check_citations(answer=answer, sources=_sources(3), question=QUESTION)

    # when
    renumberer = StreamRenumberer(valid=[1, 2, 3])
    streamed = "".join(renumberer.feed(piece) for piece in pieces) + renumberer.finish()

    # then: the same numbers the stored answer gets ([9] is dropped only from the stored one)
    assert streamed == "It is 30 days [1]. Annual plans [2, 1] are prorated [2]. See `x[3]` [3][9]."
    assert citations_renumber(text=check.text, cited=check.cited) == (
        "It is 30 days [1]. Annual plans [2, 1] are prorated [2]. See `x[3]` [3]."
    )
