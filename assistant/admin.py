"""Conversations, answers and feedback in the admin, read-only (they are evidence); support
requests with the conversation they came from; the questions the empty chat page suggests, and
the proposals a steward approves them from; and the "Content gaps" view: what customers asked
that the help center did not answer, grouped."""

from __future__ import annotations

import datetime
import functools
import json
from collections.abc import Callable
from typing import Any

from django.contrib import admin
from django.contrib.admin.utils import flatten
from django.core.exceptions import PermissionDenied
from django.db.models import Count, QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.views.decorators.http import require_GET

from assistant.models import (
    ChatGreeting,
    Conversation,
    Feedback,
    Message,
    SuggestedQuestion,
    SupportRequest,
)
from assistant.services.chat_start import chat_greeting_save
from assistant.services.content_gaps import GAP_WINDOW, content_gaps
from assistant.services.suggestions import (
    may_approve_suggestions,
    suggestion_save,
    suggestions_review,
)
from kb.embedders import EmbeddingError


class ReadOnlyAdmin(admin.ModelAdmin):
    """Answers and votes are records of what happened: viewable, deletable, never edited."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ReadOnlyInline(admin.TabularInline):
    """Rows shown for reading only: what was asked and answered is a record, not a draft."""

    extra = 0
    can_delete = False

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return flatten(self.fields or [])

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class MessageInline(ReadOnlyInline):
    model = Message
    fields = ["created_at", "question", "status", "cached", "degraded", "generator"]
    show_change_link = True


@admin.register(Conversation)
class ConversationAdmin(ReadOnlyAdmin):
    list_display = ["public_id", "created_at", "message_count"]
    readonly_fields = ["public_id", "client_key_hash", "created_at"]
    inlines = [MessageInline]
    date_hierarchy = "created_at"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Conversation]:
        return super().get_queryset(request).annotate(message_count=Count("messages"))

    @admin.display(description="messages", ordering="message_count")
    def message_count(self, conversation: Conversation) -> int:
        return conversation.message_count  # type: ignore[attr-defined]


class FeedbackInline(ReadOnlyInline):
    model = Feedback
    fields = ["vote", "comment", "created_at", "updated_at"]


@admin.register(Message)
class MessageAdmin(ReadOnlyAdmin):
    list_display = ["question_excerpt", "status", "cited", "cached", "degraded", "created_at"]
    list_filter = ["status", "cached", "degraded", "quoted", "generator"]
    search_fields = ["question", "answer"]
    date_hierarchy = "created_at"
    inlines = [FeedbackInline]
    fields = [
        "public_id",
        "conversation",
        "created_at",
        "answered_at",
        "question",
        "retrieval_query",
        "status",
        "answer",
        "generator",
        "quoted",
        "cached",
        "degraded",
        "citations_display",
        "snapshot_display",
    ]
    readonly_fields = flatten(fields)  # every one of them

    @admin.display(description="question")
    def question_excerpt(self, message: Message) -> str:
        return message.question if len(message.question) <= 90 else message.question[:89] + "…"

    @admin.display(description="cited")
    def cited(self, message: Message) -> int:
        return len(message.citations)

    @admin.display(description="citations")
    def citations_display(self, message: Message) -> str:
        return _json_block(message.citations)

    @admin.display(description="retrieval snapshot")
    def snapshot_display(self, message: Message) -> str:
        return _json_block(message.snapshot)


@admin.register(Feedback)
class FeedbackAdmin(ReadOnlyAdmin):
    list_display = ["message", "vote", "comment", "updated_at"]
    list_filter = ["vote"]
    search_fields = ["comment", "message__question"]
    readonly_fields = ["message", "client_key_hash", "vote", "comment", "created_at", "updated_at"]


@admin.register(SupportRequest)
class SupportRequestAdmin(admin.ModelAdmin):
    """What a customer wrote, and every question and answer of the chat they wrote it from.
    Only the status changes: marking a request handled is the one thing staff do here."""

    list_display = ["email", "message_excerpt", "status", "questions", "created_at"]
    list_filter = ["status"]
    search_fields = ["email", "message"]
    date_hierarchy = "created_at"
    fields = ["status", "email", "message", "created_at", "conversation", "transcript"]
    readonly_fields = ["email", "message", "created_at", "conversation", "transcript"]

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # requests come from customers

    def get_queryset(self, request: HttpRequest) -> QuerySet[SupportRequest]:
        return (
            super()
            .get_queryset(request)
            .select_related("conversation")
            .annotate(question_count=Count("conversation__messages"))
        )

    @admin.display(description="message")
    def message_excerpt(self, request: SupportRequest) -> str:
        return request.message if len(request.message) <= 90 else request.message[:89] + "…"

    @admin.display(description="questions", ordering="question_count")
    def questions(self, request: SupportRequest) -> int:
        return request.question_count  # type: ignore[attr-defined]

    @admin.display(description="the conversation")
    def transcript(self, request: SupportRequest) -> str:
        if request.conversation is None:
            return "Sent without a conversation."
        messages = request.conversation.messages.order_by("created_at", "id")
        rows = format_html_join(
            "",
            '<li class="support-turn"><p><strong>Asked</strong> {} · <a href="{}">{}</a></p>'
            "<p><strong>Q:</strong> {}</p><p><strong>A:</strong> {}</p></li>",
            (
                (
                    message.created_at.strftime("%Y-%m-%d %H:%M"),
                    reverse("admin:assistant_message_change", args=[message.pk]),
                    message.get_status_display(),
                    message.question,
                    message.answer or "(no answer)",
                )
                for message in messages
            ),
        )
        if not rows:
            return "The conversation has no questions."
        return format_html('<ol class="support-transcript">{}</ol>', rows)


@admin.register(SuggestedQuestion)
class SuggestedQuestionAdmin(admin.ModelAdmin):
    """The questions the empty chat page offers, in order: those a steward wrote or approved.
    The most asked answered questions arrive here as proposals (every 10 minutes); approve or
    decline them with the actions. Every write goes through ``assistant.services.suggestions``,
    which checks the steward's permission."""

    list_display = ["question", "status", "askers", "order", "active", "reviewed_by", "reviewed_at"]
    list_editable = ["order", "active"]
    list_filter = ["status", "active"]
    search_fields = ["question"]
    ordering = ["status", "order", "-askers", "id"]
    fields = ["question", "order", "active", "status", "askers", "reviewed_by", "reviewed_at"]
    readonly_fields = ["status", "askers", "reviewed_by", "reviewed_at"]
    actions = ["approve", "decline"]

    def has_approve_permission(self, request: HttpRequest) -> bool:
        return may_approve_suggestions(actor=request.user)

    def save_model(
        self, request: HttpRequest, obj: SuggestedQuestion, form: Any, change: bool
    ) -> None:
        suggestion_save(suggestion=obj, actor=request.user)

    @admin.action(permissions=["approve"], description="Approve: show on the chat page")
    def approve(self, request: HttpRequest, queryset: QuerySet[SuggestedQuestion]) -> None:
        changed = suggestions_review(suggestions=queryset, actor=request.user, approve=True)
        self.message_user(request, f"{changed} approved: the chat page offers them while active.")

    @admin.action(permissions=["approve"], description="Decline: never show or propose again")
    def decline(self, request: HttpRequest, queryset: QuerySet[SuggestedQuestion]) -> None:
        changed = suggestions_review(suggestions=queryset, actor=request.user, approve=False)
        self.message_user(request, f"{changed} declined: not shown, not proposed again.")


