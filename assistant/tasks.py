"""Celery adapters: take ids, call one service."""

from __future__ import annotations

from celery import shared_task

from assistant.services import pending_answers_expire


@shared_task
def pending_answers_sweep_task() -> int:
    return pending_answers_expire()
