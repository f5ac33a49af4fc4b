"""The website widget in real Chromium, on a customer's page served from a second loopback
origin (tests.support.host_page) that holds nothing of ours but the ``<script>`` tag and sends
its own strict CSP (script-src and frame-src for our origin, nothing else): the launcher opens
the chat in a frame, a question gets a streamed, cited answer, a source opens in a new tab on
our origin, Escape closes the panel and gives the focus back; with 0 CSP violations in the host
page and the frame. A page whose origin is not on the site key's list gets nothing of ours. A
steward copies the tag from the admin.
Saves docs/screenshots/widget-open.png and widget-phone.png."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from playwright.sync_api import ConsoleMessage, Frame, Page, expect

from assistant.widget.models import EmbedSite
from tests.conftest import POLICY_STEWARDS, member
from tests.support.chat import REFUND_QUESTION
from tests.support.host_page import HostPage, host_page_served

pytestmark = pytest.mark.e2e

# Recorded in every frame before its scripts run: each violation the browser reports, and the
# page's own global names, to find any the widget adds.
RECORD = """
window.cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.cspViolations.push(event.violatedDirective + " " + (event.blockedURI || "inline"));
});
window.globalsBefore = Object.getOwnPropertyNames(window);
"""
FRAME_TITLE = "Help: ask our help center"


@pytest.fixture
def site(e2e_server) -> EmbedSite:
    return EmbedSite.objects.create(name="Acme shop", allowed_origins="http://127.0.0.1:1")


@pytest.fixture
def host(e2e_server, site: EmbedSite) -> Iterator[HostPage]:
    with host_page_served(app_url=e2e_server.url, site_key=site.site_key) as served:
        site.allowed_origins = served.origin
        site.save()
        yield served


@pytest.fixture
def watched(page: Page) -> dict[str, list]:
    seen: dict[str, list] = {"console": [], "responses": []}

    def on_console(message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text or "Refused to" in message.text:
            seen["console"].append(message.text)

    page.add_init_script(RECORD)  # runs in the iframe too
    page.on("console", on_console)
    page.on("response", lambda response: seen["responses"].append(response))
    return seen


def _frame(page: Page, app_url: str) -> Frame:
    frames = [frame for frame in page.frames if frame.url.startswith(f"{app_url}/embed/")]
    assert len(frames) == 1, [frame.url for frame in page.frames]
    return frames[0]


def _no_violations(page: Page, frame: Frame, seen: dict[str, list]) -> None:
    assert page.evaluate("window.cspViolations") == []
    assert frame.evaluate("window.cspViolations") == []
    assert seen["console"] == []


def test_the_tag_alone_gives_a_streamed_cited_answer_and_a_source_with_no_violation(
    page: Page, watched, help_center, host: HostPage, e2e_server, screenshot
) -> None:
    # given the customer's page, with nothing of ours but the tag
    page.goto(host.url)
    launcher = page.get_by_role("button", name="Help", exact=True)
    expect(launcher).to_have_attribute("aria-expanded", "false")
    panel_id = launcher.get_attribute("aria-controls")
    panel = page.locator(f"#{panel_id}")
    expect(panel).to_be_hidden()

    # when the launcher is opened from the keyboard
    launcher.focus()
    page.keyboard.press("Enter")

    # then the panel shows our chat, and the focus is in its question box
    expect(launcher).to_have_attribute("aria-expanded", "true")
    expect(panel).to_be_visible()
    expect(panel).to_have_attribute("role", "dialog")
    chat = page.frame_locator(f"iframe[title='{FRAME_TITLE}']")
    box = chat.get_by_label("Your question")
    expect(box).to_be_focused()

    # when a question is typed and sent with Enter
    page.keyboard.type(REFUND_QUESTION)
    page.keyboard.press("Enter")

    # then the answer streams in (server-sent events) with its sources
    answer = chat.locator("#conversation > .turn .answer").last
    expect(answer.locator(".answer-text")).to_contain_text("30 days")
    expect(answer).not_to_have_attribute("aria-busy", "true")
    streams = [r for r in watched["responses"] if r.url.endswith("/events")]
    assert streams and streams[0].headers["content-type"].startswith("text/event-stream")
    assert page.evaluate("window.scrollY") == 0  # the long shop page was not scrolled
    source = answer.locator(".source-link").first
    expect(source).to_have_attribute("target", "_blank")
    expect(source).to_have_attribute("rel", "noopener")
    screenshot(page, "widget-open")

    # when a source is opened: a new tab on our origin at the cited passage; the shop stays
    with page.context.expect_page() as opened:
        source.click()
    tab = opened.value
    tab.wait_for_load_state()
    assert tab.url.startswith(f"{e2e_server.url}/docs/policies/refunds.md?")
    expect(tab.get_by_role("heading", name="Refund Policy", level=1)).to_be_visible()
    assert page.url == host.url

    # when Escape is pressed inside the chat: the panel closes and the focus is back on the launcher
    box.focus()
    page.keyboard.press("Escape")
    expect(panel).to_be_hidden()
    expect(launcher).to_have_attribute("aria-expanded", "false")
    expect(launcher).to_be_focused()

    # and nothing was blocked, in the shop's page or in our frame
    _no_violations(page, _frame(page, e2e_server.url), watched)


def test_a_page_whose_origin_is_not_on_the_list_gets_nothing_of_ours(
    page: Page, watched, site: EmbedSite, e2e_server
) -> None:
    # given a page on another origin than the site key allows (the list holds only port 1)
    with host_page_served(app_url=e2e_server.url, site_key=site.site_key) as stranger:
        page.goto(stranger.url)

        # when its launcher is opened
        page.get_by_role("button", name="Help", exact=True).click()

        # then the frame was refused, by us and by the browser, and shows nothing
        panel = page.get_by_role("dialog", name="Help")
        expect(panel.get_by_role("status")).to_have_text(
            "Help isn't available on this page right now."
        )
        expect(page.locator("iframe")).to_be_hidden()
        refusals = [r for r in watched["responses"] if "/embed/" in r.url]
        assert [r.status for r in refusals] == [403]
        assert "frame-ancestors 'none'" in refusals[0].headers["content-security-policy"]
        assert any("frame-ancestors" in text for text in watched["console"]), watched["console"]
        for frame in page.frames:
            assert frame.locator("#ask-form").count() == 0, frame.url


def test_on_a_phone_the_panel_is_the_whole_screen_and_the_page_keeps_its_own_styles(
    new_page: Callable[..., Page], host: HostPage, screenshot
) -> None:
    phone = new_page(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    phone.add_init_script(RECORD)
    phone.goto(host.url)
    launcher = phone.get_by_role("button", name="Help", exact=True)

    # the shop's rules against buttons, iframes and fonts do not reach the widget...
    expect(launcher).to_be_visible()
    font = launcher.evaluate("element => getComputedStyle(element).fontFamily")
    assert "serif" not in font.replace("sans-serif", ""), font
    # ...and the widget adds no style and no global name to the shop's page
    assert phone.locator("style, link[rel=stylesheet]").count() == 1  # the shop's own
    added = phone.evaluate(
        "Object.getOwnPropertyNames(window).filter(name => !window.globalsBefore.includes(name)"
        " && name !== 'globalsBefore')"
    )
    assert added == []
    expect(phone.locator("#shop-button")).to_have_css("background-color", "rgb(0, 255, 0)")

    launcher.tap()
    panel = phone.get_by_role("dialog", name="Help")
    expect(phone.frame_locator("iframe").get_by_label("Your question")).to_be_visible()
    box = panel.bounding_box()
    assert box == {"x": 0, "y": 0, "width": 390, "height": 844}
    screenshot(phone, "widget-phone")

    panel.get_by_role("button", name="Close Help").tap()
    expect(panel).to_be_hidden()
    expect(launcher).to_be_focused()


def test_a_steward_copies_the_tag_from_the_admin_with_no_violation(
    page: Page, watched, site: EmbedSite, sign_in, e2e_server
) -> None:
    # given a steward on the embed site's page, allowed to write to the clipboard
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=e2e_server.url)
    sign_in(page, member("steward-copying", POLICY_STEWARDS))
    page.goto(f"/admin/assistant/embedsite/{site.pk}/change/")

    # when "Copy the tag" is pressed
    page.get_by_role("button", name="Copy the tag").click()

    # then the clipboard holds the one line the site's pages need
    expect(page.get_by_role("status").filter(has_text="Copied.")).to_be_visible()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == (
        f'<script src="{e2e_server.url}/static/assistant/widget.js" '
        f'data-site-key="{site.site_key}" async></script>'
    )
    assert page.evaluate("window.cspViolations") == []
    assert watched["console"] == []
