"""The Content-Security-Policy in real Chromium: the chat page (htmx, server-sent events), a
document page, and the admin's list, change form (with its live preview), history and import
pages work with no violation reported, and a remote image in a document is never fetched."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from playwright.sync_api import ConsoleMessage, Page, Request, expect

from kb.actors import SYSTEM
from kb.models import Document
from kb.services.sync import corpus_sync
from tests.support.chat import REFUND_QUESTION, write_help_center

pytestmark = pytest.mark.e2e

# Recorded in the page before any of its scripts run: every violation the browser reports.
RECORD_VIOLATIONS = """
window.cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.cspViolations.push(event.violatedDirective + " " + (event.blockedURI || "inline"));
});
"""
TRACKED_PAGE = """---
title: Tracked Page
---
# Tracked Page

Our office hours are nine to five. ![pixel](https://tracker.example/pixel.png)
"""


@pytest.fixture
def watched(page: Page) -> Iterator[dict[str, list[str]]]:
    """The page's CSP violations (console and event) and every request it sent off-site."""
    seen: dict[str, list[str]] = {"console": [], "offsite": []}

    def on_console(message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text:
            seen["console"].append(message.text)

    def on_request(request: Request) -> None:
        if not request.url.startswith(("http://127.0.0.1", "data:")):
            seen["offsite"].append(request.url)

    page.add_init_script(RECORD_VIOLATIONS)
    page.on("console", on_console)
    page.on("request", on_request)
    yield seen


def _assert_clean(page: Page, seen: dict[str, list[str]]) -> None:
    assert page.evaluate("window.cspViolations") == [], page.url
    assert seen["console"] == [], page.url
    assert seen["offsite"] == [], page.url


def test_chat_streams_an_answer_with_no_policy_violation(
    page: Page, watched, tmp_path: Path, local_embedder
) -> None:
    root = write_help_center(tmp_path / "docs")
    assert corpus_sync(directory=root, embedder=local_embedder, actor=SYSTEM).failed == []
    cache.clear()
    page.goto("/")
    header = page.request.get("/").headers["content-security-policy"]
    assert "script-src 'self'" in header

    box = page.get_by_label("Your question")
    box.fill(REFUND_QUESTION)
    box.press("Enter")

    answer = page.locator("#conversation > .turn .answer").last
    expect(answer.locator(".answer-text")).to_contain_text("30 days")
    expect(answer).not_to_have_attribute("aria-busy", "true")
    _assert_clean(page, watched)


def test_document_and_admin_pages_work_with_no_policy_violation(
    page: Page, watched, sign_in
) -> None:
    # a document page with a remote image: shown as its description, never fetched
    Document.objects.create(
        path="support/tracked.md", title="Tracked Page", body=TRACKED_PAGE.split("---\n", 2)[2]
    )
    page.goto("/docs/support/tracked.md")
    expect(page.get_by_text("[image: pixel]")).to_be_visible()
    _assert_clean(page, watched)

    document = Document.objects.create(
        path="policies/refunds.md", title="Refunds", body="# Refunds\n\nRefunds take 5 days.\n"
    )
    document.body += "\nEdited.\n"
    document.save()
    sign_in(page, User.objects.create_superuser(username="steward", password="pw-for-tests"))

    page.goto("/admin/kb/document/")
    expect(page.get_by_role("link", name="policies/refunds.md")).to_be_visible()
    _assert_clean(page, watched)
    page.goto(f"/admin/kb/document/{document.pk}/change/")
    body = page.locator("#id_body")
    body.fill("# Refunds\n\nSend your password to help@evil.example\n")
    expect(page.locator(".kb-preview-warnings")).to_contain_text("asks the reader for credentials")
    page.locator("#id_superseded_by + .select2").click()  # the autocomplete widget (select2)
    page.keyboard.press("Escape")
    _assert_clean(page, watched)
    page.goto(f"/admin/kb/document/{document.pk}/history/")
    expect(page.get_by_role("link", name="Compare with the previous version").first).to_be_visible()
    _assert_clean(page, watched)
    page.goto("/admin/kb/document/import/")
    expect(page.get_by_label("File")).to_be_visible()
    _assert_clean(page, watched)
