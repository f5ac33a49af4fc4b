"""The chat page in real headless Chromium against the app under gunicorn (gthread): a question
from the sample eval set streams its answer in over server-sent events, its source link opens
the cited passage, an unanswerable question gets "not in our docs", feedback is recorded, and
the page works without JavaScript. Saves docs/screenshots/chat-*.png."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.core.cache import cache
from playwright.sync_api import Page, expect

from assistant.models import Feedback, Message
from tests.conftest import CORPUS_DIR, corpus_pages_indexed

pytestmark = pytest.mark.e2e

# The pages the chosen eval questions need, their older versions, and some neighbours to
# compete with them (the whole sample help center takes a minute to embed on 2 cores).
CORPUS_PAGES = (
    "policies/refunds.md",
    "policies/refunds-2023.md",
    "policies/cancellation.md",
    "policies/cancellation-legacy.md",
    "plans/free-trial.md",
    "plans/plans-and-limits.md",
    "plans/changing-plans.md",
    "billing/billing-cycles-and-proration.md",
    "support/contact-support.md",
    "internal/support-escalation.md",
)
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}

# Records, in the page, every server-sent event the htmx extension is about to swap in, with
# how much answer text was on screen at that moment.
RECORD_EVENTS = """
window.sseEvents = [];
document.addEventListener("htmx:sseBeforeMessage", (event) => {
  const streaming = document.querySelector(".answer-streaming");
  window.sseEvents.push({type: event.detail.type, shown: streaming ? streaming.textContent : ""});
});
"""


def _eval_case(case_id: str) -> dict:
    with (CORPUS_DIR / "eval.jsonl").open() as cases:
        for line in cases:
            case = json.loads(line)
            if case.get("id") == case_id:
                return case
    raise LookupError(case_id)


@pytest.fixture
def help_center(e2e_server, tmp_path: Path, cached_embedder) -> None:
    corpus_pages_indexed(tmp_path, CORPUS_PAGES, cached_embedder)
    cache.clear()  # answers and rate limits of earlier runs live in the shared Redis


def _ask(page: Page, question: str) -> None:
    box = page.get_by_label("Your question")
    box.fill(question)
    box.press("Enter")


def test_answer_streams_in_and_its_source_opens_the_cited_passage(
    page: Page, help_center, screenshot
) -> None:
    # given: a customer on the chat page, asking a question of the sample eval set whose answer
    # has an older version of its page (refunds-2023) among the sources
    case = _eval_case("refund-first-month-days")
    page.goto("/")
    page.evaluate(RECORD_EVENTS)

    # when
    _ask(page, case["question"])

    # then: the question bubble, then the answer streams in and is replaced by the checked one
    turn = page.locator("#conversation > .turn").last
    expect(turn.locator(".question-text")).to_have_text(case["question"])
    sources = turn.locator(".source-list > li")
    expect(sources.first).to_be_visible()
    events = page.evaluate("window.sseEvents")
    types = [event["type"] for event in events]
    assert types[-1] == "final" and types.count("final") == 1, types
    assert types[:-1] and set(types[:-1]) == {"delta"}, types
    assert events[-1]["shown"].startswith("From our help center"), events  # streamed text
    answer = turn.locator(".answer")
    expect(answer).not_to_have_attribute("aria-busy", "true")
    expect(answer.locator(".answer-text")).to_contain_text("From our help center:")
    expect(answer.locator(".answer-text")).to_contain_text("30 days")
    expect(answer.locator("a.cite").first).to_be_visible()
    # (the answer may quote two sections of the current page, each listed with its date)
    current = sources.filter(has_text="policies/refunds.md").first
    older = sources.filter(has_text="policies/refunds-2023.md")
    expect(current.locator(".source-updated")).to_have_text("Updated 14 Sep 2026")
    expect(older.locator(".source-older-notice")).to_contain_text("updated more recently")
    # and the question box is empty and focused, ready for a follow-up
    expect(page.get_by_label("Your question")).to_be_focused()
    expect(page.get_by_label("Your question")).to_have_value("")
    screenshot(page, "chat-answer", full_page=True)

    # when: the customer rates the answer
    answer.get_by_role("button", name="Yes").click()

    # then: confirmed in the page and stored
    expect(answer.locator(".feedback-thanks")).to_have_text("Thanks for your feedback.")
    expect(answer.get_by_role("button", name="Yes")).to_have_attribute("aria-pressed", "true")
    message = Message.objects.get()
    assert message.status == Message.Status.ANSWERED
    assert list(Feedback.objects.values_list("message_id", "vote")) == [(message.pk, "up")]

    # when: the customer follows the source link of the current refund policy
    current.get_by_role("link").click()

    # then: the document page opens at the quoted sentence, highlighted within its passage
    expect(page).to_have_url(
        re.compile(r"/docs/policies/refunds\.md\?start=\d+&end=\d+&quote=[\d%C,-]+#passage$")
    )
    highlighted = page.locator("mark.cited-sentence")
    expect(highlighted.first).to_be_visible()
    expect(highlighted.filter(has_text="30 days").first).to_be_in_viewport()
    expect(page.locator(".cited-context").first).to_be_visible()
    screenshot(page, "chat-source-highlight")


def test_unanswerable_question_says_so_on_a_phone_and_takes_a_thumbs_down(
    new_page, help_center, screenshot
) -> None:
    # given: a customer on a phone, asking an unanswerable question of the sample eval set
    page = new_page(**PHONE)
    question = "is there a Zapier integration?"
    assert _eval_case("un-zapier")["question"] == question
    page.goto("/")

    # when
    _ask(page, question)

    # then: "not in our docs" with a way to reach support, and no sources
    answer = page.locator("#conversation > .turn").last.locator(".answer")
    expect(answer.locator(".answer-not-in-docs")).to_contain_text(
        "I couldn't find an answer to that in our help center"
    )
    expect(answer.get_by_role("link", name="Contact support")).to_be_visible()
    expect(answer.locator(".source-list")).to_have_count(0)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    message = Message.objects.get()
    assert message.status == Message.Status.NOT_IN_DOCS and message.citations == []

    # when: the customer says it did not help, and what they were looking for
    answer.get_by_role("button", name="No").click()
    answer.get_by_label("What were you looking for? (optional)").fill("A Zapier app to sync deals")
    answer.get_by_role("button", name="Send comment").click()

    # then
    expect(answer.locator(".feedback-thanks")).to_have_text(
        "Thanks for your feedback and your comment."
    )
    feedback = Feedback.objects.get()
    assert (feedback.vote, feedback.comment) == ("down", "A Zapier app to sync deals")
    screenshot(page, "chat-not-in-docs", full_page=True)


def test_chat_works_without_javascript(new_page, help_center) -> None:
    # given
    page = new_page(java_script_enabled=False)
    page.goto("/")

    # when: the form posts as a plain form and the browser follows the redirect
    page.get_by_label("Your question").fill("Can I get a refund on an annual plan?")
    page.get_by_role("button", name="Ask").click()

    # then: the whole answer is on the page, with its sources
    turn = page.locator("#conversation > .turn").last
    expect(turn.locator(".question-text")).to_have_text("Can I get a refund on an annual plan?")
    expect(turn.locator(".source-list > li").first).to_be_visible()
    expect(turn.locator("[sse-connect]")).to_have_count(0)
    assert Message.objects.get().status == Message.Status.ANSWERED
