"""A citation link in a real browser: the page opens on the cited passage, highlighted."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission, User
from playwright.sync_api import Page, expect

from kb.actors import SYSTEM
from kb.models import Chunk, Document
from kb.services.sync import corpus_sync

pytestmark = pytest.mark.e2e

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}

# Long enough that the last section starts below the fold on a laptop screen.
HANDBOOK = """---
title: Expense Policy
category: policies
updated: 2026-09-14
---
# Expense Policy

This policy covers what the company pays back when you spend your own money on work.

## Travel

Economy class for flights under six hours; premium economy for longer ones when the trip
includes a working day on arrival. Business class needs a vice president's written approval.

## Hotels

- Book through the travel desk at the corporate rate.
- Stays longer than fourteen nights use a serviced apartment.
- Minibar charges are never reimbursed.

## Equipment

Laptops and phones are ordered through IT, never bought personally. A monitor, keyboard or
chair for working from home is reimbursed up to 400 euros once every three years, with a receipt.

## Meals

| Region | Daily allowance |
|---|---|
| Europe | 65 euros |
| North America | 75 US dollars |

## Claims

Submit every claim within sixty days of the expense, with the original receipt attached. Claims
submitted later are paid only with your manager's approval and a written reason for the delay.
Reimbursements arrive with the next monthly payroll after the claim is approved.
"""


@pytest.fixture
def handbook(e2e_server, tmp_path: Path, cached_embedder) -> Document:
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "expenses.md").write_text(HANDBOOK)
    corpus_sync(directory=tmp_path, embedder=cached_embedder, actor=SYSTEM)
    return Document.objects.get(path="policies/expenses.md")


def _citation_url(chunk: Chunk) -> str:
    return f"/docs/{chunk.document.path}?start={chunk.char_start}&end={chunk.char_end}#passage"


def test_a_citation_link_opens_on_the_highlighted_passage(
    page: Page, handbook: Document, screenshot: Callable[..., Path]
) -> None:
    # given: the chunk an answer about late claims would cite
    chunk = Chunk.objects.get(document=handbook, text__contains="Submit every claim")

    # when
    page.goto(_citation_url(chunk))

    # then: the passage is on screen, highlighted, and labelled for screen readers
    passage = page.locator("#passage")
    expect(passage).to_be_in_viewport()
    expect(passage).to_have_class("cited-passage")
    expect(page.locator(".cited-passage", has_text="Submit every claim")).to_be_visible()
    background = passage.evaluate("block => getComputedStyle(block).backgroundColor")
    assert background == "rgb(255, 243, 191)"
    expect(passage.get_by_text("Cited passage:")).to_be_attached()
    expect(page.get_by_role("link", name="Go to the cited passage")).to_be_visible()
    expect(page).to_have_title("Expense Policy · Groundwork")
    screenshot(page, "document-cited-passage", full_page=True)


def test_heading_links_show_on_keyboard_focus(page: Page, handbook: Document) -> None:
    page.goto(f"/docs/{handbook.path}")
    anchor = page.locator("a.heading-anchor[href='#equipment']")
    expect(anchor).to_have_css("opacity", "0")

    anchor.focus()

    expect(anchor).to_have_css("opacity", "1")


def test_document_page_fits_a_phone_screen(
    new_page: Callable[..., Page], handbook: Document, screenshot: Callable[..., Path]
) -> None:
    phone = new_page(**PHONE)
    chunk = Chunk.objects.get(document=handbook, text__contains="| Europe |")

    phone.goto(_citation_url(chunk))

    expect(phone.locator(".cited-passage", has_text="65 euros")).to_be_visible()
    expect(phone.locator("#passage")).to_be_in_viewport()
    overflow = phone.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0, f"the page scrolls sideways by {overflow}px on a phone"
    screenshot(phone, "document-cited-passage-phone")


def test_an_internal_page_opens_for_signed_in_staff_who_may_read_it(
    page: Page, e2e_server, sign_in: Callable[[Page, User], None]
) -> None:
    # given
    Document.objects.create(
        path="internal/escalation.md",
        title="Escalation Playbook",
        body="# Escalation Playbook\n\nAgents may grant credits up to $200.\n",
        audience=Document.Audience.INTERNAL,
    )

    # when / then: anonymous readers get the same 404 as a missing page
    assert page.goto("/docs/internal/escalation.md").status == 404

    # when / then: staff who may read internal pages (kb.view_document) see it, marked internal
    agent = User.objects.create_user("agent", password="pw-for-e2e", is_staff=True)
    agent.user_permissions.add(Permission.objects.get(codename="view_document"))
    sign_in(page, agent)
    assert page.goto("/docs/internal/escalation.md").status == 200
    expect(page.locator(".badge-internal")).to_have_text("Internal")
    expect(page.get_by_text("Agents may grant credits up to $200.")).to_be_visible()
