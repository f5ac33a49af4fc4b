"""A policy steward's admin, in a real browser: the document list with its index status, and
the editor with the live preview of the rendered page (styled as the public page, following the
caret's section) and its chunks beside it (below it on a narrow screen). Saves the
screenshots the README shows (docs/screenshots/admin-document-*.png)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, Permission, User
from playwright.sync_api import Page, expect

from kb.models import Chunk, Document
from tests.conftest import corpus_pages_indexed

pytestmark = pytest.mark.e2e

# A few real pages of the sample help center: published, retired with a successor, internal.
CORPUS_PAGES = (
    "policies/refunds.md",
    "policies/cancellation.md",
    "policies/cancellation-legacy.md",
    "billing/invoices.md",
    "api/rate-limits.md",
    "internal/support-escalation.md",
)
LIST_VIEWPORT = {"width": 1600, "height": 900}
EDITOR_VIEWPORT = {"width": 1280, "height": 800}
LAPTOP_VIEWPORT = {"width": 1366, "height": 768}
NARROW_VIEWPORT = {"width": 760, "height": 900}
PASSWORD = "steward-pw-for-e2e"
GIFT_CARDS = (
    "Gift cards bought from the Acme store are never refunded, in whole or in part, once the "
    "code has been sent to the recipient. A gift card that was never delivered because the "
    "email address bounced can be cancelled by support within thirty days of purchase, and the "
    "amount is returned to the card that paid for it.\n\n"
    "- Cards bought in the store\n- Cards sent by email\n\n"
    "| Card | Refund |\n|---|---|\n| Undelivered | Within 30 days |\n| Delivered | Never |"
)
LIST_COLUMNS = (
    "Path",
    "Title",
    "Status",
    "Audience",
    "Category",
    "Updated on",
    "Review by",
    "Index",
)


def _policy_steward() -> User:
    """A staff user in the "Policy stewards" group of migration 0004. A transactional test
    before this one may have flushed the group away, so it is put back from the same list."""
    groups = importlib.import_module("kb.migrations.0004_groups").GROUPS
    group, _ = Group.objects.get_or_create(name="Policy stewards")
    if not group.permissions.exists():
        group.permissions.set(
            Permission.objects.filter(
                content_type__app_label="kb", codename__in=groups["Policy stewards"]
            )
        )
    user = User.objects.create_user("steward", password=PASSWORD, is_staff=True)
    user.groups.add(group)
    return user


@pytest.fixture
def indexed_help_center(e2e_server, tmp_path: Path, cached_embedder) -> list[Document]:
    corpus_pages_indexed(tmp_path, CORPUS_PAGES, cached_embedder)
    return list(Document.objects.order_by("path"))


def _log_in(page: Page, user: User) -> None:
    page.goto("/admin/login/?next=/admin/kb/document/")
    page.get_by_label("Username").fill(user.get_username())
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()


def test_steward_sees_documents_with_index_status_and_a_live_chunk_preview(
    page: Page, indexed_help_center: list[Document], screenshot
) -> None:
    # given
    steward = _policy_steward()

    # when: the steward logs in through the admin's own form
    _log_in(page, steward)

    # then: the document list shows every document with its status and index state
    expect(page).to_have_url(re.compile(r"/admin/kb/document/$"))
    page.set_viewport_size(LIST_VIEWPORT)  # wide enough for every column, the index one last
    results = page.locator("#result_list")
    rows = results.locator("tbody tr")
    expect(rows).to_have_count(len(CORPUS_PAGES))
    headers = [" ".join(text.split()) for text in results.locator("thead th").all_text_contents()]
    for column in LIST_COLUMNS:
        assert column in headers, headers
    legacy = rows.filter(has_text="policies/cancellation-legacy.md")
    current = rows.filter(has_not_text="policies/cancellation-legacy.md")
    expect(current.locator("td.field-index_status")).to_have_text(
        ["indexed"] * (len(CORPUS_PAGES) - 1)
    )
    expect(legacy.locator("td.field-status")).to_have_text("Retired")
    expect(legacy.locator("td.field-index_status")).to_have_text("retired — not searchable")
    internal = rows.filter(has_text="internal/support-escalation.md")
    expect(internal.locator("td.field-audience")).to_have_text("Internal")
    expect(page.get_by_role("link", name="Import Markdown")).to_be_visible()
    screenshot(page, "admin-document-list", full_page=True)

    # when: the steward opens one document
    refunds = next(doc for doc in indexed_help_center if doc.path == "policies/refunds.md")
    rows.filter(has_text="policies/refunds.md").get_by_role("link").first.click()

    # then: the preview renders the page and the chunks the saved text produced
    preview = page.locator(".kb-preview")
    chunk_items = preview.locator(".kb-preview-chunks li")
    stored = list(Chunk.objects.filter(document=refunds).order_by("ordinal"))
    expect(chunk_items).to_have_count(len(stored))
    for item, chunk in zip(chunk_items.all(), stored, strict=True):
        expect(item.locator("strong")).to_have_text(chunk.heading_path)
        expect(item.locator(".kb-preview-tokens")).to_have_text(f"{chunk.token_count} tokens")
    expect(preview.locator(".kb-preview-page h1")).to_have_text("Refund Policy")

    # when: the body is edited, the preview follows without a save
    body = page.locator("#id_body")
    body.press("Control+End")
    body.press_sequentially(f"\n\n## Gift cards\n\n{GIFT_CARDS}")

    # then: the new section shows in the rendered page and adds a chunk, none over the limit
    expect(preview.locator(".kb-preview-page h2", has_text="Gift cards")).to_be_visible()
    expect(chunk_items).to_have_count(len(stored) + 1)
    summary = preview.locator(".kb-preview-chunks h3")
    expect(summary).to_contain_text(f"{len(stored) + 1} chunks")
    max_tokens = int(re.search(r"at most (\d+) tokens", summary.inner_text()).group(1))
    counts = [
        int(text.split()[0])
        for text in chunk_items.locator(".kb-preview-tokens").all_text_contents()
    ]
    assert all(0 < count <= max_tokens for count in counts), (counts, max_tokens)
    # The whole form down to the end of the preview, in one picture.
    page.locator("#id_body").evaluate("field => { field.scrollTop = field.scrollHeight; }")
    box = preview.bounding_box()
    assert box is not None
    clip = {
        "x": 0,
        "y": 0,
        "width": page.viewport_size["width"],
        "height": box["y"] + box["height"],
    }
    screenshot(page, "admin-document-edit-preview", full_page=True, clip=clip)

    # then: the preview renders the page as the public page does: bullets at the list's own
    # indent (not the aligned form's 160px), plain headings (not the admin's section bars),
    # table heads as written
    page.set_viewport_size(LAPTOP_VIEWPORT)
    page.locator(".kb-editor-split").evaluate("split => split.scrollIntoView()")
    rendered = preview.locator(".kb-preview-page .document-body")
    gift_cards = rendered.locator("h2", has_text="Gift cards")
    bullet = rendered.locator("li", has_text="sent by email")
    expect(bullet).to_have_css("list-style-type", "disc")
    assert _box(bullet)["x"] - _box(rendered)["x"] < 60, (_box(bullet), _box(rendered))
    expect(gift_cards).to_have_css("background-color", "rgba(0, 0, 0, 0)")
    expect(gift_cards).to_have_css("text-transform", "none")
    expect(rendered.locator("th", has_text="Card")).to_have_css("text-transform", "none")

    # and it follows the caret: at the end of the body, the new section is in the preview's view
    scroller = preview.locator(".kb-preview-page")
    _expect_in_view(gift_cards, scroller)
    expect(rendered.locator("td", has_text="Undelivered")).to_be_visible()
    body.evaluate("field => { field.scrollTop = field.scrollHeight; }")
    screenshot(page, "admin-document-editor")

    # and moved back up into the summary table's section, it scrolls there
    body.evaluate(
        "field => { const at = field.value.indexOf('| Charge type');"
        " field.focus(); field.setSelectionRange(at, at);"
        " field.dispatchEvent(new KeyboardEvent('keyup')); }"
    )
    _expect_in_view(rendered.locator("h2", has_text="Summary"), scroller)
    body.press("Control+Home")
    page.wait_for_function("() => document.querySelector('.kb-preview-page').scrollTop === 0")

    # then: on a 1280px screen the editor is tall, monospace, with the preview beside it
    page.set_viewport_size(EDITOR_VIEWPORT)
    body.scroll_into_view_if_needed()
    editor, beside = _box(body), _box(preview)
    assert editor["height"] >= 0.6 * EDITOR_VIEWPORT["height"], editor
    assert "monospace" in body.evaluate("field => getComputedStyle(field).fontFamily")
    assert beside["x"] >= editor["x"] + editor["width"] and abs(beside["y"] - editor["y"]) < 40
    assert beside["x"] + beside["width"] <= EDITOR_VIEWPORT["width"], beside

    # and on a narrow one the preview is stacked below it, the editor still full width
    page.set_viewport_size(NARROW_VIEWPORT)
    editor, below = _box(body), _box(preview)
    assert below["y"] >= editor["y"] + editor["height"], (editor, below)
    assert editor["width"] >= 0.8 * _box(page.locator(".kb-editor")).get("width", 0)


def _expect_in_view(target, scroller) -> None:
    """Poll until ``target``'s top is inside ``scroller``'s visible box (the preview scrolls
    after its next refresh)."""
    target.page.wait_for_function(
        """([target, scroller]) => {
            const t = target.getBoundingClientRect(), s = scroller.getBoundingClientRect();
            return t.top >= s.top - 1 && t.top < s.top + s.height / 2;
        }""",
        arg=[target.element_handle(), scroller.element_handle()],
    )


def _box(locator) -> dict[str, float]:
    box = locator.bounding_box()
    assert box is not None, locator
    return box


def test_steward_compares_a_saved_edit_with_the_version_before(
    page: Page, indexed_help_center: list[Document], screenshot
) -> None:
    # given: the steward saved an edit of the refund policy
    steward = _policy_steward()
    refunds = next(doc for doc in indexed_help_center if doc.path == "policies/refunds.md")
    _log_in(page, steward)
    page.goto(f"/admin/kb/document/{refunds.pk}/change/")
    body = page.locator("#id_body")
    body.fill(body.input_value().replace("within 30 days", "within 45 days"))
    page.get_by_role("button", name="Save and continue editing").click()
    expect(page.locator(".messagelist")).to_contain_text("was changed successfully")

    # when: the history page's comparison link for that save is followed
    page.get_by_role("link", name="History").click()
    page.get_by_role("link", name="Compare with the previous version").first.click()

    # then: the body's changed lines, before and after, and who saved it
    removed = page.locator("tr.kb-diff-removed")
    added = page.locator("tr.kb-diff-added")
    expect(removed.filter(has_text="within 30 days")).not_to_have_count(0)
    expect(added.filter(has_text="within 45 days")).not_to_have_count(0)
    expect(added.filter(has_text="within 30 days")).to_have_count(0)
    expect(page.locator("#content-main")).to_contain_text("by steward")
    expect(page.get_by_role("link", name="Revert to this version…")).to_be_visible()
    screenshot(page, "admin-document-history-diff")
