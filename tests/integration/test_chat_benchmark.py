"""The answer-latency benchmark `make bench` calls: measured through the chat's own views, and
leaving nothing behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from assistant.models import Conversation, Message
from assistant.tooling.benchmarks import BenchmarkError, answer_latency
from tests.support.chat import REFUND_QUESTION, UNANSWERABLE_QUESTION, index_help_center

pytestmark = pytest.mark.django_db


def test_answer_latency_reports_first_byte_and_total_percentiles(tmp_path: Path, local_embedder):
    # given
    index_help_center(tmp_path / "docs", embedder=local_embedder)
    questions = [REFUND_QUESTION, UNANSWERABLE_QUESTION, "How many API requests per second?"]

    # when
    report = answer_latency(questions)

    # then
    assert report["questions"] == 3 and report["generator"] == "extractive"
    assert report["statuses"] == {"answered": 2, "not_in_docs": 1}
    for figure in ("first_byte_ms", "total_ms", "retrieval_ms", "generation_ms"):
        assert 0 <= report[figure]["p50"] <= report[figure]["p95"], figure
    assert report["first_byte_ms"]["p95"] <= report["total_ms"]["p95"]
    assert not Message.objects.exists() and not Conversation.objects.exists()


def test_answer_latency_needs_an_index(db) -> None:
    with pytest.raises(BenchmarkError, match="kb_sync"):
        answer_latency(["How do refunds work?"])
