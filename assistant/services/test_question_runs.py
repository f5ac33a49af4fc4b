"""Answering a page's test questions with the real answer pipeline: after the page was indexed
(stored, flagged against the last run that passed: ``kb.test_questions``), and against a draft
in the editor, before it is saved (shown, never stored).

Each question is asked as a first question by a reader of the page's audience, through
``answer_complete`` (retrieval, the no-answer decision, the generator, the citation check), in
a transaction that is rolled back, so no conversation or message is left for the content gaps
or the attention page to count, and without the answer cache (``use_cache=False``). Reads go to
the primary (``primary_only``): a replica may not hold the chunks just written yet.

A draft is answered over the live index with the draft's chunks in place of the page's: the
draft is chunked and embedded first, outside any transaction, then, inside one that is rolled
back, the page's row takes the draft's title and body and its chunks are replaced by the
draft's (``chunks_replace``, the write a save makes: the BM25 statistics and the page vector
follow, by their triggers), and the questions are answered. Nothing is committed, so no other
reader ever sees the draft. While it runs (about a second per question) it holds the page's row
and its model's statistics row locked: a save of any page in that model waits for it, a search
does not. ``DRAFT_LOCK_TIMEOUT`` bounds the wait for those locks the other way.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import structlog
from django.db import connection, transaction

from assistant.facts import facts_stated
from assistant.generators import Generator
from assistant.models import Message
from assistant.services.answering import answer_complete
from assistant.services.conversations import conversation_start, message_ask
from kb.embedders import embedder_for
from kb.models import Document, DocumentIndexState, EmbeddingModel
from kb.runtime.db_router import primary_only
from kb.selectors.access import ALL_AUDIENCES, PUBLIC_AUDIENCES
from kb.services import chunks_embed, chunks_replace, document_chunk
from kb.test_questions.models import TestQuestion, TestQuestionRun
from kb.test_questions.selectors import latest_runs, passing_baselines
from kb.test_questions.services import AnswerChecked, run_flags, test_question_run_record

log = structlog.get_logger("groundwork.assistant")

TEST_QUESTION_CLIENT = "test-question"  # the rolled-back conversations' client hash
DRAFT_LOCK_TIMEOUT = "5s"


def test_question_answer(
    *, document: Document, question: str, facts: Sequence[str], match: str,
    generator: Generator | None = None,
) -> AnswerChecked:  # fmt: skip
    """Ask ``question`` as a reader of ``document``'s audience and check the answer."""
    audiences = (
        ALL_AUDIENCES if document.audience == Document.Audience.INTERNAL else PUBLIC_AUDIENCES
    )
    with primary_only(), transaction.atomic():
        message = message_ask(
            conversation=conversation_start(client_hash=TEST_QUESTION_CLIENT), question=question
        )
        message = answer_complete(
            message=message, audiences=audiences, generator=generator, use_cache=False
        )
        transaction.set_rollback(True)
    refused = message.status == Message.Status.NOT_IN_DOCS
    return AnswerChecked(
        answer=message.answer,
        status=message.status,
        citations=[
            {
                "path": citation.get("path", ""),
                "section": citation.get("section", ""),
                "document_id": citation.get("document_id"),
            }
            for citation in message.citations
        ],
        facts_stated=not refused and facts_stated(message.answer, facts, match=match),
        refused=refused,
    )


def test_questions_run(
    *,
    document_id: int,
    trigger: str,
    question_ids: Sequence[int] | None = None,
    generator: Generator | None = None,
) -> list[TestQuestionRun]:
    """Answer the page's test questions (or those of ``question_ids``) against the live index
    and store each run. Idempotent: a page whose live chunks are not its text as it is now is
    left to the run its next indexing sends, and a question already answered at this text
    after the page's last indexing is not answered again."""
    document = Document.objects.filter(pk=document_id).first()
    if document is None:
        return []
    asked = TestQuestion.objects.filter(document=document).select_related("document")
    if question_ids is not None:
        asked = asked.filter(pk__in=list(question_ids))
    questions = list(asked)
    if not questions:
        return []
    state = (
        DocumentIndexState.objects.filter(
            document=document, embedding_model__in=EmbeddingModel.objects.active()
        )
        .current()
        .first()
    )
    if state is None:
        return []  # not indexed at this text yet: that indexing sends its own run
    latest = latest_runs(question.pk for question in questions)
    runs = []
    for question in questions:
        previous = latest.get(question.pk)
        if (
            trigger == TestQuestionRun.Trigger.INDEXED
            and previous is not None
            and previous.content_hash == document.content_hash
            and state.indexed_at is not None
            and previous.created_at >= state.indexed_at
        ):
            continue  # a duplicate message: this indexing was answered already
        started = time.perf_counter()
        checked = test_question_answer(
            document=document,
            question=question.question,
            facts=question.facts,
            match=question.match,
            generator=generator,
        )
        runs.append(
            test_question_run_record(
                test_question=question,
                checked=checked,
                trigger=trigger,
                content_hash=document.content_hash,
                ms=round((time.perf_counter() - started) * 1000),
            )
        )
    log.info(
        "test_questions_run",
        path=document.path,
        trigger=trigger,
        answered=len(runs),
        flagged=sum(bool(run.flags) for run in runs),
    )
    return runs


@dataclass(frozen=True)
class DraftOutcome:
    """One question answered against a draft, beside its latest stored run (the live text)."""

    test_question: TestQuestion
    live: TestQuestionRun | None
    draft: AnswerChecked
    flags: list[str]  # what saving the draft would flag (the stored runs' rule)

    @property
    def passes(self) -> bool:
        return self.draft.passes(self.test_question.document_id)


def test_questions_draft_run(
    *, document: Document, title: str, body: str, generator: Generator | None = None
) -> list[DraftOutcome]:
    """Answer ``document``'s test questions as if its title and body were the draft's, without
    saving anything (see the module's docstring). Raises ``kb.chunking.ChunkingError`` for a
    draft that cannot be chunked and ``EmbeddingError`` when the embedder fails."""
    questions = list(TestQuestion.objects.filter(document=document))
    if not questions:
        return []
    embedding_model = EmbeddingModel.objects.active().get()
    embedder = embedder_for(embedding_model.key)
    (chunks,) = chunks_embed(
        documents=[document_chunk(title=title, body=body, embedder=embedder)],
        embedder=embedder,
        embedding_model=embedding_model,
    )
    latest = latest_runs(question.pk for question in questions)
    baselines = passing_baselines(questions)
    outcomes = []
    with primary_only(), transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(f"SET LOCAL lock_timeout = '{DRAFT_LOCK_TIMEOUT}'")
        draft = Document.objects.select_for_update().get(pk=document.pk)
        Document.objects.filter(pk=document.pk).update(
            title=title, body=body, content_hash=chunks.content_hash
        )
        draft.title, draft.body, draft.content_hash = title, body, chunks.content_hash
        chunks_replace(document=draft, embedding_model=embedding_model, chunks=chunks)
        for question in questions:
            checked = test_question_answer(
                document=draft,
                question=question.question,
                facts=question.facts,
                match=question.match,
                generator=generator,
            )
            baseline = baselines.get(question.pk)
            outcomes.append(
                DraftOutcome(
                    test_question=question,
                    live=latest.get(question.pk),
                    draft=checked,
                    flags=run_flags(document=document, baseline=baseline, after=checked),
                )
            )
        transaction.set_rollback(True)
    return outcomes
