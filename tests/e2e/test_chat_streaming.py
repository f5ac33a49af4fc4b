"""The answer really streams, end to end: Claude's API (a local stub speaking the Messages API)
sends the first words and then pauses; the customer's browser shows those words before the
rest exists, through the real SDK, the pipeline, gunicorn's gthread worker and the htmx SSE
extension. Saves docs/screenshots/chat-streaming.png."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from assistant.models import Message
from tests.support.anthropic_stub import AnthropicStub
from tests.support.chat import REFUND_QUESTION

pytestmark = pytest.mark.e2e

ANSWER = (
    "Monthly plans are refundable within 30 days of purchase, no questions asked [1]. "
    "The refund goes back to the card that paid for the plan [1]."
)
PAUSE_SECONDS = 2.0


@pytest.fixture(scope="module")
def anthropic_stub() -> Iterator[AnthropicStub]:
    with AnthropicStub() as stub:
        yield stub


@pytest.fixture
def e2e_server_env(anthropic_stub: AnthropicStub) -> dict[str, str]:
    return {
        "GENERATOR": "anthropic",
        "ANTHROPIC_API_KEY": anthropic_stub.api_key,
        "ANTHROPIC_BASE_URL": anthropic_stub.base_url,
    }


def test_first_words_show_before_the_model_has_finished(
    page: Page, help_center, anthropic_stub: AnthropicStub, screenshot
) -> None:
    # given: the model will send its first words, then pause before the rest
    anthropic_stub.reply(ANSWER)
    anthropic_stub.fail_next(stall=PAUSE_SECONDS)
    page.goto("/")

    # when
    page.get_by_label("Your question").fill(REFUND_QUESTION)
    page.get_by_role("button", name="Ask").click()

    # then: mid-answer, the first words are on screen, unchecked, with no sources yet
    answer = page.locator("#conversation > .turn").last.locator(".answer")
    expect(answer.locator(".answer-streaming")).to_have_text("Monthly plans are refundable ")
    expect(answer).to_have_attribute("aria-busy", "true")
    expect(answer.locator(".source-list")).to_have_count(0)
    screenshot(page, "chat-streaming")

    # and then the checked answer replaces them, with its source and no "quoted" label
    expect(answer.locator(".source-list > li")).to_have_count(1, timeout=PAUSE_SECONDS * 5000)
    expect(answer.locator(".answer-text")).to_contain_text("goes back to the card that paid")
    expect(answer.locator("a.cite")).to_have_count(2)
    expect(answer.locator(".label-quoted")).to_have_count(0)
    message = Message.objects.get()
    assert message.status == Message.Status.ANSWERED
    assert message.generator.startswith("anthropic/")
    assert message.snapshot["timings_ms"]["generation"] >= PAUSE_SECONDS * 1000
    assert [c["path"] for c in message.citations] == ["policies/refunds.md"]
