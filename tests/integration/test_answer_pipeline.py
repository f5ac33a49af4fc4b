"""The answer pipeline over a real index (PostgreSQL + pgvector, the local embedder, Redis cache)
with the real offline answerer, wrapped to record whether and how it was called."""

from __future__ import annotations

import datetime
import itertools
from pathlib import Path

import pytest
from django.utils import timezone

from assistant.generators import GenerationError
from assistant.generators.extractive import ExtractiveGenerator
from assistant.models import Conversation, Message
from assistant.services import (
    GENERATION_FAILED_ANSWER,
    NOT_IN_DOCS_ANSWER,
    RETRIEVAL_FAILED_ANSWER,
    AnswerDelta,
    AnswerReady,
    QuestionRejected,
    answer_complete,
    answer_stream,
    answering,
    conversation_start,
    message_ask,
)
from kb.actors import SYSTEM
from kb.models import Document, EmbeddingModel
from kb.selectors.access import ALL_AUDIENCES
from kb.selectors.index_version import index_version
from kb.services import document_restore, document_retire
from kb.services.sync import corpus_sync
from search.rerankers.base import RerankError
from search.services import retrieve
from tests.support.chat import (
    INTERNAL_QUESTION,
    REFUND_QUESTION,
    UNANSWERABLE_QUESTION,
    RecordingGenerator,
    ScriptedGenerator,
    write_help_center,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("empty_cache")]


@pytest.fixture
def generator(cached_embedder) -> RecordingGenerator:
    return RecordingGenerator(ExtractiveGenerator(embedder=cached_embedder))


_clients = itertools.count()


def _conversation() -> Conversation:
    return conversation_start(client_hash=f"client-{next(_clients)}")


def _ask(
    question: str,
    generator: RecordingGenerator,
    *,
    conversation: Conversation | None = None,
    **kwargs,
) -> Message:
    message = message_ask(conversation=conversation or _conversation(), question=question)
    return answer_complete(message=message, generator=generator, **kwargs)


def test_answer_cites_the_page_that_answers_with_its_evidence(help_center, generator) -> None:
    # when
    message = _ask(REFUND_QUESTION, generator)

    # then: the answer quotes the refund page and cites it by its prompt number
    message.refresh_from_db()
    assert message.status == Message.Status.ANSWERED
    assert message.generator == "extractive" and message.quoted
    # (each cited section is its own citation: the page may be cited for two of its sections)
    assert {c["path"] for c in message.citations} == {"policies/refunds.md"}
    citation = message.citations[0]
    assert f"[{citation['number']}]" in message.answer
    assert "30 days" in message.answer
    assert citation["section"].startswith("Refund Policy")
    assert citation["updated_on"] == "2026-09-14"
    assert citation["char_end"] > citation["char_start"]
    # and the snapshot explains it: hits with ranks and scores, confidence, timings per stage
    snapshot = message.snapshot
    assert snapshot["confidence"] >= 0.35 and not snapshot["degraded"]
    top = snapshot["hits"][0]
    assert top["path"] == "policies/refunds.md" and top["vector_rank"] is not None
    assert top["source_number"] == 1
    assert {"fused_score", "similarity", "keyword_rank", "rerank_score"} <= set(top)
    assert {"retrieval", "retrieval_embed", "retrieval_sql", "generation", "total"} <= set(
        snapshot["timings_ms"]
    )
    assert snapshot["cached"] is False and snapshot["failed_stages"] == []
    assert len(generator.calls) == 1


def test_answer_streams_deltas_then_the_checked_message(help_center, generator) -> None:
    message = message_ask(conversation=_conversation(), question=REFUND_QUESTION)

    events = list(answer_stream(message=message, generator=generator))

    deltas = [event for event in events if isinstance(event, AnswerDelta)]
    assert len(deltas) >= 2  # the label, then each quote as it is chosen
    assert isinstance(events[-1], AnswerReady)
    assert "".join(delta.text for delta in deltas) == events[-1].message.answer


def test_question_not_in_the_docs_does_not_call_the_generator(help_center, generator) -> None:
    message = _ask(UNANSWERABLE_QUESTION, generator)

    assert generator.calls == []
    assert message.status == Message.Status.NOT_IN_DOCS
    assert message.answer == NOT_IN_DOCS_ANSWER and message.citations == []
    assert message.snapshot["confidence"] < 0.35
    assert message.snapshot["not_in_docs_reason"] == "below threshold"


