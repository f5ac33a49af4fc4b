"""An answer as the API returns it: one JSON object, or the chat page's event stream (the same
``delta`` events while the answer is written, then one ``final``) with JSON in each event."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import structlog
from django.urls import reverse

from assistant.api.schemas import AnswerOut
from assistant.models import Message
from assistant.selectors import related_pages_attach
from assistant.services import AnswerDelta, AnswerReady, answer_stream
from assistant.views import STREAM_FAILED_ANSWER, sse_event
from kb.errors import one_line
from kb.runtime.availability import UNAVAILABLE_MESSAGE, is_database_outage

log = structlog.get_logger("groundwork.api")


def document_url(path: str) -> str:
    return reverse("kb:document", args=[path])


def answer_as_json(message: Message, *, audiences: Sequence[str]) -> dict[str, Any]:
    """The message as ``AnswerOut`` in JSON form."""
    return answers_as_json([message], audiences=audiences)[0]


def answers_as_json(
    messages: Sequence[Message], *, audiences: Sequence[str]
) -> list[dict[str, Any]]:
    """The messages as ``AnswerOut`` objects; related pages are those ``audiences`` may open
    (the page's rule, ``related_pages_attach``, one query for all)."""
    related_pages_attach(messages=messages, audiences=audiences)
    return [_answer(message) for message in messages]


def _answer(message: Message) -> dict[str, Any]:
    answer = AnswerOut.model_validate(
        {
            "message": message.public_id,
            "conversation": message.conversation.public_id,
            "question": message.question,
            "status": message.status,
            "answer": message.answer,
            "citations": [
                {
                    "number": citation["number"],
                    "path": citation["path"],
                    "title": citation.get("title", ""),
                    "section": citation.get("quote_section") or citation.get("section", ""),
                    "url": document_url(citation["path"]),
                    "updated_on": citation.get("updated_on"),
                    "older": bool(citation.get("older")),
                }
                for citation in message.citations
            ],
            "related_pages": [
                {"path": page.path, "title": page.title, "url": document_url(page.path)}
                for page in message.related_pages
            ],
            "degraded": message.degraded,
            "cached": message.cached,
        }
    )
    return answer.model_dump(mode="json")


def answer_event_stream(*, message: Message, audiences: Sequence[str]) -> Iterator[str]:
    """``answer_stream`` as server-sent events: ``delta`` ``{"text": …}`` as the answer is
    written, then ``final`` with the ``AnswerOut`` object. As on the page, a failure still ends
    in a ``final`` event (a failed answer, or ``{"error": …}`` with the database down)."""
    # A comment first: proxies and the client see the stream open before retrieval starts.
    yield ": answering\n\n"
    try:
        for event in answer_stream(message=message, audiences=audiences):
            if isinstance(event, AnswerDelta):
                yield sse_event("delta", json.dumps({"text": event.text}))
            elif isinstance(event, AnswerReady):
                answer = answer_as_json(event.message, audiences=audiences)
                yield sse_event("final", json.dumps(answer))
    except Exception as exc:  # a client must get a final event, as the page does
        log.exception(
            "api_answer_stream_failed", message=str(message.public_id), error=one_line(exc)
        )
        if is_database_outage(exc):
            yield sse_event("final", json.dumps({"error": UNAVAILABLE_MESSAGE}))
            return
        message.status = Message.Status.FAILED
        message.answer = STREAM_FAILED_ANSWER
        message.citations = []
        yield sse_event("final", json.dumps(answer_as_json(message, audiences=audiences)))
