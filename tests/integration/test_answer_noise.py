"""What is shown around an offline answer on pages of the sample help center: only the sources
it quotes, and the "Older page" warning only where two cited passages contradict."""

from __future__ import annotations

import itertools
import re

import pytest

from assistant.generators.extractive import ExtractiveGenerator
from assistant.models import Message
from assistant.services import answer_complete, conversation_start, message_ask
from tests.conftest import CachedEmbedder, corpus_pages_indexed

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("empty_cache")]

PAGES = [
    "policies/refunds.md",
    "policies/refunds-2023.md",
    "policies/cancellation.md",
    "account/account-deletion-and-data-retention.md",
]
_clients = itertools.count()


@pytest.fixture
def pages(tmp_path, cached_embedder: CachedEmbedder) -> None:
    corpus_pages_indexed(tmp_path, PAGES, cached_embedder)


def _ask(question: str, cached_embedder) -> Message:
    conversation = conversation_start(client_hash=f"noise-client-{next(_clients)}")
    message = message_ask(conversation=conversation, question=question)
    return answer_complete(message=message, generator=ExtractiveGenerator(embedder=cached_embedder))


def test_every_listed_source_is_quoted_or_one_side_of_a_warned_contradiction(
    pages, cached_embedder
) -> None:
    # when: a question whose answer quotes the deletion page and notes the refund pages
    message = _ask("Do I get a refund when I delete my account?", cached_embedder)

    # then: the refund pages the note points at (2023 and current, which do not contradict on
    # this) are not listed; the note still names them
    assert message.status == Message.Status.ANSWERED
    assert "Refund Policy" in message.answer
    warned = {c["newer_number"] for c in message.citations if c["older"]}
    for citation in message.citations:
        assert citation["quotes"] or citation["older"] or citation["number"] in warned, citation
    listed = {c["number"] for c in message.citations}
    cited = {int(number) for number in re.findall(r"\[(\d+)\]", message.answer)}
    assert cited == listed  # no marker names a source that is not listed


def test_the_current_and_2023_refund_windows_still_warn_about_the_older_page(
    pages, cached_embedder
) -> None:
    message = _ask("How long do I have to get a refund on a monthly plan?", cached_embedder)

    older = [c for c in message.citations if c["older"]]
    assert [c["path"] for c in older] == ["policies/refunds-2023.md"]
    newer = next(c for c in message.citations if c["number"] == older[0]["newer_number"])
    assert newer["path"] == "policies/refunds.md"


def test_cancellation_and_account_deletion_cited_together_carry_no_warning(
    pages, cached_embedder
) -> None:
    message = _ask("how do i cancle my subscribtion, is there a notice period?", cached_embedder)

    paths = {c["path"] for c in message.citations}
    assert not any(c["older"] for c in message.citations), message.citations
    assert "policies/cancellation.md" in paths
