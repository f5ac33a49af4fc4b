"""Every page is sent with the Content-Security-Policy, and no page needs what it forbids:
inline ``<script>``, ``<style>``, event-handler attributes, or ``style=`` attributes beyond the
one allowed by its hash. (The browser side is ``tests/e2e/test_content_security_policy.py``.)"""

from __future__ import annotations

import base64
import hashlib
import re
from html.parser import HTMLParser

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

from assistant.models import Message
from kb.models import Document

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
ALLOWED_STYLE_HASHES = set(re.findall(r"'sha256-([^']+)'", settings.CONTENT_SECURITY_POLICY))


class InlineCode(HTMLParser):
    """What in a page the policy would block."""

    def __init__(self) -> None:
        super().__init__()
        self.blocked: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = dict(attrs)
        if tag == "script" and not names.get("src"):
            self.blocked.append("inline <script>")
        if tag == "style":
            self.blocked.append("inline <style>")
        for name, value in attrs:
            if name.startswith("on"):
                self.blocked.append(f"<{tag} {name}=...>")
            if name == "style" and _hash(value or "") not in ALLOWED_STYLE_HASHES:
                self.blocked.append(f'<{tag} style="{value}">')
            if name in {"href", "src", "action"} and (value or "").startswith("javascript:"):
                self.blocked.append(f"<{tag} {name}=javascript:...>")


def _hash(value: str) -> str:
    return base64.b64encode(hashlib.sha256(value.encode()).digest()).decode()


def _blocked(html: str) -> list[str]:
    parser = InlineCode()
    parser.feed(html)
    return parser.blocked


def test_the_policy_allows_scripts_styles_and_images_from_this_site_only() -> None:
    directives = dict(
        part.strip().split(" ", 1) for part in settings.CONTENT_SECURITY_POLICY.split(";")
    )

    assert directives["script-src"] == "'self'"
    assert directives["img-src"] == "'self' data:"
    assert directives["style-src"].startswith("'self'")
    assert "unsafe-inline" not in settings.CONTENT_SECURITY_POLICY


def test_every_page_carries_the_policy_and_needs_no_inline_code() -> None:
    # given a page, a conversation with an answer, and a steward signed in
    document = Document.objects.create(
        path="policies/refunds.md",
        title="Refunds",
        body="# Refunds\n\nTracked: ![x](https://elsewhere.example/t.png)\n",
    )
    document.body += "\nEdited.\n"
    document.save()
    reader = Client()
    reader.post("/ask", {"question": "How do refunds work?"}, **HTMX)
    Message.objects.update(status=Message.Status.ANSWERED, answer="Refunds go back to the card.")
    steward = Client()
    steward.force_login(User.objects.create_superuser(username="steward", password="pw-for-tests"))
    version = document.history.order_by("history_id").last()
    pages = [
        (reader, "/"),
        (reader, "/docs/"),
        (reader, "/docs/policies/refunds.md"),
        (reader, "/docs/missing.md"),
        (reader, "/support"),
        (steward, "/admin/"),
        (steward, "/admin/kb/document/"),
        (steward, "/admin/kb/document/add/"),
        (steward, f"/admin/kb/document/{document.pk}/change/"),
        (steward, f"/admin/kb/document/{document.pk}/history/"),
        (steward, f"/admin/kb/document/{document.pk}/history/{version.history_id}/diff/"),
        (steward, f"/admin/kb/document/{document.pk}/retire/"),
        (steward, "/admin/kb/document/import/"),
        (steward, "/admin/kb/chunk/"),
        (steward, "/admin/kb/embeddingmodel/"),
        (steward, "/admin/content-gaps/"),
        (steward, "/admin/assistant/message/"),
        (steward, "/admin/assistant/supportrequest/"),
        (steward, "/admin/search-lab/"),
    ]

    for client, url in pages:
        response = client.get(url)
        assert response.status_code in {200, 404}, (url, response.status_code)
        assert response["Content-Security-Policy"] == settings.CONTENT_SECURITY_POLICY, url
        assert _blocked(response.content.decode()) == [], url


def test_error_responses_carry_the_policy_too() -> None:
    response = Client().get("/docs/a%00b")

    assert response.status_code == 400
    assert response["Content-Security-Policy"] == settings.CONTENT_SECURITY_POLICY
