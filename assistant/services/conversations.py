"""Writes around a conversation: who the client is, starting and continuing a conversation,
asking a question (a pending message the answer pipeline completes), and feedback."""

from __future__ import annotations

import hashlib
import hmac
import uuid
from collections.abc import Sequence

import structlog
from django.conf import settings
from django.db import transaction

from assistant.models import Conversation, Feedback, Message
from assistant.services.questions import question_normalise
from kb.selectors.access import PUBLIC_AUDIENCES

log = structlog.get_logger("groundwork.assistant")

FEEDBACK_COMMENT_MAX_CHARS = 2000


class FeedbackRejected(ValueError):
    """The feedback cannot be recorded; the message says why, for the customer."""


def client_key_hash(client_key: str) -> str:
    """A keyed hash of the per-session client token: stable for the session, and nothing a
    leaked table could tie back to a browser without the secret key."""
    return hmac.new(
        settings.SECRET_KEY.encode(), f"assistant-client:{client_key}".encode(), hashlib.sha256
    ).hexdigest()


def conversation_for_client(
    *, client_hash: str, public_id: uuid.UUID | str | None
) -> Conversation | None:
    """The client's conversation with this id, or None (unknown, malformed, or someone else's:
    a conversation id alone never lets one client continue another's thread)."""
    if not public_id:
        return None
    try:
        wanted = uuid.UUID(str(public_id))
    except ValueError:
        return None
    return Conversation.objects.filter(public_id=wanted, client_key_hash=client_hash).first()


def conversation_start(*, client_hash: str) -> Conversation:
    conversation = Conversation.objects.create(client_key_hash=client_hash)
    log.info("conversation_started", conversation=str(conversation.public_id))
    return conversation


def message_ask(
    *, conversation: Conversation, question: str, audiences: Sequence[str] = PUBLIC_AUDIENCES
) -> Message:
    """Record a question as a pending message, with who asked it (``audiences``: what the
    asker's answers may draw on, for the analytics page). Raises ``QuestionRejected`` for an
    empty or over-long question; the answer is produced by ``answer_stream`` /
    ``answer_complete``."""
    text = question_normalise(question)
    message = Message.objects.create(
        conversation=conversation, question=text, audience=Message.audience_of(audiences)
    )
    log.info(
        "question_asked",
        conversation=str(conversation.public_id),
        message=str(message.public_id),
        chars=len(text),
    )
    return message


@transaction.atomic
def feedback_record(
    *, message: Message, client_hash: str, vote: str, comment: str = ""
) -> Feedback:
    """One vote per message per client: voting again changes it. An empty comment keeps the
    earlier one, so a second click on the thumb does not erase what was written."""
    if vote not in Feedback.Vote.values:
        raise FeedbackRejected("Choose thumbs up or thumbs down.")
    if message.is_pending:
        raise FeedbackRejected("Wait for the answer before rating it.")
    comment = (comment or "").strip()
    if len(comment) > FEEDBACK_COMMENT_MAX_CHARS:
        raise FeedbackRejected(
            f"Please keep the comment under {FEEDBACK_COMMENT_MAX_CHARS:,} characters."
        )
    feedback, created = Feedback.objects.select_for_update().get_or_create(
        message=message, client_key_hash=client_hash, defaults={"vote": vote, "comment": comment}
    )
    if not created:
        feedback.vote = vote
        if comment:
            feedback.comment = comment
        feedback.save(update_fields=["vote", "comment", "updated_at"])
    log.info("feedback_recorded", message=str(message.public_id), vote=vote, changed=not created)
    return feedback
