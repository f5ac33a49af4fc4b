"""The answer step reads more sections of the pages its passages come from
(``search.services.with_page_sections``): a question is often matched by one section of the page
that answers it while another section states the answer."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from django.db import DatabaseError

from assistant.generators.anthropic import AnthropicGenerator
from assistant.generators.extractive import ExtractiveGenerator
from assistant.models import Message
from assistant.services import answer_complete, conversation_start, message_ask
from kb.actors import SYSTEM
from kb.models import Chunk
from kb.services.sync import corpus_sync
from search.services import retrieve, with_page_sections
from tests.support.anthropic_stub import AnthropicStub
from tests.support.chat import RecordingGenerator

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("empty_cache")]

VOLUMES = """# Volumes

## Overview

A volume is a persistent disk that keeps an app's files when its machine restarts.

## Extend a volume

To make a volume bigger, run fly volume extend with the new size. A volume's disk can never be
made smaller again.

## Snapshots

Daily snapshots of each volume are kept for five days.

## Regions

Machines run in the region you choose when you deploy.
"""

BILLING = """# Billing

## Invoices

Invoices are sent on the first day of each month.

## Disk pricing

Each volume's disk is billed per gigabyte per month.

## Credits

No credit is made for a disk you no longer need, however small.
"""

QUESTION = "Can my volume's disk be made smaller?"


@pytest.fixture
def help_center(tmp_path: Path, cached_embedder) -> None:
    (tmp_path / "volumes.md").write_text(VOLUMES)
    (tmp_path / "billing.md").write_text(BILLING)
    corpus_sync(directory=tmp_path, embedder=cached_embedder, actor=SYSTEM)


def test_the_first_pages_other_sections_holding_the_question_words_follow_the_hits(
    help_center,
) -> None:
    # given: one passage retrieved
    result = retrieve(question=QUESTION, limit=1)
    (hit,) = result.hits

    # when
    passages = with_page_sections(result, pages=1, per_page=2)

    # then: the hit first, then up to two other sections of its page, those holding the most of
    # the question's IDF; a section sharing no word with the question ("Regions") never
    added = passages[1:]
    assert passages[0] == hit and not hit.page_section
    assert 1 <= len(added) <= 2
    assert all(passage.page_section and passage.path == hit.path for passage in added)
    assert all(passage.chunk_id != hit.chunk_id for passage in added)
    assert all(passage.vector_rank is None and passage.keyword_rank is None for passage in added)
    assert "Volumes > Regions" not in {passage.heading_path for passage in added}
    assert len({passage.chunk_id for passage in passages}) == len(passages)


def test_a_passage_knows_its_place_among_its_page_s_chunks(help_center) -> None:
    # given
    result = retrieve(question=QUESTION, limit=4)

    # when
    passages = with_page_sections(result, pages=2, per_page=2)

    # then: each retrieved hit and each section read beside them carries its chunk's ordinal,
    # by which the answer step reads a section cut into chunks as one text
    ordinals = dict(
        Chunk.objects.filter(id__in=[p.chunk_id for p in passages]).values_list("id", "ordinal")
    )
    assert any(passage.page_section for passage in passages)
    assert {passage.chunk_id: passage.ordinal for passage in passages} == ordinals
    assert all(passage.evidence()["ordinal"] == passage.ordinal for passage in passages)


def test_only_the_first_pages_are_read_and_each_at_most_per_page(help_center) -> None:
    # given: one retrieved passage of each of the two pages, so each has sections left to read
    found = retrieve(question=QUESTION, limit=10)
    firsts = {}
    for hit in found.hits:
        firsts.setdefault(hit.path, hit)
    result = dataclasses.replace(found, hits=list(firsts.values()))
    first_page, second_page = result.hits[0].path, result.hits[1].path

    # when
    one_page = with_page_sections(result, pages=1, per_page=1)
    two_pages = with_page_sections(result, pages=2, per_page=1)

    # then: one section of the first page; with two pages, one more, of the second
    assert one_page[:2] == result.hits and two_pages[:2] == result.hits
    assert [passage.path for passage in one_page[2:]] == [first_page]
    assert two_pages[2] == one_page[2]
    assert [passage.path for passage in two_pages[3:]] == [second_page]


def test_nothing_is_added_without_question_words_or_pages(help_center) -> None:
    result = retrieve(question=QUESTION, limit=1)
    result.term_idfs = {}

    assert with_page_sections(result) == result.hits
    assert with_page_sections(result, per_page=0) == result.hits


def test_a_failing_read_costs_only_the_sections(help_center, monkeypatch) -> None:
    def broken(**kwargs):
        raise DatabaseError("relation kb_chunk is locked")

    monkeypatch.setattr("search.services.page_sections", broken)
    result = retrieve(question=QUESTION, limit=1)

    assert with_page_sections(result) == result.hits


def test_the_answer_can_quote_a_section_retrieval_did_not_bring(
    help_center, cached_embedder, monkeypatch
) -> None:
    # given: the answer step is handed one retrieved passage
    monkeypatch.setattr("assistant.services.answering.ANSWER_PASSAGES", 1)
    generator = RecordingGenerator(ExtractiveGenerator(embedder=cached_embedder))
    conversation = conversation_start(client_hash="page-sections")

    # when
    message = answer_complete(
        message=message_ask(conversation=conversation, question=QUESTION), generator=generator
    )

    # then: the page's other sections were offered, recorded as such, and counted as seen
    hits = message.snapshot["hits"]
    assert [hit["page_section"] for hit in hits][:1] == [False]
    assert any(hit["page_section"] for hit in hits)
    assert message.snapshot["prompt_sources"] == len(hits)
    (_, prompt), *_ = generator.calls
    offered = {source.section for source in prompt.sources}
    assert "Volumes > Extend a volume" in offered
    assert "never be made smaller" in message.answer


def test_a_writing_model_is_sent_the_sections_and_may_cite_them(help_center, monkeypatch) -> None:
    # given: Claude behind the local Messages API stub, handed one retrieved passage
    monkeypatch.setattr("assistant.services.answering.ANSWER_PASSAGES", 1)
    with AnthropicStub() as stub:
        generator = AnthropicGenerator(
            api_key=stub.api_key, model="claude-test", max_tokens=500, base_url=stub.base_url
        )
        conversation = conversation_start(client_hash="page-sections-claude")
        message = message_ask(conversation=conversation, question=QUESTION)
        extend = next(
            number
            for number, hit in enumerate(
                with_page_sections(retrieve(question=QUESTION, limit=1)), start=1
            )
            if hit.heading_path == "Volumes > Extend a volume"
        )
        stub.reply(f"No: a volume's disk can never be made smaller again [{extend}].")

        # when
        message = answer_complete(message=message, generator=generator)

    # then: the section was in what the model read, and its citation stands
    (request,) = stub.requests
    assert "never be made smaller again" in request.body["messages"][-1]["content"]
    assert message.status == Message.Status.ANSWERED
    assert [citation["section"] for citation in message.citations] == ["Volumes > Extend a volume"]
