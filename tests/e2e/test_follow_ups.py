"""Short new questions after a 2FA question are answered as if asked first, in real Chromium:
"Which currencies do you support?", "Is there a free trial?" and "How do I export my data?"
each cite their own page, not the 2FA one (they used to be searched with the 2FA question)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.cache import cache
from playwright.sync_api import Page, expect

from assistant.models import Message
from tests.conftest import corpus_pages_indexed

pytestmark = pytest.mark.e2e

# The pages of the sequence, and neighbours to compete with them.
CORPUS_PAGES = (
    "account/two-factor-authentication.md",
    "billing/currencies.md",
    "plans/free-trial.md",
    "account/data-export.md",
    "billing/payment-methods.md",
    "policies/refunds.md",
)
FIRST = ("How do I turn on two-factor authentication?", "account/two-factor-authentication.md")
THEN = (
    ("Which currencies do you support?", "billing/currencies.md"),
    ("Is there a free trial?", "plans/free-trial.md"),
    ("How do I export my data?", "account/data-export.md"),
)


@pytest.fixture
def help_center(e2e_server, tmp_path: Path, cached_embedder) -> None:
    corpus_pages_indexed(tmp_path, CORPUS_PAGES, cached_embedder)
    cache.clear()  # answers and rate limits of earlier runs live in the shared Redis


def _ask_and_wait(page: Page, question: str, turn_number: int):
    box = page.get_by_label("Your question")
    box.fill(question)
    box.press("Enter")
    turn = page.locator("#conversation > .turn").nth(turn_number)
    expect(turn.locator(".question-text")).to_have_text(question)
    answer = turn.locator(".answer")
    expect(answer).not_to_have_attribute("aria-busy", "true")
    return turn


def test_new_short_questions_after_2fa_are_answered_on_their_own(page: Page, help_center) -> None:
    # given: a customer who asked about 2FA
    page.goto("/")
    first = _ask_and_wait(page, FIRST[0], 0)
    expect(first.locator(".source-list > li").first).to_contain_text(FIRST[1])

    for number, (question, own_page) in enumerate(THEN, start=1):
        # when: a short question with a topic of its own follows
        turn = _ask_and_wait(page, question, number)

        # then: it is answered from its own page, source 1 first, as if asked first
        sources = turn.locator(".source-list > li")
        expect(sources.first).to_contain_text(own_page)
        expect(sources.first).to_have_attribute("value", "1")
        expect(turn.locator(".answer-text")).not_to_contain_text("two-factor")

    searched = dict(Message.objects.values_list("question", "retrieval_query"))
    assert all(searched[question] == question for question, _ in THEN), searched