def _json_block(value: Any) -> str:
    return format_html(
        '<pre style="white-space: pre-wrap; max-width: 80em">{}</pre>',
        json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True),
    )


GAP_WINDOWS = {"7": 7, "30": 30, "90": 90}


@require_GET
def content_gaps_view(request: HttpRequest) -> TemplateResponse:
    """Unanswered and thumbed-down questions of the last N days, grouped by meaning."""
    days = GAP_WINDOWS.get(request.GET.get("days", ""), GAP_WINDOW.days)
    failure = ""
    gaps = []
    try:
        gaps = content_gaps(since=timezone.now() - datetime.timedelta(days=days))
    except EmbeddingError as exc:
        failure = f"Questions could not be grouped: the embedder failed ({exc})."
    message_url = reverse("admin:assistant_message_changelist")
    context = {
        **admin.site.each_context(request),
        "title": "Content gaps",
        "gaps": gaps,
        "days": days,
        "windows": sorted(GAP_WINDOWS.values()),
        "failure": failure,
        "message_url": message_url,
    }
    return TemplateResponse(request, "admin/assistant/content_gaps.html", context)


def _needs_permission(view: Callable[..., TemplateResponse]) -> Callable[..., TemplateResponse]:
    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> TemplateResponse:
        if not request.user.has_perm("assistant.view_message"):
            raise PermissionDenied
        return view(request, *args, **kwargs)

    return wrapper


# Served at admin/content-gaps/ by config.admin_site (behind the admin's login, staff check and
# never_cache); reading answers needs the message view permission.
content_gaps_admin_view = _needs_permission(content_gaps_view)


@admin.register(ChatGreeting)
class ChatGreetingAdmin(admin.ModelAdmin):
    """What the empty chat page says first (the newest active one). Shown to every visitor:
    policy stewards write it, through ``assistant.services.chat_start``."""

    list_display = ["__str__", "active", "updated_by", "updated_at"]
    list_filter = ["active"]
    fields = ["text", "active", "updated_by", "updated_at"]
    readonly_fields = ["updated_by", "updated_at"]

    def save_model(self, request: HttpRequest, obj: ChatGreeting, form: Any, change: bool) -> None:
        chat_greeting_save(greeting=obj, actor=request.user)


# Embed sites (the website widget's keys) register from their own module.
# API keys: their admin lives with the API.
import assistant.api.admin  # noqa: E402
import assistant.widget.admin  # noqa: E402, F401
