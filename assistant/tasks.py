"""Celery adapters: take ids, call one service."""

from __future__ import annotations

from celery import shared_task

from assistant.analytics.rollup import rollup_refresh
from assistant.services import pending_answers_expire
from assistant.services.suggestions import suggestions_propose
from assistant.services.test_question_runs import test_questions_run


@shared_task
def pending_answers_sweep_task() -> int:
    return pending_answers_expire()


@shared_task
def suggestions_propose_task() -> int:
    return len(suggestions_propose())


@shared_task
def analytics_rollup_refresh_task() -> int:
    return rollup_refresh()


TEST_QUESTIONS_RUN_TASK = "assistant.tasks.test_questions_run_task"


@shared_task(name=TEST_QUESTIONS_RUN_TASK, acks_late=True)
def test_questions_run_task(document_id: int, trigger: str, question_ids: list[int] | None) -> int:
    """Answer a page's test questions against the live index (on the ``checks`` queue, which no
    indexing worker takes); a duplicate finds the runs made and answers nothing twice."""
    return len(
        test_questions_run(document_id=document_id, trigger=trigger, question_ids=question_ids)
    )
