"""Reads of test questions: each question's latest result, the flagged questions of a page
list, of a page's history and of the stewards' attention page. A question is flagged while its
latest run is (its flags say why, against the last run that passed)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.db.models import Q

from kb.models import Document
from kb.test_questions.models import TestQuestion, TestQuestionRun


@dataclass(frozen=True)
class TestQuestionResult:
    """A question with its latest run and, when that run is flagged, the run it is worse than."""

    __test__ = False

    test_question: TestQuestion
    latest: TestQuestionRun | None
    before: TestQuestionRun | None  # the baseline, for a flagged latest run

    @property
    def state(self) -> str:
        if self.latest is None:
            return "not run yet"
        if self.latest.flags:
            return "flagged"
        return "passes" if self.latest.passed else "never passed"


def latest_runs(question_ids: Iterable[int]) -> dict[int, TestQuestionRun]:
    runs = (
        TestQuestionRun.objects.filter(test_question_id__in=list(question_ids))
        .order_by("test_question_id", "-created_at", "-id")
        .distinct("test_question_id")
        .select_related("baseline")
    )
    return {run.test_question_id: run for run in runs}


def passing_baselines(questions: Sequence[TestQuestion]) -> dict[int, TestQuestionRun]:
    """Each question's last run that passed with the wording it has now (its question, facts and
    match): what a later run is flagged against. A run of other facts is no baseline, or
    changing a question's facts would be flagged as an edit of the page breaking it."""
    same_wording = Q(pk__in=[])
    for question in questions:
        same_wording |= Q(
            test_question_id=question.pk,
            question=question.question,
            facts=list(question.facts),
            match=question.match,
        )
    runs = (
        TestQuestionRun.objects.filter(same_wording, passed=True)
        .order_by("test_question_id", "-created_at", "-id")
        .distinct("test_question_id")
    )
    return {run.test_question_id: run for run in runs}


def test_question_results(*, document: Document) -> list[TestQuestionResult]:
    """The page's questions, each with its latest run (and that run's "before" if flagged)."""
    questions = list(TestQuestion.objects.filter(document=document))
    latest = latest_runs(question.pk for question in questions)
    results = []
    for question in questions:
        run = latest.get(question.pk)
        before = run.baseline if run is not None and run.flags else None
        results.append(TestQuestionResult(question, run, before))
    return results


def flagged_counts(*, documents: Sequence[Document]) -> dict[int, tuple[int, int]]:
    """Per page: (flagged questions, questions), for the page list, in two queries."""
    totals = Counter(
        TestQuestion.objects.filter(document__in=documents).values_list("document_id", flat=True)
    )
    question_ids = TestQuestion.objects.filter(document__in=documents).values_list("pk", flat=True)
    flagged = Counter(run.document_id for run in latest_runs(question_ids).values() if run.flags)
    return {document_id: (flagged[document_id], total) for document_id, total in totals.items()}


def flags_by_version(
    *, document_id: int, history_ids: Iterable[int]
) -> dict[int, list[TestQuestionRun]]:
    """The flagged runs made after each of these saved versions was indexed, by history id."""
    runs = (
        TestQuestionRun.objects.filter(
            document_id=document_id, history_id__in=list(history_ids), trigger="indexed"
        )
        .exclude(flags=[])
        .select_related("baseline")
        .order_by("created_at", "id")
    )
    flagged: dict[int, list[TestQuestionRun]] = {}
    for run in runs:
        assert run.history_id is not None
        flagged.setdefault(run.history_id, []).append(run)
    return flagged


def flagged_results() -> list[TestQuestionResult]:
    """Every flagged question of a page not retired, the most recently flagged first."""
    question_ids = TestQuestion.objects.exclude(
        document__status=Document.Status.RETIRED
    ).values_list("pk", flat=True)
    latest = [run for run in latest_runs(question_ids).values() if run.flags]
    questions = TestQuestion.objects.select_related("document").in_bulk(
        [run.test_question_id for run in latest]
    )
    results = [
        TestQuestionResult(questions[run.test_question_id], run, run.baseline) for run in latest
    ]
    return sorted(results, key=lambda result: result.latest.created_at, reverse=True)  # type: ignore[union-attr]
