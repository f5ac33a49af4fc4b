"""Questions in other languages, over the tiny help center (written in English) and a real index:
with the local English-only model the asker is told so in their language, never "not in our
docs"; with a generator that writes (Claude, through the stub of its API) the prompt asks for
the answer in the question's language and the citations come through."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest
from django.test import Client

from assistant.generators.anthropic import AnthropicGenerator
from assistant.generators.extractive import ExtractiveGenerator
from assistant.models import Message
from assistant.services import NOT_IN_DOCS_ANSWER, answer_complete, conversation_start, message_ask
from tests.support.anthropic_stub import AnthropicStub
from tests.support.chat import RecordingGenerator

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("empty_cache")]

# Retrieval with all-MiniLM-L6-v2 finds nothing close for this one (confidence below 0)...
GERMAN_REFUND_QUESTION = "Kann ich für einen Monatsplan eine Rückerstattung bekommen?"
GERMAN_ENGLISH_ONLY = (
    "Ich kann unser Hilfe-Center nur nach Fragen auf Englisch durchsuchen und konnte dies daher "
    "nicht nachschlagen."
)
# ...and the rate-limit page for this one (0.56: "API", "requests" are shared words).
SPANISH_RATE_QUESTION = "¿Cuál es el límite de requests por segundo de la API?"
SPANISH_NOTICE = "Las respuestas solo están disponibles en inglés."

_clients = itertools.count()


def _ask(question: str, generator) -> Message:
    conversation = conversation_start(client_hash=f"language-client-{next(_clients)}")
    message = message_ask(conversation=conversation, question=question)
    return answer_complete(message=message, generator=generator)


@pytest.fixture
def extractive(cached_embedder) -> RecordingGenerator:
    return RecordingGenerator(ExtractiveGenerator(embedder=cached_embedder))


@pytest.fixture
def stub() -> Iterator[AnthropicStub]:
    with AnthropicStub() as running:
        yield running


def _claude(stub: AnthropicStub) -> AnthropicGenerator:
    return AnthropicGenerator(
        api_key=stub.api_key,
        model="claude-sonnet-5-5",
        max_tokens=500,
        base_url=stub.base_url,
        timeout=5.0,
        max_retries=0,
    )


def test_a_question_the_english_only_search_cannot_read_is_never_not_in_our_docs(
    help_center, extractive
) -> None:
    # when: a German question whose answer the help center has (monthly plans: 30 days)
    message = _ask(GERMAN_REFUND_QUESTION, extractive)

    # then: the asker is told, in German, that questions are read in English only
    assert message.status == Message.Status.NOT_IN_DOCS  # unserved, so content gaps list it
    assert message.answer != NOT_IN_DOCS_ANSWER
    assert message.answer.startswith(GERMAN_ENGLISH_ONLY)
    assert "help center" not in message.answer
    assert message.snapshot["language"] == {"code": "de", "searched": False, "answered": False}
    assert extractive.calls == []


def test_an_english_answer_to_a_spanish_question_says_so_in_spanish(help_center) -> None:
    # given / when: asked without JavaScript, the offline answerer configured
    client = Client()
    html = client.post("/ask", {"question": SPANISH_RATE_QUESTION}, follow=True).content.decode()

    # then: the English quote is shown, under a notice in Spanish, with its sources
    message = Message.objects.get()
    assert message.status == Message.Status.ANSWERED, message.snapshot
    assert [c["path"] for c in message.citations][:1] == ["api/rate-limits.md"]
    assert message.snapshot["language"] == {"code": "es", "searched": False, "answered": False}
    assert f'<p class="notice notice-language" lang="es">{SPANISH_NOTICE}' in html
    assert ">Fuentes</h3>" in html
    assert "requests per second" in html


def test_an_english_question_gets_no_language_notice(help_center) -> None:
    html = Client().post("/ask", {"question": "What is the API rate limit?"}, follow=True)

    page = html.content.decode()
    assert "notice-language" not in page and ">Sources</h3>" in page
    assert Message.objects.get().snapshot["language"]["code"] == "en"


def test_a_writing_generator_is_asked_for_the_questions_language_and_keeps_citations(
    help_center, stub
) -> None:
    # given: Claude (the stub of its API) answers in Spanish, citing the passage it was given
    stub.reply("La API permite 100 solicitudes por segundo por cuenta [1].")

    # when
    message = _ask(SPANISH_RATE_QUESTION, _claude(stub))

    # then: the prompt asked for Spanish, keeping the numbered citations
    prompt = stub.requests[-1].body["messages"][-1]["content"]
    assert "The question is in Spanish: write the answer in Spanish" in prompt
    assert "square brackets" in prompt
    # and the answer comes through in Spanish with its citation checked and listed
    assert message.status == Message.Status.ANSWERED
    assert message.answer == "La API permite 100 solicitudes por segundo por cuenta [1]."
    assert [c["path"] for c in message.citations] == ["api/rate-limits.md"]
    assert message.snapshot["language"] == {"code": "es", "searched": False, "answered": True}


def test_an_english_question_to_a_writing_generator_is_not_told_a_language(
    help_center, stub
) -> None:
    stub.reply("The API allows 100 requests per second [1].")

    _ask("What is the API rate limit?", _claude(stub))

    assert "The question is in" not in stub.requests[-1].body["messages"][-1]["content"]
