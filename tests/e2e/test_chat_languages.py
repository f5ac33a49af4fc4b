"""Questions in other languages on the chat page, in real Chromium, with the local English-only
model and the offline answerer (the default set-up): the issue's German question that the docs
answer is not refused as "not in our help center"; its asker is told, in German, that questions
are searched in English only."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.cache import cache
from playwright.sync_api import Page, expect

from assistant.models import Message
from tests.conftest import corpus_pages_indexed

pytestmark = pytest.mark.e2e

CORPUS_PAGES = ("plans/plans-and-limits.md", "account/team-members-and-roles.md")
GERMAN_QUESTION = "Wie viele Teammitglieder kann ich im Starter-Tarif hinzufügen?"


@pytest.fixture
def help_center(e2e_server, tmp_path: Path, cached_embedder) -> None:
    corpus_pages_indexed(tmp_path, CORPUS_PAGES, cached_embedder)
    cache.clear()  # answers and rate limits of earlier runs live in the shared Redis


def test_a_german_question_is_told_in_german_that_questions_are_read_in_english(
    page: Page, help_center, screenshot
) -> None:
    # given
    page.goto("/")

    # when
    box = page.get_by_label("Your question")
    box.fill(GERMAN_QUESTION)
    box.press("Enter")

    # then: the answer, once streamed, is the German notice, never "not in our help center"
    answer = page.locator("#conversation > .turn").last.locator(".answer")
    expect(answer).not_to_have_attribute("aria-busy", "true")
    expect(answer.locator(".answer-text")).to_contain_text(
        "Ich kann unser Hilfe-Center nur nach Fragen auf Englisch durchsuchen"
    )
    expect(answer).not_to_contain_text("couldn't find an answer")
    expect(answer.locator(".answer-not-in-docs")).to_have_attribute("lang", "de")
    message = Message.objects.get()
    assert message.snapshot["language"]["code"] == "de"
    screenshot(page, "chat-german-question", full_page=True)
