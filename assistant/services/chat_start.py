"""Writes to how the empty chat page starts: its greeting, and the first questions it suggests
when a help center is new (read from a folder's ``chat-start.json``, as the demo does with
``corpus/``).

The greeting is shown to every visitor: writing it needs ``assistant.change_chatgreeting``
(policy stewards), on every path. A folder's file fills the page only where the database has
nothing yet; on a restart what stewards wrote, approved, declined or deleted since stands.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import structlog
from django.core.exceptions import PermissionDenied
from django.db import transaction

from assistant.models import ChatGreeting, SuggestedQuestion
from assistant.selectors import SUGGESTION_MAX_CHARS
from kb.actors import SYSTEM, Actor, actor_has_perm, actor_name

log = structlog.get_logger("groundwork.assistant")

CHAT_START_FILE = "chat-start.json"
GREETING_PERMISSION = "assistant.change_chatgreeting"
_GREETING_MAX_CHARS = ChatGreeting._meta.get_field("text").max_length or 500


class GreetingPermissionDenied(PermissionDenied):
    """The acting user may not write the chat page's greeting; the message says so."""


class ChatStartError(ValueError):
    """A ``chat-start.json`` that is not a greeting and a list of questions; nothing was read."""


@dataclass(frozen=True)
class ChatStart:
    greeting: str | None
    suggested_questions: tuple[str, ...]


@dataclass(frozen=True)
class ChatStartAdded:
    greeting: bool  # the greeting was added (there was none)
    suggested_questions: int  # how many were added (there were none)


def may_write_greeting(*, actor: Actor) -> bool:
    return actor_has_perm(actor, GREETING_PERMISSION)


@transaction.atomic
def chat_greeting_save(*, greeting: ChatGreeting, actor: Actor) -> ChatGreeting:
    """Save a greeting written or changed in admin, as ``actor`` (a policy steward)."""
    if not may_write_greeting(actor=actor):
        raise GreetingPermissionDenied(
            "Only a policy steward may write the chat page's greeting: every visitor sees it."
        )
    greeting.updated_by = None if actor is SYSTEM else actor  # type: ignore[assignment]
    greeting.save()
    log.info("chat_greeting_saved", greeting=greeting.pk, actor=actor_name(actor))
    return greeting


def chat_start_read(*, directory: Path) -> ChatStart | None:
    """The greeting and suggested questions a folder starts its chat page with, or ``None``
    without the file. Checked whole: one bad entry refuses the file."""
    path = directory / CHAT_START_FILE
    if not path.is_file():
        return None
    try:
        content = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ChatStartError(f"{path}: not valid JSON ({exc})") from exc
    if not isinstance(content, dict) or set(content) - {"greeting", "suggested_questions"}:
        raise ChatStartError(
            f'{path}: expected {{"greeting": "…", "suggested_questions": ["…", …]}} and no '
            "other keys"
        )
    greeting = content.get("greeting")
    if greeting is not None and (
        not isinstance(greeting, str) or not greeting.strip() or len(greeting) > _GREETING_MAX_CHARS
    ):
        raise ChatStartError(f"{path}: the greeting must be text of 1 to {_GREETING_MAX_CHARS}")
    questions = content.get("suggested_questions", [])
    if not isinstance(questions, list):
        raise ChatStartError(f"{path}: suggested_questions must be a list of questions")
    for question in questions:
        if not isinstance(question, str) or not question.strip():
            raise ChatStartError(f"{path}: {question!r} is not a question")
        if len(question) > SUGGESTION_MAX_CHARS or "\n" in question:
            raise ChatStartError(
                f"{path}: {question[:40]!r}… is longer than a button holds "
                f"({SUGGESTION_MAX_CHARS} characters, one line)"
            )
    written = tuple(" ".join(question.split()) for question in questions)
    if len({question.casefold() for question in written}) != len(written):
        raise ChatStartError(f"{path}: a suggested question is given twice")
    return ChatStart(greeting=greeting.strip() if greeting else None, suggested_questions=written)


@transaction.atomic
def chat_start_add(*, chat_start: ChatStart) -> ChatStartAdded:
    """Fill an empty chat page from ``chat_start``: the greeting if no greeting exists, the
    questions (approved, in the file's order) if no suggested question exists in any state.
    Idempotent, and never undoes a steward's work: a second run adds nothing."""
    add_greeting = False
    if chat_start.greeting is not None and not ChatGreeting.objects.exists():
        ChatGreeting.objects.create(text=chat_start.greeting)
        add_greeting = True
    added = 0
    if chat_start.suggested_questions and not SuggestedQuestion.objects.exists():
        SuggestedQuestion.objects.bulk_create(
            SuggestedQuestion(
                question=question, order=order, status=SuggestedQuestion.Status.APPROVED
            )
            for order, question in enumerate(chat_start.suggested_questions)
        )
        added = len(chat_start.suggested_questions)
    if add_greeting or added:
        log.info("chat_start_added", greeting=add_greeting, suggested_questions=added)
    return ChatStartAdded(greeting=add_greeting, suggested_questions=added)
