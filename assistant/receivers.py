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
    *, document_id: int, trigger: str, question_ids: list[int] | None = None
) -> bool:
    """Send the answering of a page's test questions, if it has any; a broker outage is logged
    (the next save of the page sends them again)."""
    if not TestQuestion.objects.filter(document_id=document_id).exists():
        return False
    return _run_send(document_id=document_id, trigger=trigger, question_ids=question_ids)


def _run_send(*, document_id: int, trigger: str, question_ids: list[int] | None) -> bool:
    try:
        test_questions_run_task.apply_async(args=[document_id, trigger, question_ids])
    except Exception as exc:  # kombu raises several types when the broker is unreachable
        log.warning("test_questions_enqueue_failed", document_id=document_id, error=str(exc)[:200])
        return False
    return True


@receiver(documents_indexed, dispatch_uid="assistant_test_questions_after_indexing")
def documents_indexed_received(sender: Any, document_ids: list[int], **kwargs: Any) -> None:
    """One query for the pages of a write that have test questions, however many it wrote (a
    sync's window holds hundreds, and most pages have none)."""
    guarded = (
        TestQuestion.objects.filter(document_id__in=document_ids)
        .values_list("document_id", flat=True)
        .distinct()
    )
    for document_id in sorted(guarded):
        _run_send(
            document_id=document_id, trigger=TestQuestionRun.Trigger.INDEXED, question_ids=None
        )


@receiver(test_questions_changed, dispatch_uid="assistant_test_questions_changed")
def test_questions_changed_received(
    sender: Any, document_id: int, question_ids: list[int], **kwargs: Any
) -> None:
    test_questions_enqueue(
        document_id=document_id,
        trigger=TestQuestionRun.Trigger.QUESTION,
        question_ids=question_ids,
    )
