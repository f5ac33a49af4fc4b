"""ops_status shows what an operator watches: messages per queue and pending index states."""

from __future__ import annotations

import io
import json

import pytest
from django.conf import settings
from django.core.management import call_command

from kb.embedders.hashing import HashingEmbedder
from kb.models import Document
from kb.services import embedding_model_add, index_enqueue
from tests.integration.test_queues import _drain

pytestmark = pytest.mark.django_db


def test_ops_status_counts_waiting_messages_per_queue_and_pending_documents() -> None:
    # given two pending documents, one edit waiting on interactive and a batch on bulk
    embedding_model_add(embedder=HashingEmbedder())
    pages = [Document.objects.create(path=f"p{n}.md", title=f"P{n}", body="Text.") for n in (1, 2)]
    _drain(settings.INTERACTIVE_QUEUE), _drain(settings.BULK_QUEUE)
    index_enqueue(document_ids=[pages[0].pk])
    index_enqueue(document_ids=[page.pk for page in pages], bulk=True)

    # when
    out = io.StringIO()
    call_command("ops_status", "--json", stdout=out)
    _drain(settings.INTERACTIVE_QUEUE), _drain(settings.BULK_QUEUE)

    # then
    status = json.loads(out.getvalue())
    assert {q["queue"]: q["messages"] for q in status["queues"]} == {"interactive": 1, "bulk": 1}
    (index,) = status["index"]
    assert index["by_status"] == {"pending": 2} and index["not_current"] == 2
    assert index["oldest_pending_seconds"] is not None
    assert status["replica_lag_seconds"] is None
