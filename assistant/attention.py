"""Reads for the stewards' "Policies needing attention" page that come from the chat's records:
pages cited by answers that got a thumbs down, published pages no answer cited lately, and what
retiring a page would stop answering (``retire_impact``, for the retire confirmation).

A message's ``citations`` name each cited source's ``document_id``; both reads unnest them in
SQL. The content-only lists (review dates, failed indexing, contradictions) are in
``kb.attention``.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from django.db import connection
from django.utils import timezone

from assistant.models import Feedback, Message
from assistant.selectors import messages_citing, questions_citing_document
from kb.models import Document
from kb.test_questions.models import TestQuestion

# A page no answer cited for this long is either not needed or not found by retrieval; a
# quarter covers the seasonal questions (renewals, tax year) a shorter window would miss.
UNCITED_WINDOW = datetime.timedelta(days=90)


@dataclass(frozen=True)
class ThumbedDownPage:
    document: Document
    answers: int  # thumbed-down answers that cited it
    last_question: str
    last_comment: str
    last_at: datetime.datetime
    last_message_id: int


@dataclass(frozen=True)
class UncitedPage:
    document: Document
    last_cited: datetime.datetime | None  # ever; None if no answer ever cited it


_CITED_DOCUMENTS = """
    SELECT m.id, (cited.value ->> 'document_id')::bigint AS document_id
    FROM {messages} m
    CROSS JOIN LATERAL jsonb_array_elements(
        CASE WHEN jsonb_typeof(m.citations) = 'array' THEN m.citations ELSE '[]'::jsonb END
    ) AS cited(value)
    WHERE cited.value ? 'document_id'
"""


def thumbed_down_pages() -> list[ThumbedDownPage]:
    """Pages (not retired) cited by answers with a thumbs down: how many such answers, and the
    question and comment of the latest one; the most thumbed-down first."""
    messages = connection.ops.quote_name(Message._meta.db_table)
    feedback = connection.ops.quote_name(Feedback._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            WITH cited AS ({_CITED_DOCUMENTS.format(messages=messages)}),
            down AS (
                SELECT DISTINCT ON (cited.document_id, m.id)
                       cited.document_id, m.id AS message_id, m.question, f.comment, f.updated_at
                FROM cited
                JOIN {messages} m ON m.id = cited.id
                JOIN {feedback} f ON f.message_id = m.id AND f.vote = %s
                ORDER BY cited.document_id, m.id, f.updated_at DESC
            )
            SELECT DISTINCT ON (document_id)
                   document_id, count(*) OVER (PARTITION BY document_id),
                   question, comment, updated_at, message_id
            FROM down
            ORDER BY document_id, updated_at DESC, message_id DESC
            """,
            [Feedback.Vote.DOWN],
        )
        rows = cursor.fetchall()
    documents = Document.objects.exclude(status=Document.Status.RETIRED).defer("body")
    by_id = documents.in_bulk([row[0] for row in rows])
    pages = [
        ThumbedDownPage(
            document=by_id[document_id],
            answers=answers,
            last_question=question,
            last_comment=comment,
            last_at=last_at,
            last_message_id=message_id,
        )
        for document_id, answers, question, comment, last_at, message_id in rows
        if document_id in by_id
    ]
    return sorted(pages, key=lambda page: (-page.answers, -page.last_at.timestamp()))


def uncited_pages(*, now: datetime.datetime | None = None) -> list[UncitedPage]:
    """Current published pages that no answer cited within ``UNCITED_WINDOW``, with when one
    last did; never-cited pages first, then the longest uncited."""
    since = (now or timezone.now()) - UNCITED_WINDOW
    messages = connection.ops.quote_name(Message._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT cited.document_id, max(m.created_at)
            FROM ({_CITED_DOCUMENTS.format(messages=messages)}) cited
            JOIN {messages} m ON m.id = cited.id
            GROUP BY cited.document_id
            """
        )
        last_cited: dict[int, datetime.datetime] = dict(cursor.fetchall())
    documents = Document.objects.current().defer("body").order_by("path")
    pages = [
        UncitedPage(document=document, last_cited=last_cited.get(document.pk))
        for document in documents
        if document.pk not in last_cited or last_cited[document.pk] < since
    ]
    never = datetime.datetime.min.replace(tzinfo=datetime.UTC)
    return sorted(pages, key=lambda page: (page.last_cited or never, page.document.path))


# --- What retiring a page stops answering ---------------------------------------------------------

# Recent cited questions the retire confirmation lists (the count covers all of them).
RETIRE_QUESTIONS_SHOWN = 10


@dataclass(frozen=True)
class RetireImpact:
    """What a steward is told before retiring ``document``: the customer questions whose
    answers cited it (the latest few, and how many in all), the test questions that expect it,
    and the pages that name it as their successor (they will name its successor instead)."""

    document: Document
    cited_questions: list[Message]
    cited_total: int
    test_questions: list[str]
    predecessors: list[Document]


def retire_test_questions(*, document: Document) -> list[str]:
    """The test questions guarding ``document`` (`kb.test_questions`): each must cite it, so
    retiring it leaves every one of them unanswered."""
    return list(
        TestQuestion.objects.filter(document=document)
        .order_by("id")
        .values_list("question", flat=True)
    )


def retire_impact(*, document: Document) -> RetireImpact:
    return RetireImpact(
        document=document,
        cited_questions=questions_citing_document(
            document_id=document.pk, limit=RETIRE_QUESTIONS_SHOWN
        ),
        cited_total=messages_citing(document_id=document.pk).count(),
        test_questions=retire_test_questions(document=document),
        predecessors=list(
            Document.objects.filter(superseded_by=document).defer("body").order_by("path")
        ),
    )
