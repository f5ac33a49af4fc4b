"""What a question becomes before it is searched: cleaned, bounded, and for a follow-up joined
to the question it follows."""

from __future__ import annotations

import pytest

from assistant.services import (
    QuestionRejected,
    joined_query,
    leans_on_previous,
    question_normalise,
)


def test_question_is_cleaned_but_keeps_its_lines() -> None:
    raw = "  Why\u00a0was my card   declined?\r\n\r\n\r\n\r\nError:\x00 E4012\x07  "

    assert question_normalise(raw) == "Why was my card declined?\n\nError: E4012"


def test_full_width_letters_become_plain_ones() -> None:
    assert question_normalise("\uff21\uff30\uff29 limits") == "API limits"


@pytest.mark.parametrize("blank", ["", "   ", "\n\t", "\x00\x01", "\u00a0"])
def test_blank_question_is_rejected_with_a_reason(blank: str) -> None:
    with pytest.raises(QuestionRejected, match="Please type a question") as rejected:
        question_normalise(blank)
    assert rejected.value.code == "empty"


def test_question_over_the_limit_is_rejected_with_the_limit(settings) -> None:
    settings.QUESTION_MAX_CHARS = 1000

    assert question_normalise("a" * 1000) == "a" * 1000
    with pytest.raises(QuestionRejected, match="1,000") as rejected:
        question_normalise("a" * 1001)
    assert rejected.value.code == "too_long"
    assert "1,001" in str(rejected.value)


@pytest.mark.parametrize(
    "question",
    [
        "and for annual plans?",
        "What about annual plans?",
        "how about for teams",
        "what if I paid yearly?",
        "is it the same for annual?",
        "How long does that take?",
        "Can I undo it later, for example after a month?",
        "annual?",
    ],
)
def test_short_or_referring_questions_lean_on_the_previous_one(question: str) -> None:
    assert leans_on_previous(question)


@pytest.mark.parametrize(
    "question",
    [
        "do u need my visa number before i can poke around and try it out?",
        "How many requests per second does the API allow before it returns 429?",
        "the guy who set everything up quit and nobody has his login. how do we get control back?",
        "Which currencies can I bill my customers in and how is conversion handled?",
        "Which currencies do you support?",
        "Is there a free trial?",
        "How do I export my data?",
        "Are there any limits on seats?",
    ],
)
def test_questions_that_name_their_topic_stand_alone(question: str) -> None:
    # Short is not enough: "Is there…" asks whether something exists and points nowhere.
    assert not leans_on_previous(question)


def test_joined_query_puts_the_earlier_question_first_and_stays_bounded() -> None:
    assert joined_query(question="and for annual?", anchor="How do refunds work?") == (
        "How do refunds work? and for annual?"
    )
    query = joined_query(question="and for annual?", anchor="refund " * 500)
    assert len(query) <= 600 and query.endswith("and for annual?")


@pytest.mark.parametrize(
    "question", ["E4012", "what is invoice.paid?", "X-RateLimit-Remaining", "whsec_ prefix?"]
)
def test_a_pasted_identifier_names_its_own_topic(question: str) -> None:
    assert not leans_on_previous(question)
