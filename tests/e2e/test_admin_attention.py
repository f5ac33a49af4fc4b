"""A policy steward's "Policies needing attention" page, in a real browser: the lists with their
counts, the 2023 refund page's contradiction of the current policy with the differing values
marked, retiring the older page in favour of the newer one after a confirmation that names the
question it answered, and undoing it from the message. Saves the screenshots the README and
docs/operations.md show (docs/screenshots/admin-attention.png, admin-retire-confirm.png,
admin-retire-undo.png)."""

from __future__ import annotations

import datetime
import re
from pathlib import Path

import pytest
from django.core.cache import cache
from django.utils import timezone
from playwright.sync_api import Page, expect

from assistant.models import Conversation, Feedback, Message
from kb.models import Document
from tests.conftest import corpus_pages_indexed
from tests.e2e.test_admin_screenshots import CORPUS_PAGES, PASSWORD, _policy_steward

pytestmark = pytest.mark.e2e

ATTENTION_PAGES = (*CORPUS_PAGES, "policies/refunds-2023.md")
VIEWPORT = {"width": 1440, "height": 1000}


@pytest.fixture
def help_center_needing_attention(e2e_server, tmp_path: Path, cached_embedder) -> None:
    corpus_pages_indexed(tmp_path, ATTENTION_PAGES, cached_embedder)
    Document.objects.filter(path="api/rate-limits.md").update(
        review_by=timezone.localdate() - datetime.timedelta(days=12)
    )
    refunds_2023 = Document.objects.get(path="policies/refunds-2023.md")
    message = Message.objects.create(
        conversation=Conversation.objects.create(client_key_hash="e" * 64),
        question="Can I still get a refund 20 days after my first monthly charge?",
        status=Message.Status.ANSWERED,
        citations=[{"number": 1, "document_id": refunds_2023.pk, "path": refunds_2023.path}],
    )
    Feedback.objects.create(
        message=message,
        client_key_hash="f" * 64,
        vote=Feedback.Vote.DOWN,
        comment="It said 14 days, but the refund page says 30.",
    )
    cache.clear()  # the contradictions are cached per index version, in the shared Redis


def test_steward_retires_a_contradicted_page_after_confirming_and_undoes_it(
    page: Page, help_center_needing_attention: None, screenshot
) -> None:
    # given
    steward = _policy_steward()
    page.set_viewport_size(VIEWPORT)
    page.goto("/admin/login/?next=/admin/")
    page.get_by_label("Username").fill(steward.get_username())
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()

    # when: the steward follows the admin index's link
    page.get_by_role("link", name="Policies needing attention").click()

    # then: the contradiction of the refund pages, side by side, the differing values marked
    expect(page).to_have_url(re.compile(r"/admin/attention/$"))
    contradictions = page.locator("section#contradictions")
    monthly = contradictions.locator("tr.attention-contradiction").filter(
        has_text="Refund Policy (2023) > Monthly subscriptions"
    ).filter(has_text="Refund Policy > Monthly plans")  # fmt: skip
    expect(monthly).to_have_count(1)
    older, newer = monthly.locator("td.attention-passage").all()
    expect(older.locator("mark").first).to_have_text("14 days")
    expect(newer.locator("mark").first).to_have_text("30 days")
    expect(older.get_by_role("link")).to_have_text("policies/refunds-2023.md")
    thumbs = page.locator("section#thumbs")
    expect(thumbs).to_contain_text("It said 14 days, but the refund page says 30.")
    review = page.locator("section#review")
    expect(review).to_contain_text("api/rate-limits.md")
    expect(review.locator("tbody tr").filter(has_text="api/rate-limits.md")).to_contain_text(
        "12 days overdue"
    )
    rows = review.locator("tbody tr").count()
    expect(review.locator("h2 .attention-count")).to_have_text(str(rows))
    screenshot(page, "admin-attention", full_page=True)

    # when: the row's Retire, its successor already the newer page
    expect(monthly.get_by_label("Successor of policies/refunds-2023.md")).to_have_value(
        "policies/refunds.md"
    )
    monthly.get_by_role("button", name="Retire…").click()

    # then: a page of its own asks first, naming the successor and the customer question whose
    # answer would lose its source; nothing is retired yet
    expect(page).to_have_url(re.compile(r"/admin/attention/retire/\?"))
    main = page.locator("#content-main")
    expect(page.locator("h1")).to_have_text("Retire policies/refunds-2023.md?")
    expect(main).to_contain_text("It will be superseded by policies/refunds.md")
    cited = page.locator("#cited-questions")
    expect(cited.locator("h2")).to_have_text("Customer questions answered from it: 1")
    expect(cited).to_contain_text("Can I still get a refund 20 days after my first monthly charge?")
    assert Document.objects.get(path="policies/refunds-2023.md").status == "published"
    screenshot(page, "admin-retire-confirm", full_page=True)

    # when: confirmed
    page.get_by_role("button", name="Retire policies/refunds-2023.md").click()

    # then: retired with its successor, gone from every list, the message offering an Undo
    notice = page.locator(".attention-retired")
    expect(notice).to_contain_text(
        "Retired policies/refunds-2023.md, superseded by policies/refunds.md"
    )
    expect(contradictions).not_to_contain_text("policies/refunds-2023.md")
    expect(thumbs).not_to_contain_text("policies/refunds-2023.md")
    retired = Document.objects.select_related("superseded_by").get(path="policies/refunds-2023.md")
    assert retired.status == Document.Status.RETIRED
    assert retired.superseded_by is not None and retired.superseded_by.path == "policies/refunds.md"
    assert retired.history.first().history_user == steward
    screenshot(page, "admin-retire-undo", clip=_top_of_page(page, notice))

    # when: Undo
    notice.get_by_role("button", name="Undo").click()

    # then: published again, back in the lists, the undo in its history
    expect(page.locator(".messagelist")).to_contain_text(
        "Undone: policies/refunds-2023.md is published again"
    )
    expect(contradictions).to_contain_text("policies/refunds-2023.md")
    restored = Document.objects.get(path="policies/refunds-2023.md")
    assert (restored.status, restored.superseded_by_id) == ("published", None)
    assert restored.history.first().history_change_reason == "Undo of a retirement"


def _top_of_page(page: Page, below) -> dict[str, float]:
    """The page from its top to a little below ``below``: the message and the lists' start."""
    box = below.bounding_box()
    assert box is not None
    return {"x": 0, "y": 0, "width": VIEWPORT["width"], "height": box["y"] + box["height"] + 260}
