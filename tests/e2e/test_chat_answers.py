"""Two of the answers a newcomer found wrong (issue #24), asked on the chat page in real Chromium
with the default set-up (local model, offline answerer): a yes/no question about a declined card
leads with the sentence that decides it, and a follow-up about annual plans answers about annual
plans instead of repeating the monthly rule."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.cache import cache
from playwright.sync_api import Page, expect

from tests.conftest import corpus_pages_indexed

pytestmark = pytest.mark.e2e

CORPUS_PAGES = (
    "errors/e4012-card-declined.md",
    "billing/failed-payments-and-dunning.md",
    "policies/refunds.md",
    "policies/refunds-2023.md",
    "policies/cancellation.md",
    "account/two-factor-authentication.md",
    "account/team-members-and-roles.md",
)


@pytest.fixture
def help_center(e2e_server, tmp_path: Path, cached_embedder) -> None:
    corpus_pages_indexed(tmp_path, CORPUS_PAGES, cached_embedder)
    cache.clear()  # answers and rate limits of earlier runs live in the shared Redis


def _ask(page: Page, question: str):
    box = page.get_by_label("Your question")
    box.fill(question)
    box.press("Enter")
    answer = page.locator("#conversation > .turn").last.locator(".answer")
    expect(answer).not_to_have_attribute("aria-busy", "true")
    return answer.locator(".answer-text")


def test_a_yes_no_question_leads_with_the_sentence_that_decides_it(page: Page, help_center) -> None:
    # given
    page.goto("/")

    # when
    text = _ask(
        page,
        "one of my customers' payments failed with E4012. will you retry the card automatically?",
    )

    # then: the retry schedule opens the answer, cited
    first = text.locator("p").nth(1)  # after "From our help center:"
    expect(first).to_contain_text("1, 3, 5 and 7 days after the first failure")
    expect(first.locator("a.cite")).to_have_count(1)


def test_a_follow_up_about_annual_plans_is_answered_about_annual_plans(
    page: Page, help_center
) -> None:
    # given
    page.goto("/")
    monthly = _ask(page, "How long do I have to get a refund on a monthly plan?")
    expect(monthly).to_contain_text("30 days")

    # when
    annual = _ask(page, "what if we had paid for the whole year instead?")

    # then
    expect(annual).to_contain_text("60 days of the annual charge")
    expect(annual).not_to_contain_text("first monthly charge")


def test_a_how_to_question_leads_with_the_steps_under_its_heading(page: Page, help_center) -> None:
    # given: the 2FA page also holds the steps to make 2FA mandatory, introduced by "turn on"
    page.goto("/")

    # when
    text = _ask(page, "How do I turn on two-factor authentication?")

    # then: the steps under "Turning on 2FA" lead, not the ones for making it mandatory
    first = text.locator("p").nth(1)
    expect(first).to_contain_text("Go to Settings > Security > Two-factor authentication")
    expect(first).not_to_contain_text("mandatory")
