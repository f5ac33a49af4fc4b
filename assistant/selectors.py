"""Reads of the assistant: a client's conversation as the page shows it (with the pages related
to each answer), the questions the empty chat page suggests, and the questions the help center
did not serve, which ``assistant.services.content_gaps`` groups by meaning for the doc writers."""

from __future__ import annotations

import datetime
import unicodedata
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

import structlog
from django.db.models import Count, Exists, F, Min, OuterRef, Prefetch, Q, QuerySet
from django.db.models.functions import Lower
from django.utils import timezone

from assistant.injection import label_reasons, shown_title
from assistant.models import ChatGreeting, Conversation, Feedback, Message, SuggestedQuestion
from assistant.services.questions import question_cache_text
from kb.models import Document

log = structlog.get_logger("groundwork.assistant")


def conversation_messages(*, conversation: Conversation | None, client_hash: str) -> list[Message]:
    """The conversation's messages, oldest first, each with this client's vote (``my_vote``,
    ``my_comment``) so the page shows which thumb is pressed."""
    if conversation is None:
        return []
    messages = list(conversation.messages.order_by("created_at", "id"))
    feedback = {
        row["message_id"]: row
        for row in Feedback.objects.filter(
            message__in=messages, client_key_hash=client_hash
        ).values("message_id", "vote", "comment")
    }
    for message in messages:
        mine = feedback.get(message.pk)
        message.my_vote = mine["vote"] if mine else ""
        message.my_comment = mine["comment"] if mine else ""
    return messages


def message_for_client(*, public_id: uuid.UUID, client_hash: str) -> Message | None:
    """A message of one of this client's conversations; another client's message is None (the
    same as a message that does not exist)."""
    return (
        Message.objects.select_related("conversation")
        .filter(public_id=public_id, conversation__client_key_hash=client_hash)
        .first()
    )


# --- What the chat page offers beyond the answer -------------------------------------------------

SUGGESTIONS_SHOWN = 4
# The most asked questions are read from this window, by at least this many clients: a question
# only one person typed is theirs (it may carry their details) and is never proposed.
SUGGESTION_WINDOW = datetime.timedelta(days=90)
SUGGESTION_MIN_ASKERS = 2
SUGGESTION_MAX_CHARS = 120  # a suggestion is a button; a long one is a story, not a question
RELATED_PAGES_SHOWN = 3
# Cosine similarity (all-MiniLM-L6-v2) of a page's best retrieved passage to the question from
# which the page is offered as related. Measured on the 96 answerable questions of
# corpus/eval.jsonl over the pages retrieved but not ranked first (266): the pages the eval
# names as answering too (31) against the rest (235) are best told apart at 0.60 (F1 0.45:
# 12 of the 31 kept, 10 of the 235), where 0.40 kept 116 of the 235 and 0.50 kept 50.
# Without a similarity (the vector leg was down) a page is not offered: nothing says it is close.
RELATED_MIN_SIMILARITY = 0.60
# Answers whose retrieval is worth offering: a refusal's hits were judged not about the question.
RELATED_STATUSES = (Message.Status.ANSWERED, Message.Status.FLAGGED)


def suggested_questions(*, limit: int = SUGGESTIONS_SHOWN) -> list[str]:
    """The questions the empty chat page offers: the approved ones, in their order. Nothing a
    visitor typed is here unless a steward approved it (``SuggestedQuestion.objects.shown``)."""
    chosen = SuggestedQuestion.objects.shown().order_by("order", "id")
    return list(chosen.values_list("question", flat=True)[:limit])


def chat_greeting() -> str | None:
    """What the empty chat page says first: the newest active greeting a steward wrote."""
    greeting = ChatGreeting.objects.filter(active=True).order_by("-updated_at", "-id").first()
    return greeting.text if greeting is not None else None


@dataclass(frozen=True)
class AskedQuestion:
    question: str  # as first typed (the earliest spelling of its lower-case form)
    askers: int  # distinct clients


def most_asked_questions(*, limit: int) -> list[AskedQuestion]:
    """The questions of the last ``SUGGESTION_WINDOW`` most often answered (not refused, failed
    or flagged), asked by at least ``SUGGESTION_MIN_ASKERS`` clients, as a first question (a
    follow-up means nothing alone) and from public pages only (a staff member's answer may
    come from internal ones): what a steward is offered to approve, never shown as it is.

    Left out as well: questions that ask readers for credentials or a contact, or carry
    instruction-like text (the rules pages go through), and questions with invisible or
    direction-changing characters (U+202E and the like), which a steward could not read as
    they would be shown."""
    rows = (
        Message.objects.filter(
            status=Message.Status.ANSWERED,
            created_at__gte=timezone.now() - SUGGESTION_WINDOW,
            retrieval_query=F("question"),
        )
        .exclude(snapshot__audiences__contains=[Document.Audience.INTERNAL.value])
        .annotate(text=Lower("question"))
        .values("text")
        .annotate(
            askers=Count("conversation__client_key_hash", distinct=True),
            asked=Count("id"),
            shown=Min("question"),
        )
        .filter(askers__gte=SUGGESTION_MIN_ASKERS)
        .order_by("-askers", "-asked", "text")[: limit * 3]
    )
    questions: dict[str, AskedQuestion] = {}
    for row in rows:
        text = row["shown"]
        if _proposable(text):
            key = question_cache_text(text)
            questions.setdefault(key, AskedQuestion(question=text, askers=row["askers"]))
    return list(questions.values())[:limit]