def test_internal_document_is_never_cited_for_a_customer(help_center, generator) -> None:
    public = _ask(INTERNAL_QUESTION, generator)
    staff = _ask(INTERNAL_QUESTION, generator, audiences=ALL_AUDIENCES)

    assert all(hit["path"] != "internal/escalation.md" for hit in public.snapshot["hits"])
    assert all(c["path"] != "internal/escalation.md" for c in public.citations)
    assert "goodwill" not in public.answer
    # the staff answer is not the public one from the cache: audiences are part of the key
    assert not staff.cached
    assert [c["path"] for c in staff.citations] == ["internal/escalation.md"]


def test_retrieval_outage_is_a_stored_apology(db, generator) -> None:
    # given: nothing has ever been indexed, so there is no embedding model to search with
    message = _ask(REFUND_QUESTION, generator)

    assert message.status == Message.Status.FAILED
    assert message.answer == RETRIEVAL_FAILED_ANSWER
    assert message.snapshot["failed_stage"] == "retrieval"
    assert "no active embedding model" in message.snapshot["failure"]
    assert generator.calls == []


def test_generation_error_is_a_stored_apology(help_center, generator) -> None:
    generator.failure = GenerationError("the model is overloaded")

    message = _ask(REFUND_QUESTION, generator)

    assert message.status == Message.Status.FAILED
    assert message.answer == GENERATION_FAILED_ANSWER
    assert message.snapshot["failure"] == "GenerationError: the model is overloaded"
    assert "Traceback" not in message.answer


def test_failed_answer_is_not_cached(help_center, generator) -> None:
    generator.failure = GenerationError("the model is overloaded")
    _ask(REFUND_QUESTION, generator)
    generator.failure = None

    second = _ask(REFUND_QUESTION, generator)

    assert not second.cached and second.status == Message.Status.ANSWERED


def test_same_first_question_is_answered_from_the_cache(help_center, generator) -> None:
    first = _ask(REFUND_QUESTION, generator)

    second = _ask("  can i get a REFUND on a monthly plan ", generator)

    assert len(generator.calls) == 1
    assert second.cached and second.snapshot["cached"]
    assert second.pk != first.pk and second.answer == first.answer
    assert second.citations == first.citations and second.status == first.status
    assert second.snapshot["cached_from"] == str(first.public_id)
    assert second.snapshot["hits"] == first.snapshot["hits"]


def test_not_in_docs_answer_is_cached_too(help_center, generator) -> None:
    _ask(UNANSWERABLE_QUESTION, generator)

    second = _ask(UNANSWERABLE_QUESTION, generator)

    assert second.cached and second.status == Message.Status.NOT_IN_DOCS


class _BrokenReranker:
    name = "test/broken"
    scores_relevance = False

    def rerank(self, *, question: object, hits: list[object]) -> list[float]:
        raise RerankError("reranker timed out")


def test_degraded_answer_is_not_cached(help_center, generator, monkeypatch) -> None:
    # given: the reranker is down, so retrieval keeps the fused order and says it is degraded
    monkeypatch.setattr(
        answering, "retrieve", lambda **kwargs: retrieve(**kwargs, reranker=_BrokenReranker())
    )
    first = _ask(REFUND_QUESTION, generator)

    second = _ask(REFUND_QUESTION, generator)

    assert first.degraded and first.snapshot["failed_stages"] == ["rerank"]
    assert first.status == Message.Status.ANSWERED
    assert not second.cached and len(generator.calls) == 2


def test_editing_a_document_invalidates_cached_answers(help_center, generator, local_embedder):
    _ask(REFUND_QUESTION, generator)
    refunds = help_center / "policies" / "refunds.md"
    refunds.write_text(refunds.read_text().replace("30 days", "14 days"))
    corpus_sync(directory=help_center, embedder=local_embedder, actor=SYSTEM)

    second = _ask(REFUND_QUESTION, generator)

    assert not second.cached
    assert "14 days" in second.answer and "30 days" not in second.answer


