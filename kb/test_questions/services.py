"""Writes to a page's test questions, and the one rule of what a run that guards an edit flags.

Who may change them is decided here, with the acting user, for every path (the document
editor's inline, a command): a policy steward for any page; a doc writer for their own pages,
the ones they saved a version of (the page's history says who). Anyone who may edit a page
may see its test questions and answer them against a draft (``may_run_test_questions``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import structlog
from django.contrib.auth.models import User
from django.db import transaction

from kb.actors import SYSTEM, Actor, actor_has_perm, actor_name
from kb.events import test_questions_changed
from kb.models import Document
from kb.services.documents import DocumentPermissionDenied, may_retire
from kb.test_questions.models import (
    FACT_MAX_CHARS,
    MAX_FACTS,
    QUESTION_MAX_CHARS,
    TestQuestion,
    TestQuestionRun,
)
from kb.test_questions.selectors import passing_baselines

log = structlog.get_logger("groundwork.kb")

EDIT_PERMISSION = "kb.change_testquestion"
CHANGE_DOCUMENT_PERMISSION = "kb.change_document"
# A page's questions are answered again after every indexing of it, on their own queue; past a
# dozen, a save would keep that queue busy for long and say little more.
MAX_QUESTIONS_PER_DOCUMENT = 12


class TestQuestionRejected(ValueError):
    """A test question that cannot be kept as given; the message says why, for people."""

    __test__ = False


def document_is_written_by(*, document: Document, actor: Actor) -> bool:
    """Whether ``actor`` saved a version of ``document``: the writer's own pages."""
    if actor is SYSTEM or document.pk is None or not getattr(actor, "pk", None):
        return False
    history = Document.history.model.objects
    return bool(history.filter(id=document.pk, history_user_id=actor.pk).exists())


def may_edit_test_questions(*, actor: Actor, document: Document) -> bool:
    """Stewards for every page; doc writers for the pages they wrote (saved a version of)."""
    if not actor_has_perm(actor, EDIT_PERMISSION):
        return False
    if actor is SYSTEM or may_retire(actor=actor):
        return True
    return actor_has_perm(actor, CHANGE_DOCUMENT_PERMISSION) and document_is_written_by(
        document=document, actor=actor
    )


def may_run_test_questions(*, actor: Actor, document: Document) -> bool:
    """Whoever may edit the page may see how its questions are answered, and try a draft."""
    return actor_has_perm(actor, CHANGE_DOCUMENT_PERMISSION)


def facts_clean(facts: Sequence[str]) -> list[str]:
    """The facts as kept: stripped, blanks dropped; 1 to ``MAX_FACTS`` short phrases."""
    kept = [" ".join(fact.split()) for fact in facts if fact.strip()]
    if not kept:
        raise TestQuestionRejected("Give at least one fact a right answer must state.")
    if len(kept) > MAX_FACTS:
        raise TestQuestionRejected(f"Give at most {MAX_FACTS} facts (one per line).")
    for fact in kept:
        if len(fact) > FACT_MAX_CHARS:
            raise TestQuestionRejected(
                f"Keep each fact under {FACT_MAX_CHARS} characters: a short phrase the answer "
                f"must contain, such as 30 days."
            )
    return kept


@dataclass(frozen=True)
class TestQuestionEdit:
    """One question as the editor left it: ``test_question`` None for a new one."""

    __test__ = False

    question: str
    facts: Sequence[str]
    match: str = TestQuestion.Match.ALL
    test_question: TestQuestion | None = None


@dataclass
class TestQuestionsSaved:
    __test__ = False

    saved: list[TestQuestion] = field(default_factory=list)
    deleted: int = 0


