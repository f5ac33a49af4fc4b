"""Conversations and answers in the admin: read-only evidence, snapshot included."""

from __future__ import annotations

import pytest
from django.test import Client

from assistant.models import Message
from tests.support.chat import REFUND_QUESTION

pytestmark = pytest.mark.django_db


@pytest.fixture
def answered(help_center) -> Message:
    Client().post("/ask", {"question": REFUND_QUESTION})
    return Message.objects.get()


def test_answer_shows_its_question_citations_and_retrieval_snapshot(admin_client, answered):
    page = admin_client.get(f"/admin/assistant/message/{answered.pk}/change/")

    html = page.content.decode()
    assert page.status_code == 200
    assert REFUND_QUESTION in html
    assert "&quot;confidence&quot;" in html and "&quot;vector_rank&quot;" in html
    assert "&quot;path&quot;: &quot;policies/refunds.md&quot;" in html
    assert 'name="_save"' not in html  # evidence is not edited


def test_answers_are_listed_and_filtered_by_status(admin_client, answered) -> None:
    listed = admin_client.get("/admin/assistant/message/?status__exact=answered")
    filtered_out = admin_client.get("/admin/assistant/message/?status__exact=failed")

    assert REFUND_QUESTION in listed.content.decode()
    assert REFUND_QUESTION not in filtered_out.content.decode()


def test_conversation_lists_its_messages(admin_client, answered) -> None:
    page = admin_client.get(f"/admin/assistant/conversation/{answered.conversation_id}/change/")

    assert page.status_code == 200 and REFUND_QUESTION in page.content.decode()
