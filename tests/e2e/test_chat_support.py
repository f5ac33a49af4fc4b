"""The chat page's ways forward, in real Chromium with JavaScript: a suggested question asks
itself, "Start a new conversation" arrives with the first answer, the sources are numbered as
the text cites them, the question box keeps to a fifth of a phone's screen, and "Contact
support" opens a form in the page whose request staff then read in the admin."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from playwright.sync_api import Page, expect

from assistant.models import Message, SuggestedQuestion, SupportRequest
from tests.conftest import corpus_pages_indexed

pytestmark = pytest.mark.e2e

CORPUS_PAGES = (
    "policies/refunds.md",
    "policies/cancellation.md",
    "plans/free-trial.md",
    "support/contact-support.md",
)
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
QUESTION_BOX_SHARE = 0.20
REFUND_QUESTION = "How long do I have to ask for a refund on a monthly plan?"


@pytest.fixture
def help_center(e2e_server, tmp_path: Path, cached_embedder) -> None:
    corpus_pages_indexed(tmp_path, CORPUS_PAGES, cached_embedder)
    cache.clear()  # answers and rate limits of earlier runs live in the shared Redis


def _question_box_share(page: Page) -> float:
    height = page.locator("#ask-form").evaluate("form => form.getBoundingClientRect().height")
    return height / page.viewport_size["height"]


def test_on_a_phone_a_suggestion_asks_itself_and_a_new_conversation_is_one_tap_away(
    new_page, help_center, screenshot
) -> None:
    # given: a suggestion a steward approved, and a customer on a phone
    SuggestedQuestion.objects.create(
        question=REFUND_QUESTION, order=1, status=SuggestedQuestion.Status.APPROVED
    )
    page = new_page(**PHONE)
    page.goto("/")
    assert _question_box_share(page) <= QUESTION_BOX_SHARE
    expect(page.get_by_role("button", name="Start a new conversation")).to_have_count(0)

    # when: the customer taps the suggestion
    page.get_by_role("button", name=REFUND_QUESTION).click()

    # then: it is asked and answered in the page, the suggestions go, and a new conversation
    # is offered without a reload
    turn = page.locator("#conversation > .turn").last
    expect(turn.locator(".question-text")).to_have_text(REFUND_QUESTION)
    expect(turn.locator(".source-list > li").first).to_be_visible()
    expect(page.locator("#suggestions")).to_be_empty()
    new_conversation = page.get_by_role("button", name="Start a new conversation")
    expect(new_conversation).to_be_visible()
    assert _question_box_share(page) <= QUESTION_BOX_SHARE
    # and the markers in the text name the sources listed, numbered 1..n as first cited
    cited = [int(n) for n in re.findall(r"\[(\d+)\]", turn.locator(".answer-text").inner_text())]
    first_cited = list(dict.fromkeys(cited))
    listed = [int(v) for v in turn.locator(".source-list > li").evaluate_all(
        "items => items.map(item => item.value)")]  # fmt: skip
    assert first_cited == listed == list(range(1, len(listed) + 1)), (cited, listed)
    # (related pages are offered only when close to the question, so there may be none)
    for related in turn.locator(".related-list a").all():
        expect(related).to_have_attribute("href", re.compile("^/docs/"))
    screenshot(page, "chat-phone-answer", full_page=True)

    # when: the customer starts over
    new_conversation.click()

    # then: an empty conversation; the next question is not a follow-up of the last one
    expect(page.locator("#conversation > .turn")).to_have_count(0)
    expect(page.get_by_role("button", name="Start a new conversation")).to_have_count(0)
    assert Message.objects.count() == 1


def test_contact_support_opens_a_form_in_the_page_and_staff_read_the_request_in_admin(
    page: Page, help_center, sign_in, screenshot
) -> None:
    # given: a customer whose question was answered
    page.goto("/")
    page.get_by_label("Your question").fill(REFUND_QUESTION)
    page.get_by_label("Your question").press("Enter")
    answer = page.locator("#conversation > .turn").last.locator(".answer")
    expect(answer.locator(".source-list > li").first).to_be_visible()

    # when: they ask for a person, first forgetting their email
    answer.get_by_role("link", name="Contact support").click()
    form = answer.locator(".support-form")
    expect(form.get_by_label("Your email")).to_be_focused()
    expect(form).to_contain_text("Your conversation is attached (1 question)")
    form.get_by_label("How can we help?").fill("The refund for invoice 1042 never arrived.")
    form.get_by_role("button", name="Send to support").click()

    # then: the reason is shown in the form, what they wrote is kept, nothing is sent
    expect(answer.locator(".field-error")).to_have_text(
        "Please give the email address we should reply to."
    )
    expect(answer.get_by_label("How can we help?")).to_have_value(
        "The refund for invoice 1042 never arrived."
    )
    assert page.url.endswith("/") and SupportRequest.objects.count() == 0
    screenshot(answer, "chat-support-form")

    # when: they add it and send
    answer.get_by_label("Your email").fill("ana@example.com")
    answer.get_by_role("button", name="Send to support").click()

    # then: confirmed in the page, stored with the conversation
    expect(answer.locator(".support-sent")).to_contain_text("Thanks, your request was sent.")
    request = SupportRequest.objects.get()
    assert request.conversation == Message.objects.get().conversation

    # and staff see it in the admin with the conversation's questions
    staff = page.context.browser.new_context(base_url=page.url.rstrip("/")).new_page()
    sign_in(staff, User.objects.create_superuser("lead", "lead@example.com", "pw"))
    staff.goto("/admin/assistant/supportrequest/")
    staff.get_by_role("link", name="ana@example.com").click()
    expect(staff.locator(".support-transcript")).to_contain_text(REFUND_QUESTION)
    expect(staff.locator(".support-transcript")).to_contain_text("30 days")
    staff.context.close()
