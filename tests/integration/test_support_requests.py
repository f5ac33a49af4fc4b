"""The "Contact support" form over HTTP: with and without JavaScript, its errors, its rate
limit, the conversation it attaches, SUPPORT_CONTACT_URL's override, and the admin's view."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from assistant.models import Message, SupportRequest
from tests.support.chat import REFUND_QUESTION

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("empty_cache")]

HTMX = {"HTTP_HX_REQUEST": "true"}
GOOD = {"email": "ana@example.com", "message": "My refund has not arrived after two weeks."}


def test_the_form_page_works_without_javascript_and_confirms_after_sending() -> None:
    client = Client()

    page = client.get("/support")
    sent = client.post("/support", GOOD, follow=True)

    assert page.status_code == 200
    html = page.content.decode()
    assert 'action="/support"' in html and 'name="email"' in html and 'name="message"' in html
    assert sent.redirect_chain == [("/support", 302)]
    assert "Thanks, your request was sent." in sent.content.decode()
    request = SupportRequest.objects.get()
    assert (request.email, request.message, request.conversation) == (
        GOOD["email"], GOOD["message"], None,
    )  # fmt: skip
    assert request.status == SupportRequest.Status.NEW
    # the confirmation is shown once: a reload is the empty form again
    assert "Thanks" not in client.get("/support").content.decode()


@pytest.mark.parametrize(
    ("fields", "field", "error"),
    [
        ({"email": "", "message": "Help"}, "email", "Please give the email address"),
        ({"email": "not-an-address", "message": "Help"}, "email", "look like an email address"),
        ({"email": "ana@example.com", "message": " \n\x01 "}, "message", "Please tell us what"),
        ({"email": "ana@example.com", "message": "x" * 5001}, "message", "5,001 characters long"),
    ],
)
def test_bad_input_is_refused_per_field_and_keeps_what_was_typed(fields, field, error) -> None:
    for extra in ({}, HTMX):
        response = Client().post("/support", fields, **extra)

        html = response.content.decode()
        assert response.status_code == 400
        assert error in html
        assert f'id="support-{field}-error-' in html and 'aria-invalid="true"' in html
        assert fields["message"][:50].strip("\x01 \n") in html
    assert SupportRequest.objects.count() == 0


def test_sending_too_many_requests_is_refused_with_a_wait(settings) -> None:
    # given
    settings.SUPPORT_RATE_LIMIT_PER_MINUTE = 2
    client = Client()

    # when: a typo first (not counted), then three valid requests in one minute
    client.post("/support", {**GOOD, "email": "typo"})
    statuses = [client.post("/support", GOOD, **HTMX).status_code for _ in range(3)]

    # then
    assert statuses == [200, 200, 429]
    refused = client.post("/support", GOOD, **HTMX)
    assert "sent several requests in a short time" in refused.content.decode()
    assert int(refused["Retry-After"]) >= 1
    assert SupportRequest.objects.count() == 2
    # and asking questions has an allowance of its own
    assert Client().post("/support", GOOD).status_code == 302


def test_a_request_from_the_chat_attaches_that_conversation_for_staff(help_center) -> None:
    # given: a customer who asked a question (without JavaScript), then opens the form from it
    client = Client()
    client.post("/ask", {"question": REFUND_QUESTION})
    message = Message.objects.get()
    conversation = message.conversation
    chat = client.get("/").content.decode()
    assert f'hx-get="/support?conversation={conversation.public_id}"' in chat

    # when: the form opens in the page (htmx) and is sent
    form = client.get(f"/support?conversation={conversation.public_id}", **HTMX)
    sent = client.post("/support", {**GOOD, "conversation": str(conversation.public_id)}, **HTMX)

    # then: a fragment, not a page; the conversation named and attached
    assert "<html" not in form.content.decode()
    assert "Your conversation is attached (1 question)" in form.content.decode()
    assert "Thanks, your request was sent." in sent.content.decode()
    request = SupportRequest.objects.get()
    assert request.conversation == conversation

    # and staff read the request with the conversation's questions and answers
    staff = Client()
    staff.force_login(User.objects.create_superuser("lead", "lead@example.com", "x"))
    listing = staff.get("/admin/assistant/supportrequest/").content.decode()
    detail = staff.get(f"/admin/assistant/supportrequest/{request.pk}/change/").content.decode()
    assert GOOD["email"] in listing
    assert REFUND_QUESTION in detail and "30 days" in detail and GOOD["message"] in detail


def test_someone_elses_conversation_is_never_attached(help_center) -> None:
    owner = Client()
    owner.post("/ask", {"question": REFUND_QUESTION})
    conversation = Message.objects.get().conversation

    stranger = Client()
    form = stranger.get(f"/support?conversation={conversation.public_id}", **HTMX)
    stranger.post("/support", {**GOOD, "conversation": str(conversation.public_id)})

    assert "attached" not in form.content.decode()
    assert SupportRequest.objects.get().conversation is None


def test_support_contact_url_replaces_the_form(settings) -> None:
    settings.SUPPORT_CONTACT_URL = "https://desk.example.com/new"

    response = Client().get("/support")
    posted = Client().post("/support", GOOD)

    assert response.status_code == 302 and response["Location"] == "https://desk.example.com/new"
    assert posted.status_code == 302 and SupportRequest.objects.count() == 0
