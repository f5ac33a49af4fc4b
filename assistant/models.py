"""Conversations on the chat page, every answer with the evidence it was built from, and feedback.

A ``Message`` keeps what the customer saw (the checked answer and its numbered sources) next to
what produced it (the retrieval snapshot: chunk ids, ranks, scores, confidence, degradation and
timings), so an answer can be explained later even after the documents it cited have changed.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.db.models import Q


class Conversation(models.Model):
    """One chat thread. ``client_key_hash`` ties it to the browser session that started it (a
    keyed hash of a random per-session token, so the table holds nothing that identifies anyone)."""

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    client_key_hash = models.CharField(max_length=64, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return str(self.public_id)


class Message(models.Model):
    """One question and its answer, created ``pending`` when asked and completed by the pipeline."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        ANSWERED = "answered", "Answered"
        NOT_IN_DOCS = "not_in_docs", "Not in our docs"
        FLAGGED = "flagged", "Flagged"
        FAILED = "failed", "Failed"

    class Audience(models.TextChoices):
        PUBLIC = "public", "Public (a customer)"
        INTERNAL = "internal", "Internal (staff or an internal API key)"

    # Statuses the content-gaps view reads as "the docs did not serve this question".
    UNANSWERED = (Status.NOT_IN_DOCS, Status.FLAGGED, Status.FAILED)

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="messages"
    )
    question = models.TextField()
    retrieval_query = models.TextField(
        blank=True,
        default="",
        help_text="What was searched: the question, or for a short follow-up the question it "
        "follows plus the follow-up.",
    )
    answer = models.TextField(blank=True, default="", help_text="The answer as shown.")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    citations = models.JSONField(
        default=list,
        blank=True,
        help_text="The cited sources by number: chunk id, path, section, offsets, updated_on.",
    )
    generator = models.CharField(max_length=200, blank=True, default="")
    quoted = models.BooleanField(
        default=False, help_text="The answer quotes passages (the offline extractive answerer)."
    )
    cached = models.BooleanField(default=False)
    degraded = models.BooleanField(default=False)
    snapshot = models.JSONField(
        default=dict,
        blank=True,
        help_text="Retrieval and generation evidence: hits with ranks and scores, confidence, "
        "failed stages, timings per stage.",
    )
    audience = models.CharField(
        max_length=10,
        choices=Audience.choices,
        default=Audience.PUBLIC,
        # Also the column's default: rows written by SQL, or by a server still on the previous
        # release during an upgrade, are public unless they say otherwise.
        db_default=Audience.PUBLIC,
        help_text="Who asked: internal when the asker could read internal pages. Recorded "
        "since migration 0008; older messages were read from their snapshot's audiences.",
    )
    answering_started_at = models.DateTimeField(null=True, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    # Not columns, set for the chat page: one client's feedback (``conversation_messages``) and
    # the retrieved pages the answer did not cite (``related_pages_attach``).
    my_vote: str
    my_comment: str
    related_pages: list[Any]

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [
            models.Index(fields=["status", "created_at"], name="assistant_msg_status"),
            # The analytics rollup recounts one day at a time, the topics read the latest askings.
            models.Index(fields=["created_at"], name="assistant_msg_created"),
            # "Which answers cited this page" (the document editor): a containment match.
            GinIndex(
                fields=["citations"], opclasses=["jsonb_path_ops"], name="assistant_msg_citations"
            ),
        ]

    def __str__(self) -> str:
        return self.question[:80]

    @property
    def is_pending(self) -> bool:
        return self.status == self.Status.PENDING

    @classmethod
    def audience_of(cls, audiences: Sequence[str]) -> str:
        """The asker's audience from the audiences their answers may draw on."""
        return cls.Audience.INTERNAL if cls.Audience.INTERNAL in audiences else cls.Audience.PUBLIC


class Feedback(models.Model):
    """A thumbs up or down on one answer; one per message per client, changeable."""

    class Vote(models.TextChoices):
        UP = "up", "Helpful"
        DOWN = "down", "Not helpful"

    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="feedback")
    client_key_hash = models.CharField(max_length=64)
    vote = models.CharField(max_length=4, choices=Vote.choices)
    comment = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["message", "client_key_hash"], name="assistant_one_feedback_per_client"
            ),
            models.CheckConstraint(
                condition=Q(vote__in=["up", "down"]), name="assistant_feedback_vote_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.vote} on {self.message_id}"


class SupportRequest(models.Model):
    """A customer's request for a person, sent from the chat page's "Contact support" form,
    with the conversation it came from so staff read what was already asked and answered."""

    class Status(models.TextChoices):
        NEW = "new", "New"
        HANDLED = "handled", "Handled"

    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    conversation = models.ForeignKey(
        Conversation,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="support_requests",
        help_text="The chat the request was sent from, if any.",
    )
    client_key_hash = models.CharField(max_length=64, db_index=True)
    email = models.EmailField(help_text="Where the customer wants the reply.")
    message = models.TextField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.NEW)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "created_at"], name="assistant_support_status")]

    def __str__(self) -> str:
        return f"{self.email}: {self.message[:60]}"


class SuggestedQuestionQuerySet(models.QuerySet["SuggestedQuestion"]):
    def shown(self) -> SuggestedQuestionQuerySet:
        """What the empty chat page may offer: approved by a steward and active. The one place
        this is decided; a proposal (a visitor's text) is never on it."""
        return self.filter(status=SuggestedQuestion.Status.APPROVED, active=True)


class SuggestedQuestion(models.Model):
    """A question the empty chat page offers; clicking it asks it. Staff write them, or the
    questions customers ask most that were answered are proposed here: a proposal is a
    visitor's text and reaches other visitors only once a policy steward approves it."""

    class Status(models.TextChoices):
        PROPOSED = "proposed", "Proposed (not shown)"
        APPROVED = "approved", "Approved"
        DECLINED = "declined", "Declined (not proposed again)"

    question = models.CharField(max_length=200, unique=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PROPOSED)
    askers = models.PositiveIntegerField(
        default=0,
        help_text="For a proposal: how many clients asked it (last 90 days) when last counted.",
    )
    order = models.PositiveSmallIntegerField(default=0, help_text="Lower numbers come first.")
    active = models.BooleanField(default=True, help_text="An approved question is shown while on.")
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="The steward who approved or declined it, or wrote it.",
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = SuggestedQuestionQuerySet.as_manager()

    class Meta:
        ordering = ["order", "id"]
        permissions = [
            ("approve_suggestedquestion", "Can approve questions for the chat page"),
        ]

    def __str__(self) -> str:
        return self.question


class ChatGreeting(models.Model):
    """What the empty chat page says first, above its suggested questions. Shown to every
    visitor, so a policy steward writes it (in admin); the newest active one is shown."""

    text = models.TextField(
        max_length=500,
        help_text="A sentence or two; line breaks are kept. Shown on the empty chat page.",
    )
    active = models.BooleanField(default=True, help_text="Shown while on (the newest one wins).")
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="Who wrote or last changed it (empty: loaded by the demo).",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at", "-id"]

    def __str__(self) -> str:
        return self.text if len(self.text) <= 60 else self.text[:59] + "…"


# The analytics rollup lives with the analytics page (assistant/analytics/).
# The widget's site keys live with the widget; imported here so Django registers the model.
# The answer API's keys live with the API (assistant/api/); imported here so Django finds them.
from assistant.analytics.models import QuestionDay, QuestionDayStale  # noqa: E402, F401
from assistant.api.models import ApiKey  # noqa: E402, F401
from assistant.widget.models import EmbedSite  # noqa: E402, F401
