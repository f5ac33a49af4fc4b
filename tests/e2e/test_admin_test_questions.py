"""A steward's test question, flagged by an edit, in a real browser: the page list marks the
page, its editor shows the answers before and after side by side, the attention page lists it,
and the editor answers the question on an unsaved draft. Saves
docs/screenshots/admin-test-question-flag.png under ``make screenshots``."""

from __future__ import annotations

from pathlib import Path

import pytest
from celery import current_app
from playwright.sync_api import Page, expect

from kb.actors import SYSTEM
from kb.models import Document, TestQuestionRun
from kb.services import document_save
from kb.test_questions import services
from kb.test_questions.services import TestQuestionEdit
from tests.conftest import POLICY_STEWARDS, member
from tests.support.chat import REFUND_QUESTION, index_help_center

pytestmark = pytest.mark.e2e
WIDE = {"width": 1400, "height": 1000}
# The embedder loads in the server process at the first draft: allow for it.
DRAFT_TIMEOUT_MS = 60_000


def _steward():
    return member("steward-e2e", POLICY_STEWARDS)


def test_an_edit_that_breaks_a_test_question_is_flagged_with_before_and_after(
    page: Page,
    e2e_server,
    sign_in,
    screenshot,
    tmp_path: Path,
    cached_embedder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # given a guarded refund page (the questions run here, eagerly, on the committed rows)
    monkeypatch.setitem(current_app.conf, "task_always_eager", True)
    index_help_center(tmp_path / "docs", embedder=cached_embedder)
    refunds = Document.objects.get(path="policies/refunds.md")
    services.test_questions_save(
        document=refunds,
        actor=SYSTEM,
        edits=[TestQuestionEdit(question=REFUND_QUESTION, facts=["30 days"])],
    )
    assert TestQuestionRun.objects.get().passed

    # when an edit takes the number of days out, and is indexed
    refunds.body = refunds.body.replace("within 30 days of purchase", "within a short time")
    document_save(document=refunds, actor=SYSTEM)
    assert TestQuestionRun.objects.latest("id").flags

    # then the list marks the page
    sign_in(page, _steward())
    page.set_viewport_size(WIDE)
    page.goto("/admin/kb/document/")
    row = page.locator("#result_list tbody tr", has_text="policies/refunds.md")
    expect(row.locator("td.field-test_questions")).to_have_text("1 of 1 flagged")

    # and its editor shows the flag with the answers before and after, side by side
    row.get_by_role("link", name="1 of 1 flagged").click()
    panel = page.locator("#test-questions")
    expect(panel.locator(".kb-test-state")).to_have_text("Flagged")
    expect(panel.locator(".kb-test-flags")).to_have_text("the answer no longer states 30 days")
    expect(panel.locator(".kb-test-before")).to_contain_text("within 30 days of purchase")
    expect(panel.locator(".kb-test-after")).to_contain_text("within a short time")
    before, after = panel.locator(".kb-test-before"), panel.locator(".kb-test-after")
    assert before.bounding_box()["x"] < after.bounding_box()["x"]  # type: ignore[index]
    screenshot(panel, "admin-test-question-flag")

    # when the editor puts the days back in the draft and answers the question on it
    body = page.locator("#id_body")
    body.fill(refunds.body.replace("within a short time", "within 30 days of purchase"))
    panel.get_by_role("button", name="Answer the test questions on this draft").click()

    # then the draft passes, nothing saved
    draft = page.locator("#kb-test-draft-results")
    expect(draft.locator(".kb-test-state")).to_have_text("Passes", timeout=DRAFT_TIMEOUT_MS)
    expect(draft.locator(".kb-test-after")).to_contain_text("30 days")
    assert "within a short time" in Document.objects.get(pk=refunds.pk).body

    # and the attention page lists the broken question with both answers
    page.goto("/admin/attention/#tests")
    tests = page.locator("section#tests")
    expect(tests.locator("tbody tr")).to_have_count(1)
    expect(tests.locator(".kb-test-before")).to_contain_text("30 days")
