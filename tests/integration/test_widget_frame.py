"""The widget's frame, /embed/<site_key>/: the chat, framable by exactly its site key's origins;
every other page still framable by none; an unknown or switched-off key, or a framing page off
the list, refused with a page that says why. (The browser side: tests/e2e/test_widget.py.)"""

from __future__ import annotations

import re

import pytest
from django.test import Client

from assistant.models import Message
from assistant.widget.models import EmbedSite
from tests.support.chat import REFUND_QUESTION

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("empty_cache")]

HTMX = {"HTTP_HX_REQUEST": "true"}
SHOP = "https://shop.example.com"


def _directives(response) -> dict[str, str]:
    policy = response["Content-Security-Policy"]
    return dict(part.strip().split(" ", 1) for part in policy.split(";"))


def _iframe_load(*, referer: str, site: str = "cross-site") -> dict[str, str]:
    return {"HTTP_SEC_FETCH_DEST": "iframe", "HTTP_SEC_FETCH_SITE": site, "HTTP_REFERER": referer}


@pytest.fixture
def shop() -> EmbedSite:
    return EmbedSite.objects.create(
        name="Shop", allowed_origins=f"{SHOP}\nhttp://127.0.0.1:8001/\n"
    )


def test_the_frame_may_be_framed_by_its_site_keys_origins_only(shop: EmbedSite) -> None:
    response = Client().get(f"/embed/{shop.site_key}/")

    assert response.status_code == 200
    directives = _directives(response)
    assert directives["frame-ancestors"] == f"{SHOP} http://127.0.0.1:8001"
    assert directives["script-src"] == "'self'"  # the rest of the site's policy, unchanged
    assert directives["default-src"] == "'self'"
    assert "X-Frame-Options" not in response  # it has no list; frame-ancestors decides
    assert response["Cache-Control"].startswith("max-age=0")


def test_every_other_page_stays_unframable(shop: EmbedSite) -> None:
    for path in ["/", "/docs/", "/support", f"/embed/{shop.site_key}/new-conversation"]:
        response = Client().get(path)
        assert _directives(response)["frame-ancestors"] == "'none'", path
        assert response["X-Frame-Options"] == "DENY", path


def test_the_frame_is_the_chat_with_the_frames_own_new_conversation(shop: EmbedSite) -> None:
    html = Client().get(f"/embed/{shop.site_key}/").content.decode()

    assert 'id="ask-form"' in html
    assert 'hx-post="/ask"' in html
    assert f'action="/embed/{shop.site_key}/new-conversation"' in html
    assert 'class="site-header"' not in html  # compact: the panel is the frame
    for script in ["htmx-2.0.11.min.js", "chat.js", "widget_frame.js"]:
        assert re.search(rf'<script src="/static/assistant/(vendor/)?{re.escape(script)}"', html)


def test_asking_in_the_frame_continues_there_and_a_new_conversation_returns_to_it(
    shop: EmbedSite, help_center
) -> None:
    client = Client()
    client.get(f"/embed/{shop.site_key}/")
    client.post("/ask", {"question": REFUND_QUESTION}, **HTMX)
    message = Message.objects.get()

    again = client.get(f"/embed/{shop.site_key}/").content.decode()
    assert f'id="message-{message.public_id}"' in again  # a reopened panel shows the turn

    response = client.post(f"/embed/{shop.site_key}/new-conversation")
    assert response.status_code == 302
    assert response["Location"] == f"/embed/{shop.site_key}/"
    assert (
        f'id="message-{message.public_id}"' not in client.get(response["Location"]).content.decode()
    )


def test_an_unknown_key_is_refused_with_a_page_that_says_why() -> None:
    response = Client().get("/embed/site_no-such-key/")

    assert response.status_code == 404
    assert "No help widget has this site key" in response.content.decode()
    assert _directives(response)["frame-ancestors"] == "'none'"
    assert response["X-Frame-Options"] == "DENY"


@pytest.mark.parametrize("change", [{"active": False}, {"allowed_origins": ""}])
def test_a_site_switched_off_or_with_no_origins_is_refused(shop: EmbedSite, change) -> None:
    EmbedSite.objects.filter(pk=shop.pk).update(**change)

    response = Client().get(f"/embed/{shop.site_key}/")

    assert response.status_code == 403
    assert "switched off" in response.content.decode()
    assert _directives(response)["frame-ancestors"] == "'none'"


def test_a_framing_page_off_the_list_is_refused_naming_its_origin(shop: EmbedSite) -> None:
    refused = Client().get(
        f"/embed/{shop.site_key}/", **_iframe_load(referer="https://evil.example/page?x=1")
    )
    assert refused.status_code == 403
    assert "(https://evil.example)" in refused.content.decode()
    assert _directives(refused)["frame-ancestors"] == "'none'"
    assert refused["X-Frame-Options"] == "DENY"

    allowed = Client().get(f"/embed/{shop.site_key}/", **_iframe_load(referer=f"{SHOP}/cart"))
    assert allowed.status_code == 200


def test_a_navigation_inside_the_frame_or_a_load_without_referer_is_left_to_the_browser(
    shop: EmbedSite,
) -> None:
    inside = _iframe_load(referer=f"http://testserver/embed/{shop.site_key}/", site="same-origin")
    assert Client().get(f"/embed/{shop.site_key}/", **inside).status_code == 200
    no_referer = {"HTTP_SEC_FETCH_DEST": "iframe", "HTTP_SEC_FETCH_SITE": "cross-site"}
    response = Client().get(f"/embed/{shop.site_key}/", **no_referer)
    assert response.status_code == 200
    assert "https://evil" not in _directives(response)["frame-ancestors"]


def test_odd_keys_are_refused_not_errors(db) -> None:
    for key in ["x" * 500, "%E2%80%AE", "..", "site_'\"<>"]:
        response = Client().get(f"/embed/{key}/")
        assert response.status_code == 404, key