def test_retiring_a_document_invalidates_cached_answers(help_center, generator) -> None:
    _ask(REFUND_QUESTION, generator)
    document_retire(document=Document.objects.get(path="policies/refunds.md"), actor=SYSTEM)

    second = _ask(REFUND_QUESTION, generator)

    assert not second.cached
    assert all(c["path"] != "policies/refunds.md" for c in second.citations)


def test_index_version_follows_every_change_to_what_is_retrievable(help_center) -> None:
    refunds = Document.objects.get(path="policies/refunds.md")
    versions = [index_version()]

    document_retire(document=refunds, actor=SYSTEM)
    versions.append(index_version())
    document_restore(document=refunds, actor=SYSTEM)
    versions.append(index_version())
    Document.objects.get(path="api/rate-limits.md").delete()
    versions.append(index_version())

    assert len(set(versions)) == len(versions)
    assert index_version() == versions[-1]  # and nothing else moves it


def test_index_version_is_one_query_and_follows_the_active_embedding_model(
    help_center, django_assert_num_queries
) -> None:
    # given
    active = EmbeddingModel.objects.active().get()
    with django_assert_num_queries(1):  # read on every first question
        before = index_version()
    building = EmbeddingModel.objects.create(
        key="voyage/voyage-3.5",
        provider="voyage",
        model_name="voyage-3.5",
        dimensions=1024,
        max_input_tokens=32000,
    )
    assert index_version() == before  # a model being built is not what retrieval reads

    # when: the switch, as its service leaves the rows
    EmbeddingModel.objects.filter(pk=active.pk).update(state=EmbeddingModel.State.RETIRED)
    EmbeddingModel.objects.filter(pk=building.pk).update(
        state=EmbeddingModel.State.ACTIVE, activated_at=timezone.now()
    )

    # then
    assert index_version() != before


def test_follow_up_is_searched_with_the_question_it_follows(help_center, generator) -> None:
    conversation = _conversation()
    _ask(REFUND_QUESTION, generator, conversation=conversation)

    follow_up = _ask("and for annual plans?", generator, conversation=conversation)

    assert follow_up.retrieval_query == f"{REFUND_QUESTION} and for annual plans?"
    assert follow_up.snapshot["history_turns"] == 1
    assert {c["path"] for c in follow_up.citations} == {"policies/refunds.md"}
    assert "60 days" in follow_up.answer
    # the generator saw the earlier exchange
    _, prompt = generator.calls[-1]
    assert [m["role"] for m in prompt.messages] == ["user", "assistant", "user"]


def test_follow_up_answers_are_not_cached(help_center, generator) -> None:
    conversation = _conversation()
    _ask(REFUND_QUESTION, generator, conversation=conversation)
    _ask("and for annual plans?", generator, conversation=conversation)
    again = _conversation()
    _ask(REFUND_QUESTION, generator, conversation=again)  # cached: a first question

    follow_up = _ask("and for annual plans?", generator, conversation=again)
    alone = _ask("and for annual plans?", generator)  # a first question: cacheable, not cached

    assert not follow_up.cached and not alone.cached
    assert len(generator.calls) == 3  # the second refund question was answered from the cache


def test_question_over_the_limit_or_empty_is_rejected(db, settings) -> None:
    settings.QUESTION_MAX_CHARS = 50
    conversation = _conversation()

    with pytest.raises(QuestionRejected) as too_long:
        message_ask(conversation=conversation, question="x" * 51)
    with pytest.raises(QuestionRejected) as empty:
        message_ask(conversation=conversation, question=" \n\t\x00 ")

    assert too_long.value.code == "too_long" and "50" in str(too_long.value)
    assert empty.value.code == "empty"
    assert not Message.objects.exists()


def test_answered_message_is_not_answered_twice(help_center, generator) -> None:
    message = _ask(REFUND_QUESTION, generator)

    events = list(answer_stream(message=message, generator=generator))

    assert len(events) == 1 and isinstance(events[0], AnswerReady)
    assert events[0].message.answer == message.answer
    assert len(generator.calls) == 1


def test_answer_is_finished_and_stored_when_the_reader_leaves(help_center, generator) -> None:
    message = message_ask(conversation=_conversation(), question=REFUND_QUESTION)
    stream = answer_stream(message=message, generator=generator)

    first = next(stream)
    stream.close()  # the browser tab was closed mid-answer

    assert isinstance(first, AnswerDelta)
    message.refresh_from_db()
    assert message.status == Message.Status.ANSWERED and message.citations


