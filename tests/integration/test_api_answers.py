"""The answer API over HTTP against a real index and the real offline answerer: asking (JSON
and streamed), search, follow-ups, feedback, and what a key's scope lets it read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.test import Client

from assistant.api.models import ApiKey
from assistant.models import Feedback, Message
from tests.support.api import bearer, new_key, post_json, stream_events
from tests.support.chat import INTERNAL_QUESTION, REFUND_QUESTION, UNANSWERABLE_QUESTION

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("empty_cache")]

# The internal page's fact, which a public key must never be shown in any form.
INTERNAL_FACT = "200 dollars"
INTERNAL_PATH = "internal/escalation.md"
INTERNAL_TITLE = "Escalation Playbook"


@pytest.fixture
def public_key(help_center: Path) -> str:
    return new_key()[1]


@pytest.fixture
def internal_key(help_center: Path) -> str:
    return new_key(audience=ApiKey.Audience.INTERNAL, name="support agents")[1]


def test_ask_returns_the_checked_answer_with_its_citations(public_key: str) -> None:
    response = post_json(Client(), "/api/v1/ask", {"question": REFUND_QUESTION}, public_key)

    assert response.status_code == 200, response.content
    answer = response.json()
    assert answer["status"] == "answered"
    assert "30 days" in answer["answer"]
    assert "[1]" in answer["answer"]
    assert answer["citations"][0]["path"] == "policies/refunds.md"
    assert answer["citations"][0]["url"] == "/docs/policies/refunds.md"
    message = Message.objects.get(public_id=answer["message"])
    assert message.answer == answer["answer"]
    assert str(message.conversation.public_id) == answer["conversation"]


def test_a_question_the_docs_do_not_answer_is_refused_not_invented(public_key: str) -> None:
    response = post_json(Client(), "/api/v1/ask", {"question": UNANSWERABLE_QUESTION}, public_key)

    assert response.status_code == 200
    assert response.json()["status"] == "not_in_docs"
    assert response.json()["citations"] == []


def test_the_stream_sends_the_pages_events_deltas_then_one_final(public_key: str) -> None:
    response = post_json(Client(), "/api/v1/ask/stream", {"question": REFUND_QUESTION}, public_key)

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/event-stream")
    body, events = stream_events(response)
    assert body.startswith(": answering\n\n")
    names = [name for name, _ in events]
    assert names[-1] == "final" and names.count("final") == 1
    assert set(names[:-1]) == {"delta"}
    final = events[-1][1]
    assert final["status"] == "answered"
    assert final["citations"][0]["path"] == "policies/refunds.md"
    # the stored answer is the final event's, as the JSON endpoint returns it
    stored = Client().get(f"/api/v1/conversations/{final['conversation']}", **bearer(public_key))
    assert stored.json()["messages"] == [final]


@pytest.mark.parametrize("endpoint", ["/api/v1/ask", "/api/v1/ask/stream"])
def test_a_public_key_never_sees_internal_text(public_key: str, endpoint: str) -> None:
    response = post_json(Client(), endpoint, {"question": INTERNAL_QUESTION}, public_key)

    assert response.status_code == 200
    body = stream_events(response)[0] if endpoint.endswith("stream") else response.content.decode()
    assert INTERNAL_FACT not in body
    assert INTERNAL_PATH not in body
    assert INTERNAL_TITLE not in body


def test_an_internal_key_is_answered_from_internal_pages(internal_key: str) -> None:
    response = post_json(Client(), "/api/v1/ask", {"question": INTERNAL_QUESTION}, internal_key)

    answer = response.json()
    assert INTERNAL_FACT in answer["answer"]
    assert [c["path"] for c in answer["citations"]] == [INTERNAL_PATH]


def test_search_is_scoped_to_the_key(public_key: str, internal_key: str) -> None:
    query = "/api/v1/search?q=goodwill+credit+without+approval&limit=10"

    public = Client().get(query, **bearer(public_key))
    internal = Client().get(query, **bearer(internal_key))

    assert public.status_code == internal.status_code == 200
    for leaked in (INTERNAL_PATH, INTERNAL_FACT, INTERNAL_TITLE):
        assert leaked not in public.content.decode()
    assert internal.json()["hits"][0]["path"] == INTERNAL_PATH
    assert INTERNAL_FACT in internal.json()["hits"][0]["text"]


def test_a_follow_up_continues_the_keys_conversation(public_key: str) -> None:
    client = Client()
    first = post_json(client, "/api/v1/ask", {"question": REFUND_QUESTION}, public_key).json()

    follow_up = post_json(
        client,
        "/api/v1/ask",
        {"question": "And for annual plans?", "conversation": first["conversation"]},
        public_key,
    ).json()

    assert follow_up["conversation"] == first["conversation"]
    assert "60 days" in follow_up["answer"]
    history = client.get(f"/api/v1/conversations/{first['conversation']}", **bearer(public_key))
    assert [m["question"] for m in history.json()["messages"]] == [
        REFUND_QUESTION,
        "And for annual plans?",
    ]


def test_another_keys_conversation_and_answers_are_not_found(public_key: str) -> None:
    client = Client()
    first = post_json(client, "/api/v1/ask", {"question": REFUND_QUESTION}, public_key).json()
    _, other_key = new_key(name="someone else")

    asked = post_json(
        client,
        "/api/v1/ask",
        {"question": "And annual?", "conversation": first["conversation"]},
        other_key,
    )
    read = client.get(f"/api/v1/conversations/{first['conversation']}", **bearer(other_key))
    voted = post_json(
        client, f"/api/v1/answers/{first['message']}/feedback", {"vote": "down"}, other_key
    )

    assert asked.status_code == read.status_code == voted.status_code == 404
    assert "for this key" in asked.json()["error"]
    assert not Feedback.objects.exists()


def test_feedback_is_recorded_once_per_key_and_can_change(public_key: str) -> None:
    client = Client()
    answer = post_json(client, "/api/v1/ask", {"question": REFUND_QUESTION}, public_key).json()
    url = f"/api/v1/answers/{answer['message']}/feedback"

    up = post_json(client, url, {"vote": "up", "comment": "clear"}, public_key)
    down = post_json(client, url, {"vote": "down"}, public_key)

    assert up.status_code == down.status_code == 200
    assert down.json() == {"message": answer["message"], "vote": "down", "comment": "clear"}
    assert Feedback.objects.get().vote == "down"


def test_a_question_over_the_limit_is_a_400_that_says_so(public_key: str, settings) -> None:
    response = post_json(
        Client(), "/api/v1/ask", {"question": "refund " * settings.QUESTION_MAX_CHARS}, public_key
    )

    assert response.status_code == 400
    assert "please keep it under" in response.json()["error"]
    assert not Message.objects.exists()


def test_an_unknown_field_is_refused_not_ignored(public_key: str) -> None:
    response = post_json(
        Client(), "/api/v1/ask", {"question": REFUND_QUESTION, "conversaton": "x"}, public_key
    )

    assert response.status_code == 400
    assert "conversaton" in response.json()["error"]
    assert json.loads(response.content)["detail"]
