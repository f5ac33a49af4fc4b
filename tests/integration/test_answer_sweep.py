"""The sweep that ends answers nobody is waiting for: a question whose stream was never opened
(or whose reader died) would otherwise stay ``pending`` for ever."""

from __future__ import annotations

import datetime

import pytest
from django.conf import settings
from django.utils import timezone

from assistant.models import Message
from assistant.services import (
    EXPIRED_ANSWER,
    AnswerReady,
    answer_stream,
    answering,
    conversation_start,
    expiry,
    message_ask,
    pending_answers_expire,
)
from assistant.tasks import pending_answers_sweep_task
from config.celery_app import app
from tests.support.chat import ScriptedGenerator

pytestmark = pytest.mark.django_db


def _asked(*, minutes_ago: float, claimed_minutes_ago: float | None = None) -> Message:
    message = message_ask(conversation=conversation_start(client_hash="c"), question="Refunds?")
    now = timezone.now()
    claimed = None
    if claimed_minutes_ago is not None:
        claimed = now - datetime.timedelta(minutes=claimed_minutes_ago)
    Message.objects.filter(pk=message.pk).update(
        created_at=now - datetime.timedelta(minutes=minutes_ago), answering_started_at=claimed
    )
    message.refresh_from_db()
    return message


def test_an_answer_whose_stream_never_opened_is_expired_by_the_sweep() -> None:
    # given questions asked long ago and never answered, and ones still in time
    abandoned = _asked(minutes_ago=11)
    reader_died = _asked(minutes_ago=30, claimed_minutes_ago=29)
    just_asked = _asked(minutes_ago=1)
    being_answered = _asked(minutes_ago=11, claimed_minutes_ago=0.5)

    # when the sweep runs
    expired = pending_answers_expire()

    # then the abandoned ones end, with a notice and the reason in the evidence
    assert expired == 2
    for message in (abandoned, reader_died):
        message.refresh_from_db()
        assert message.status == Message.Status.FAILED
        assert message.answer == EXPIRED_ANSWER and message.answered_at is not None
        assert message.snapshot["failed_stage"] == "expired"
    for message in (just_asked, being_answered):
        message.refresh_from_db()
        assert message.is_pending and message.answered_at is None
    assert pending_answers_expire() == 0


def test_expiry_waits_longer_than_a_claim_takes_to_go_stale() -> None:
    # A reader that died is re-answerable first; a live reader never runs this long.
    assert expiry.PENDING_EXPIRES_AFTER > answering.CLAIM_STALE_AFTER


def test_a_stream_opened_after_expiry_gets_the_notice_without_answering() -> None:
    message = _asked(minutes_ago=11)
    pending_answers_expire()
    generator = ScriptedGenerator("Monthly plans are refundable [1].")

    events = list(answer_stream(message=message, generator=generator))

    assert len(events) == 1 and isinstance(events[0], AnswerReady)
    assert events[0].message.answer == EXPIRED_ANSWER


def test_the_sweep_is_a_periodic_task() -> None:
    _asked(minutes_ago=11)
    scheduled = [entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()]

    assert "assistant.tasks.pending_answers_sweep_task" in scheduled
    assert "assistant.tasks.pending_answers_sweep_task" in app.tasks
    assert pending_answers_sweep_task.apply().get() == 1
    assert not Message.objects.filter(status=Message.Status.PENDING).exists()
