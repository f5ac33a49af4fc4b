"""A question's misspelt words are searched as the index's words one or two slips away
(`search.spelling`), so the keyword leg still finds the section a newcomer mistyped."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.models import EmbeddingModel
from search.services import retrieve
from search.spelling import lexeme_corrections
from tests.conftest import pages_written_and_synced

pytestmark = pytest.mark.django_db

PAGES = {
    "policies/cancellation.md": (
        "# Cancellation Policy\n\nYou can cancel at any time. There is no notice period.\n\n"
        "## How to cancel\n\n1. Go to **Settings > Subscription**.\n"
        "2. Click **Cancel subscription**.\n"
    ),
    "billing/invoices.md": "# Invoices\n\nEvery invoice is emailed to the billing contact.\n",
    "account/security.md": (
        "# Security\n\nTurn on two-factor authentication in Settings > Security.\n"
    ),
}


@pytest.fixture
def indexed(tmp_path: Path, cached_embedder) -> EmbeddingModel:
    pages_written_and_synced(tmp_path / "docs", PAGES, cached_embedder)
    return EmbeddingModel.objects.active().get()


def test_a_word_the_index_lacks_is_read_as_its_nearest_indexed_word(indexed) -> None:
    corrected = lexeme_corrections(
        lexemes=["cancl", "subscribt", "authentif"], embedding_model=indexed
    )

    assert {asked: indexed for asked, (indexed, _) in corrected.items()} == {
        "cancl": "cancel",
        "subscribt": "subscript",
        "authentif": "authent",
    }
    assert all(count > 0 for _, count in corrected.values())


def test_known_short_and_unlike_words_are_left_alone(indexed) -> None:
    # short, with a digit or a dot, far from every indexed word ("klarna"), two edits from
    # "cancel" in a word under eight letters ("cnacel": a swap counts twice), or one edit away
    # only by changing its first letter ("invoke" -> "invoice" needs two; "nvoice" needs an
    # added first letter)
    corrected = lexeme_corrections(
        lexemes=["cancl"[:4], "e4012", "invoice.pdf", "klarna", "zebra", "cnacel", "nvoic"],
        embedding_model=indexed,
    )

    assert corrected == {}


def test_the_keyword_leg_finds_the_section_a_question_mistyped(indexed, cached_embedder) -> None:
    # when: the keyword leg alone, so the vector leg's tolerance of typos does not hide it
    result = retrieve(
        question="how do i cancle my subscribtion?", legs=("keyword",), rerank=False, limit=3
    )

    # then
    assert result.hits, "the keyword leg found nothing for a mistyped question"
    assert result.hits[0].path == "policies/cancellation.md"
