"""The answer cache key: which askings share an answer, and which must never."""

from __future__ import annotations

import pytest

from assistant.services import answer_cache_key, question_cache_text


@pytest.mark.parametrize(
    "variant",
    [
        "How do refunds work?",
        "how do refunds work",
        "  HOW   do refunds\twork?!  ",
        "¿How do refunds work?",
        "“How do refunds work”",
        "How do refunds work…",
    ],
)
def test_case_spacing_and_edge_punctuation_do_not_matter(variant: str) -> None:
    assert question_cache_text(variant) == "how do refunds work"


def test_inner_punctuation_and_words_do_matter() -> None:
    assert question_cache_text("What does E4012 mean?") != question_cache_text(
        "What does E4013 mean?"
    )
    assert question_cache_text("invoice.paid?") == "invoice.paid"
    assert question_cache_text("refunds: annual") != question_cache_text("refunds annual")


def _key(question: str = "How do refunds work?", **overrides: object) -> str:
    arguments = {
        "question": question,
        "audiences": ("public",),
        "generator": "extractive",
        "version": "v1",
        **overrides,
    }
    return answer_cache_key(**arguments)  # type: ignore[arg-type]


def test_same_question_same_index_same_key() -> None:
    assert _key("How do refunds work?") == _key("how do refunds work")


def test_a_new_index_version_misses_every_earlier_entry() -> None:
    assert _key(version="v1") != _key(version="v2")


def test_staff_answers_are_never_served_to_customers() -> None:
    assert _key(audiences=("public",)) != _key(audiences=("public", "internal"))
    assert _key(audiences=("internal", "public")) == _key(audiences=("public", "internal"))


def test_a_different_generator_does_not_reuse_answers() -> None:
    assert _key(generator="extractive") != _key(generator="anthropic/claude-sonnet-4-5")
