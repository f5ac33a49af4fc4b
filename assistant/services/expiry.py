"""Ending answers nobody is waiting for. An answer is produced when its reader opens the stream
(or posts the plain form); a page closed before that, a script that only posts, or a reader
that died mid-answer leaves the message ``pending`` for ever. The periodic sweep ends those
with a notice, so they stop looking like work in progress in the admin and in the chat."""

from __future__ import annotations

import datetime

import structlog
from django.db.models import Q
from django.utils import timezone

from assistant.models import Message

log = structlog.get_logger("groundwork.assistant")

EXPIRED_ANSWER = (
    "This question was not answered because the page was closed before the answer started. "
    "Please ask it again."
)
# Unopened for this long, the page is gone. It exceeds answering.CLAIM_STALE_AFTER, so a reader
# that claimed a message and died is past its stale mark, and a live one never runs this long.
PENDING_EXPIRES_AFTER = datetime.timedelta(minutes=10)


def pending_answers_expire() -> int:
    """Mark pending messages untouched for ``PENDING_EXPIRES_AFTER`` as failed with
    ``EXPIRED_ANSWER``; returns how many. One conditional UPDATE, so a reader claiming a message
    at the same moment either wins (and answers it) or finds it ended (and shows the notice)."""
    now = timezone.now()
    cutoff = now - PENDING_EXPIRES_AFTER
    expired = (
        Message.objects.filter(status=Message.Status.PENDING)
        .filter(
            Q(answering_started_at__isnull=True, created_at__lt=cutoff)
            | Q(answering_started_at__lt=cutoff)
        )
        .update(
            status=Message.Status.FAILED,
            answer=EXPIRED_ANSWER,
            answered_at=now,
            snapshot={"failed_stage": "expired", "failure": "no reader opened the answer"},
        )
    )
    if expired:
        log.info("pending_answers_expired", count=expired)
    return expired