def _proposable(question: str) -> bool:
    if len(question) > SUGGESTION_MAX_CHARS or "\n" in question:
        return False
    if any(unicodedata.category(character) in ("Cc", "Cf") for character in question):
        return False
    return not label_reasons(question)


@dataclass(frozen=True)
class RelatedPage:
    path: str
    title: str


def related_pages_attach(*, messages: Sequence[Message], audiences: Sequence[str]) -> None:
    """Set ``related_pages`` on each message: the pages its retrieval found close to the question
    (``RELATED_MIN_SIMILARITY``) that the answer does not cite, best first, that this reader
    may still open (one query for all)."""
    wanted: dict[int, list[int]] = {}
    for message in messages:
        message.related_pages = []
        if message.status not in RELATED_STATUSES:
            continue
        cited = {source["path"] for source in message.citations}
        hits = (message.snapshot or {}).get("hits") or []
        ids = [
            hit["document_id"]
            for hit in hits
            if hit.get("path") not in cited
            and (hit.get("similarity") or 0.0) >= RELATED_MIN_SIMILARITY
        ]
        wanted[message.pk] = list(dict.fromkeys(ids))
    every_id = {document_id for ids in wanted.values() for document_id in ids}
    if not every_id:
        return
    readable = {
        # A title that asks readers for credentials is not a link text (the path stands in).
        row["pk"]: RelatedPage(path=row["path"], title=shown_title(row["title"], path=row["path"]))
        for row in Document.objects.published()
        .filter(pk__in=every_id, audience__in=list(audiences))
        .values("pk", "path", "title")
    }
    for message in messages:
        pages = [readable[i] for i in wanted.get(message.pk, []) if i in readable]
        message.related_pages = pages[:RELATED_PAGES_SHOWN]


# Questions a page answered, for its writer: how many the editor lists.
CITING_QUESTIONS_SHOWN = 20


def questions_citing_document(
    *, document_id: int, limit: int = CITING_QUESTIONS_SHOWN
) -> list[Message]:
    """The latest questions whose answers cited the document, newest first, each with its
    feedback prefetched (``message.feedback.all()``, latest first): two queries in all. The
    citations are matched by document id (a page keeps its id when its path changes) through
    the GIN index on ``Message.citations``."""
    return list(
        messages_citing(document_id=document_id)
        .order_by("-created_at", "-id")
        .prefetch_related(
            Prefetch("feedback", queryset=Feedback.objects.order_by("-updated_at", "-id"))
        )[:limit]
    )


def messages_citing(*, document_id: int) -> QuerySet[Message]:
    """Messages whose answer cites the document: JSON containment, which the GIN index serves."""
    return Message.objects.filter(citations__contains=[{"document_id": document_id}])


# --- Content gaps: the questions, as asked (grouping them is ``services.content_gaps``) ----------


@dataclass
class GapExample:
    question: str  # as last asked
    count: int
    last_asked: datetime.datetime
    message_id: int  # the latest asking, for the admin link


@dataclass
class GapQuestion:
    """One distinct question the help center did not serve: its askings, and why each failed."""

    example: GapExample
    reasons: dict[str, int] = field(default_factory=dict)  # not_in_docs/flagged/failed/thumbs_down


def gap_questions(*, since: datetime.datetime, limit: int) -> list[GapQuestion]:
    """Questions asked since ``since`` that got no answer ("not in our docs"), a flagged or
    failed one, or a thumbs down; askings with the same normalised text count as one question.
    The most asked first (the latest asked first among equals), at most ``limit``."""
    thumbs_down = Feedback.objects.filter(message=OuterRef("pk"), vote=Feedback.Vote.DOWN)
    rows = (
        Message.objects.filter(created_at__gte=since)
        .annotate(thumbs_down=Exists(thumbs_down))
        .filter(Q(status__in=Message.UNANSWERED) | Q(thumbs_down=True))
        .order_by("-created_at")
        .values("id", "question", "status", "thumbs_down", "created_at")
    )
    questions: dict[str, GapQuestion] = {}
    for row in rows:
        key = question_cache_text(row["question"])
        entry = questions.get(key)
        if entry is None:
            entry = questions[key] = GapQuestion(
                example=GapExample(
                    question=row["question"],
                    count=0,
                    last_asked=row["created_at"],
                    message_id=row["id"],
                )
            )
        entry.example.count += 1
        if row["status"] in Message.UNANSWERED:
            entry.reasons[row["status"]] = entry.reasons.get(row["status"], 0) + 1
        if row["thumbs_down"]:
            entry.reasons["thumbs_down"] = entry.reasons.get("thumbs_down", 0) + 1
    return sorted(
        questions.values(), key=lambda q: (-q.example.count, -q.example.last_asked.timestamp())
    )[:limit]
