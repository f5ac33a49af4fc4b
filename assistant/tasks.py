"""Celery adapters: take ids, call one service."""

from __future__ import annotations

from celery import shared_task

from assistant.analytics.rollup import rollup_refresh
from assistant.services import pending_answers_expire
from assistant.services.suggestions import suggestions_propose


@shared_task
def pending_answers_sweep_task() -> int:
    return pending_answers_expire()


@shared_task
def suggestions_propose_task() -> int:
    return len(suggestions_propose())


@shared_task
def analytics_rollup_refresh_task() -> int:
    return rollup_refresh()
