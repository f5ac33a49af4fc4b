"""The help-center analytics page in real Chromium, as staff see it: totals, three charts drawn
as inline SVG with no Content-Security-Policy violation and no request off-site, and the same
numbers as tables with JavaScript off. Saves docs/screenshots/admin-analytics.png and
admin-analytics-table.png (under make screenshots)."""

from __future__ import annotations

import datetime
import random

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from playwright.sync_api import ConsoleMessage, Page, Request, expect

from assistant.models import Conversation, Feedback, Message, SupportRequest
from kb.models import Document

pytestmark = pytest.mark.e2e

RECORD_VIOLATIONS = """
window.cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.cspViolations.push(event.violatedDirective + " " + (event.blockedURI || "inline"));
});
"""
ANSWERED = [
    ("How do I get a refund for my last invoice?", "policies/refunds.md"),
    ("Can I get my money back after 30 days?", "policies/refunds.md"),
    ("refund for an annual plan", "policies/refunds.md"),
    ("Where do I download my invoices?", "billing/invoices.md"),
    ("How can I download a PDF invoice?", "billing/invoices.md"),
    ("How do I cancel my subscription?", "policies/cancellation.md"),
    ("cancel subscription before renewal", "policies/cancellation.md"),
    ("What is the API rate limit per minute?", "api/rate-limits.md"),
]
REFUSED = [
    "Do you accept bitcoin payments?",
    "can customers pay invoices with bitcoin",
    "Is there an iPhone app?",
    "Do you have a mobile app for iPhone?",
]
VIEWPORT = {"width": 1440, "height": 1400}


def _help_center_traffic() -> None:
    """30 days of questions (more on weekdays), answered, refused or flagged, with votes and
    support requests, stored directly (the page reads what is stored, not how it got there)."""
    rng = random.Random(7)
    pages = {}
    for path, category in [
        ("policies/refunds.md", "policies"),
        ("policies/cancellation.md", "policies"),
        ("billing/invoices.md", "billing"),
        ("api/rate-limits.md", "api"),
    ]:
        pages[path] = Document.objects.create(
            path=path, title=path, category=category, body="# x\n\ny"
        )
    now = timezone.now()
    for days_ago in range(30):
        day = now - datetime.timedelta(days=days_ago)
        busy = 14 if day.weekday() < 5 else 6
        for number in range(busy + rng.randrange(6)):
            asked = day - datetime.timedelta(minutes=rng.randrange(600))
            conversation = Conversation.objects.create(client_key_hash=f"c{days_ago}-{number}")
            if rng.random() < 0.78:
                question, path = rng.choice(ANSWERED)
                status, citations = "answered", [{"document_id": pages[path].pk, "path": path}]
            else:
                question, status, citations = rng.choice(REFUSED), "not_in_docs", []
            if rng.random() < 0.05:
                status = "flagged"
            message = Message.objects.create(
                conversation=conversation,
                question=question,
                status=status,
                citations=citations,
                audience="internal" if rng.random() < 0.2 else "public",
            )
            Message.objects.filter(pk=message.pk).update(
                created_at=asked, answered_at=asked + datetime.timedelta(seconds=3)
            )
            if rng.random() < 0.35:
                vote = "up" if status == "answered" and rng.random() < 0.8 else "down"
                Feedback.objects.create(message=message, client_key_hash="v", vote=vote)
            if rng.random() < (0.06 if status == "answered" else 0.3):
                request = SupportRequest.objects.create(
                    conversation=conversation, client_key_hash="v", email="a@example.com",
                    message="help",
                )  # fmt: skip
                SupportRequest.objects.filter(pk=request.pk).update(
                    created_at=asked + datetime.timedelta(hours=2)
                )


def _watch(page: Page) -> dict[str, list[str]]:
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
    return seen


def test_staff_read_the_analytics_charts_and_the_same_numbers_as_tables(
    new_page, sign_in, screenshot
) -> None:
    # given
    _help_center_traffic()
    staff = User.objects.create_superuser("analyst", "analyst@example.com", "unused")
    page = new_page(viewport=VIEWPORT)
    seen = _watch(page)
    sign_in(page, staff)

    # when
    page.goto("/admin/analytics/?days=30")

    # then: totals and three drawn charts, nothing blocked, nothing fetched elsewhere
    first_day = timezone.localdate() - datetime.timedelta(days=29)
    since = datetime.datetime.combine(
        first_day, datetime.time(), tzinfo=timezone.get_current_timezone()
    )
    asked = Message.objects.filter(created_at__gte=since).count()
    expect(page.locator(".analytics-totals dd").first).to_have_text(str(asked))
    charts = page.locator(".analytics-charts svg.chart")
    expect(charts).to_have_count(3)
    expect(charts.first.locator("rect.chart-answered").first).to_be_visible()
    assert page.evaluate("window.cspViolations") == []
    assert seen["console"] == [] and seen["offsite"] == []
    expect(page.get_by_role("heading", name="Top topics")).to_be_visible()
    topics = page.locator(".analytics-topics-table")
    expect(topics.first.locator("tbody tr").first).to_contain_text("?")
    expect(topics.last).to_contain_text("bitcoin")  # an unanswered topic, with its examples
    screenshot(page, "admin-analytics")

    # when: the same page with JavaScript off
    plain = new_page(viewport=VIEWPORT, java_script_enabled=False)
    sign_in(plain, staff)
    plain.goto("/admin/analytics/?days=30")

    # then: the numbers are a table, one row per day plus the whole period
    table = plain.locator("#analytics-table table").first
    expect(table.locator("tbody tr")).to_have_count(30)
    expect(table.locator("tfoot th")).to_have_text("Whole period")
    expect(table.locator("tfoot td").first).to_have_text(str(asked))
    screenshot(plain.locator("#analytics-table"), "admin-analytics-table")