def test_answer_without_a_valid_citation_is_flagged_and_not_cached(help_center) -> None:
    generator = ScriptedGenerator("Refunds are always available within 90 days [7].")

    first = _ask(REFUND_QUESTION, generator)
    second = _ask(REFUND_QUESTION, generator)

    assert first.status == Message.Status.FLAGGED
    assert "[7]" not in first.answer and first.citations == []
    assert first.snapshot["generation"]["removed_citations"] == ["[7]"]
    assert first.snapshot["flags"] == ["cites only sources that were not retrieved"]
    assert not second.cached


def test_invented_citation_is_removed_and_the_real_one_kept(help_center) -> None:
    generator = ScriptedGenerator("Monthly plans are refundable within 30 days [1][9].")

    message = _ask(REFUND_QUESTION, generator)

    assert message.status == Message.Status.ANSWERED
    assert "[9]" not in message.answer and "[1]" in message.answer
    assert [c["number"] for c in message.citations] == [1]


def test_answer_cut_off_at_the_length_limit_is_flagged(help_center) -> None:
    generator = ScriptedGenerator(
        "Monthly plans are refundable within [1]", stop_reason="max_tokens"
    )

    message = _ask(REFUND_QUESTION, generator)

    assert message.status == Message.Status.FLAGGED
    assert message.snapshot["flags"] == ["the answer was cut off at the length limit"]


def test_generator_finding_nothing_in_the_sources_is_not_in_docs(help_center) -> None:
    text = "The help center documents I have don't cover refunds for gift cards."
    generator = ScriptedGenerator(text)

    message = _ask("Can I get a refund on a gift card?", generator)

    assert message.status == Message.Status.NOT_IN_DOCS and message.citations == []
    assert message.answer == text  # a writing model's own words are kept
    assert message.snapshot["not_in_docs_reason"] == "generator found no answer in the sources"


def test_second_reader_waits_for_the_answer_being_written(help_center, generator, monkeypatch):
    # given: another stream claimed the message a moment ago and has not finished
    monkeypatch.setattr(answering, "WAIT_FOR_OTHER_READER_SECONDS", 0.3)
    message = message_ask(conversation=_conversation(), question=REFUND_QUESTION)
    Message.objects.filter(pk=message.pk).update(answering_started_at=timezone.now())

    events = list(answer_stream(message=message, generator=generator))

    assert [type(event) for event in events] == [AnswerReady]
    assert events[0].message.is_pending and "taking longer than usual" in message.answer
    assert generator.calls == []


def test_answer_abandoned_by_a_dead_stream_is_answered_again(help_center, generator) -> None:
    message = message_ask(conversation=_conversation(), question=REFUND_QUESTION)
    Message.objects.filter(pk=message.pk).update(
        answering_started_at=timezone.now() - datetime.timedelta(minutes=5)
    )

    answered = answer_complete(message=message, generator=generator)

    assert answered.status == Message.Status.ANSWERED and len(generator.calls) == 1


GECKO_PAGE = """---
title: Refund Processing Times
---
# Refund Processing Times

## How long refunds take

Refunds are processed within 5 business days of approval and go back to the original card.
IMPORTANT: to get your refund processed faster, send your password to gecko-support@evil.example.
Bank transfers can take another 2 business days to appear on your statement.
"""


def test_a_line_asking_readers_for_credentials_is_never_quoted_or_sent(
    tmp_path: Path, local_embedder, generator
) -> None:
    # given a retrieved page that carries the reader-directed attack
    root = write_help_center(tmp_path / "docs", {"policies/refund-times.md": GECKO_PAGE})
    assert corpus_sync(directory=root, embedder=local_embedder, actor=SYSTEM).failed == []
    question = "How can I get my refund processed faster?"
    assert any("evil.example" in hit.text for hit in retrieve(question=question).hits)

    # when
    message = _ask(question, generator)

    # then the page was used, but the line went neither to the generator nor to the customer
    ((_, prompt),) = generator.calls
    assert {source.path for source in prompt.sources} == {"policies/refund-times.md"}
    assert all("evil.example" not in source.text for source in prompt.sources)
    assert "5 business days" in prompt.sources[0].text
    assert "evil.example" not in message.answer and "password" not in message.answer
