"""The widget on another *site* (http://localhost:PORT framing the app at http://127.0.0.1:PORT;
a port alone is only another origin): the chat in the frame needs its session and CSRF cookies,
which this Chromium keeps in a cross-site frame only when they are ``SameSite=None; Secure;
Partitioned`` (it blocks third-party cookies; ``None; Secure`` alone was dropped, measured
2026-12-02). With ``SESSION_COOKIE_SAMESITE=None`` and ``CSRF_COOKIE_SAMESITE=None``
(``assistant.widget.cookies`` adds ``Partitioned``) a question gets its answer; with Django's
default (Lax) the ask is refused for want of a CSRF cookie and the frame says to reload.
Chromium accepts Secure cookies over plain HTTP on loopback addresses, which is what lets this
run without TLS; production is HTTPS (docs/widget.md)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from assistant.widget.models import EmbedSite
from tests.support.chat import REFUND_QUESTION
from tests.support.host_page import host_page_served

pytestmark = pytest.mark.e2e

CROSS_SITE_COOKIES = {
    "SESSION_COOKIE_SAMESITE": "None",
    "SESSION_COOKIE_SECURE": "true",
    "CSRF_COOKIE_SAMESITE": "None",
    "CSRF_COOKIE_SECURE": "true",
}


@pytest.fixture
def e2e_server_env(request: pytest.FixtureRequest) -> dict[str, str]:
    """The server's cookie settings, as each test names them (Django's defaults otherwise)."""
    return getattr(request, "param", {})


def _ask_on_another_site(page: Page, e2e_server) -> None:
    site = EmbedSite.objects.create(name="Shop", allowed_origins="http://localhost:1")
    with host_page_served(
        app_url=e2e_server.url, site_key=site.site_key, hostname="localhost"
    ) as shop:
        site.allowed_origins = shop.origin
        site.save()
        page.goto(shop.url)
        page.get_by_role("button", name="Help", exact=True).click()
        box = page.frame_locator("iframe").get_by_label("Your question")
        expect(box).to_be_focused()
        box.fill(REFUND_QUESTION)
        box.press("Enter")


@pytest.mark.parametrize("e2e_server_env", [CROSS_SITE_COOKIES], indirect=True)
def test_with_samesite_none_secure_cookies_the_widget_answers_on_another_site(
    page: Page, help_center, e2e_server
) -> None:
    _ask_on_another_site(page, e2e_server)

    chat = page.frame_locator("iframe")
    answer = chat.locator("#conversation > .turn .answer").last
    expect(answer.locator(".answer-text")).to_contain_text("30 days")
    expect(answer.locator(".source-link").first).to_be_visible()
    # kept by the browser only because they are partitioned: under the shop's site, not ours
    cookies = {cookie["name"]: cookie for cookie in page.context.cookies(e2e_server.url)}
    for name in ["sessionid", "csrftoken"]:
        assert cookies[name]["sameSite"] == "None" and cookies[name]["secure"], cookies[name]
        assert cookies[name].get("partitionKey") == "http://localhost", cookies[name]


def test_with_the_default_lax_cookies_a_cross_site_ask_is_refused_and_says_so(
    page: Page, help_center, e2e_server
) -> None:
    _ask_on_another_site(page, e2e_server)

    error = page.frame_locator("iframe").locator("#ask-error")
    expect(error).to_have_text("Your session has expired. Please reload the page and ask again.")
