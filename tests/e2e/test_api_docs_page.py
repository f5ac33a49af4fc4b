"""The answer API's schema page (/api/v1/docs, Swagger UI from django-ninja's wheel) in real
Chromium: it renders every endpoint from /api/v1/openapi.json, loads nothing off-site, and the
site's Content-Security-Policy reports no violation."""

from __future__ import annotations

import pytest
from playwright.sync_api import ConsoleMessage, Page, Request, expect

pytestmark = pytest.mark.e2e

RECORD_VIOLATIONS = """
window.cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.cspViolations.push(event.violatedDirective + " " + (event.blockedURI || "inline"));
});
"""


def test_the_schema_page_renders_every_endpoint_from_this_site(page: Page) -> None:
    console: list[str] = []
    offsite: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text:
            console.append(message.text)

    def on_request(request: Request) -> None:
        if not request.url.startswith(("http://127.0.0.1", "data:")):
            offsite.append(request.url)

    page.add_init_script(RECORD_VIOLATIONS)
    page.on("console", on_console)
    page.on("request", on_request)

    page.goto("/api/v1/docs")

    for path in ("/api/v1/ask", "/api/v1/ask/stream", "/api/v1/search", "/api/v1/conversations"):
        expect(page.get_by_text(path, exact=True).first).to_be_visible()
    assert offsite == []
    assert page.evaluate("window.cspViolations") == [] and console == []
