"""Input PostgreSQL cannot store: a NUL character anywhere in a request is a 400 that says why,
never a 500 from the database (``DataError: ... cannot contain NUL``). A request in a charset
other than UTF-8 is a 415 that says why, with DEBUG on or off, never a 500."""

from __future__ import annotations

import pytest
from django.test import Client

from assistant.models import Feedback, Message
from kb.models import Document

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def _answered_message(client: Client) -> Message:
    """A question asked through the page (htmx: nothing is answered in the request), then
    marked answered, so feedback on it is allowed."""
    response = client.post("/ask", {"question": "How do refunds work?"}, **HTMX)
    assert response.status_code == 200
    message = Message.objects.get()
    message.status = Message.Status.ANSWERED
    message.answer = "Refunds go back to the card."
    message.save()
    return message


def test_nul_in_a_document_path_is_a_400_with_a_message() -> None:
    Document.objects.create(path="policies/refunds.md", title="Refunds", body="# Refunds\n")

    response = Client().get("/docs/policies/ref%00unds.md")

    assert response.status_code == 400
    assert "NUL" in response.content.decode()


def test_nul_in_a_feedback_comment_is_a_400_and_stores_nothing() -> None:
    client = Client()
    message = _answered_message(client)

    response = client.post(
        f"/answers/{message.public_id}/feedback",
        {"vote": "down", "comment": "wrong\x00answer"},
        **HTMX,
    )

    assert response.status_code == 400
    assert "NUL" in response.content.decode()
    assert not Feedback.objects.exists()


@pytest.mark.parametrize(
    ("method", "url", "data"),
    [
        ("get", "/docs/", {"start": "1\x00"}),
        ("get", "/", {"q": "\x00"}),
        ("post", "/ask", {"question": "refunds\x00", "conversation": "\x00"}),
        ("post", "/admin/login/", {"username": "a\x00", "password": "b"}),
    ],
)
def test_nul_in_any_field_is_refused_the_same_way(method: str, url: str, data: dict) -> None:
    response = getattr(Client(), method)(url, data)

    assert response.status_code == 400
    assert "NUL" in response.content.decode()


@pytest.mark.parametrize("debug", [True, False])
@pytest.mark.parametrize("url", ["/ask", "/docs/", "/admin/login/", "/no-such-page", "/healthz"])
def test_a_body_in_another_charset_is_a_415_on_every_path(settings, debug: bool, url: str) -> None:
    # given: with DEBUG on, the error page read the form again and raised: a 500 everywhere
    settings.DEBUG = debug
    body = "question=How do refunds work?".encode("utf-16")

    response = Client(raise_request_exception=False).generic(
        "POST", url, body, content_type="application/x-www-form-urlencoded; charset=utf-16"
    )

    assert response.status_code == 415
    assert "UTF-8" in response.content.decode()
    assert not Message.objects.exists()


@pytest.mark.parametrize("charset", ["UTF8", "utf-8", "us-ascii"])
def test_a_form_declared_in_a_utf_8_compatible_charset_is_read(charset: str) -> None:
    response = Client().generic(
        "POST",
        "/ask",
        b"question=How do refunds work?",
        content_type=f"application/x-www-form-urlencoded; charset={charset}",
        HTTP_HX_REQUEST="true",
    )

    assert response.status_code == 200
    assert Message.objects.get().question == "How do refunds work?"