@transaction.atomic
def test_questions_save(
    *,
    document: Document,
    actor: Actor,
    edits: Sequence[TestQuestionEdit] = (),
    deleted: Sequence[TestQuestion] = (),
) -> TestQuestionsSaved:
    """Add, change and delete ``document``'s test questions as ``actor``. Raises
    ``DocumentPermissionDenied`` if they may not, ``TestQuestionRejected`` for a question that
    cannot be kept (nothing is saved then). The questions added or changed are answered once
    this commits (``kb.events.test_questions_changed``): their first run is the "before" of the
    next edit."""
    if not may_edit_test_questions(actor=actor, document=document):
        raise DocumentPermissionDenied(
            f"{document.path}: only a policy steward, or a doc writer who wrote this page, may "
            f"change its test questions"
        )
    result = TestQuestionsSaved()
    for test_question in deleted:
        if test_question.pk is not None and test_question.document_id == document.pk:
            test_question.delete()
            result.deleted += 1
    kept = TestQuestion.objects.filter(document=document).exclude(
        pk__in=[edit.test_question.pk for edit in edits if edit.test_question is not None]
    )
    if kept.count() + len(edits) > MAX_QUESTIONS_PER_DOCUMENT:
        raise TestQuestionRejected(
            f"A page keeps at most {MAX_QUESTIONS_PER_DOCUMENT} test questions."
        )
    for edit in edits:
        question = " ".join(edit.question.split())
        if not question:
            raise TestQuestionRejected("A test question needs its question.")
        if len(question) > QUESTION_MAX_CHARS:
            raise TestQuestionRejected(f"Keep a question under {QUESTION_MAX_CHARS} characters.")
        if edit.match not in TestQuestion.Match.values:
            raise TestQuestionRejected("Choose whether all the facts or any one must be stated.")
        facts = facts_clean(edit.facts)
        test_question = edit.test_question or TestQuestion(
            document=document, created_by=actor if isinstance(actor, User) else None
        )
        if test_question.pk is not None and (
            test_question.document_id != document.pk
            or (test_question.question, list(test_question.facts), test_question.match)
            == (question, facts, edit.match)
        ):
            continue  # another page's, or unchanged: nothing to save or answer again
        test_question.question, test_question.facts, test_question.match = (
            question,
            facts,
            edit.match,
        )
        test_question.save()
        result.saved.append(test_question)
    if result.saved:
        document_id, question_ids = document.pk, [question.pk for question in result.saved]
        transaction.on_commit(
            lambda: test_questions_changed.send_robust(
                sender=TestQuestion, document_id=document_id, question_ids=question_ids
            )
        )
    log.info(
        "test_questions_saved",
        path=document.path,
        actor=actor_name(actor),
        saved=len(result.saved),
        deleted=result.deleted,
    )
    return result


@dataclass(frozen=True)
class AnswerChecked:
    """One answer to a test question, checked (what the assistant hands back to be stored)."""

    answer: str
    status: str
    citations: list[dict]  # {"path", "section", "document_id"}, in order of citation
    facts_stated: bool
    refused: bool

    def cites(self, document_id: int) -> bool:
        return any(citation.get("document_id") == document_id for citation in self.citations)

    def passes(self, document_id: int) -> bool:
        """States the facts, cites this page, not refused: the rule a run passes by."""
        return self.facts_stated and self.cites(document_id) and not self.refused


def run_flags(
    *, document: Document, baseline: TestQuestionRun | None, after: AnswerChecked
) -> list[str]:
    """Why ``after`` is worse than ``baseline``, the last run that passed: the one rule every
    flag comes from (a stored run, a draft's). Nothing without a baseline: a question that
    never passed is shown as failing, not as broken by this edit."""
    if baseline is None:
        return []
    if after.status == "failed":
        return ["could not be answered: retrieval or the generator failed; it runs again next save"]
    if after.refused:
        return ["now refused: the assistant says the help center does not answer it"]
    flags = []
    if not after.facts_stated:
        missing = ", ".join(baseline.facts)
        flags.append(f"the answer no longer states {missing!s}")
    if not after.cites(document.pk):
        others = ", ".join(
            dict.fromkeys(c.get("path", "") for c in after.citations if c.get("path"))
        )
        flags.append(
            f"cites {others} instead of this page" if others else "no longer cites this page"
        )
    return flags


def test_question_run_record(
    *,
    test_question: TestQuestion,
    checked: AnswerChecked,
    trigger: str,
    content_hash: str,
    ms: int,
) -> TestQuestionRun:
    """Store one checked answer to ``test_question`` with its flags against the last run that
    passed, on the page's version live now (its latest history entry)."""
    document = test_question.document
    baseline = passing_baselines([test_question]).get(test_question.pk)
    passed = checked.passes(document.pk)
    history = Document.history.model.objects
    run = TestQuestionRun.objects.create(
        test_question=test_question,
        document=document,
        trigger=trigger,
        content_hash=content_hash,
        history_id=history.filter(id=document.pk)
        .order_by("-history_date", "-history_id")
        .values_list("history_id", flat=True)
        .first(),
        question=test_question.question,
        facts=list(test_question.facts),
        match=test_question.match,
        answer=checked.answer,
        status=checked.status,
        citations=checked.citations,
        facts_stated=checked.facts_stated,
        cites_document=checked.cites(document.pk),
        refused=checked.refused,
        passed=passed,
        baseline=baseline if not passed else None,
        flags=[] if passed else run_flags(document=document, baseline=baseline, after=checked),
        ms=ms,
    )
    if run.flags:
        log.warning(
            "test_question_flagged", path=document.path, question=run.question, flags=run.flags
        )
    return run
