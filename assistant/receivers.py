"""The assistant's answers to what kb tells it (``kb.events``): a page indexed, or its test
questions changed, sends the answering of its test questions to the ``checks`` queue."""

from __future__ import annotations

from typing import Any

import structlog
from django.dispatch import receiver

from assistant.tasks import test_questions_run_task
from kb.events import documents_indexed, test_questions_changed
from kb.test_questions.models import TestQuestion, TestQuestionRun

log = structlog.get_logger("groundwork.assistant")


def test_questions_enqueue(
    *, document_ids: list[int], trigger: str, question_ids: list[int] | None = None
) -> list[int]:
    """Send the answering of the test questions of each of these pages that has any, found in
    one query however many pages a write held (a sync's window holds hundreds, and most pages
    have none); the pages sent. A broker outage is logged (the next save of the page sends them
    again)."""
    guarded = (
        TestQuestion.objects.filter(document_id__in=document_ids)
        .values_list("document_id", flat=True)
        .distinct()
    )
    sent = []
    for document_id in sorted(guarded):
        try:
            test_questions_run_task.apply_async(args=[document_id, trigger, question_ids])
        except Exception as exc:  # kombu raises several types when the broker is unreachable
            log.warning(
                "test_questions_enqueue_failed", document_id=document_id, error=str(exc)[:200]
            )
            continue
        sent.append(document_id)
    return sent


@receiver(documents_indexed, dispatch_uid="assistant_test_questions_after_indexing")
def documents_indexed_received(sender: Any, document_ids: list[int], **kwargs: Any) -> None:
    test_questions_enqueue(document_ids=document_ids, trigger=TestQuestionRun.Trigger.INDEXED)


@receiver(test_questions_changed, dispatch_uid="assistant_test_questions_changed")
def test_questions_changed_received(
    sender: Any, document_id: int, question_ids: list[int], **kwargs: Any
) -> None:
    test_questions_enqueue(
        document_ids=[document_id],
        trigger=TestQuestionRun.Trigger.QUESTION,
        question_ids=question_ids,
    )
