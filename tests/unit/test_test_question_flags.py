"""What a test question's run is flagged for, against the last run that passed (one rule for
stored runs and drafts: ``kb.test_questions.services.run_flags``)."""

from __future__ import annotations

from kb.models import Document, TestQuestionRun
from kb.test_questions.services import AnswerChecked, run_flags

PAGE = Document(pk=7, path="policies/refunds.md")
BASELINE = TestQuestionRun(facts=["30 days"], passed=True)


def _answer(
    text: str = "Refunds within 30 days.",
    *,
    cited: tuple[tuple[int, str], ...] = ((7, "policies/refunds.md"),),
    stated: bool = True,
    status: str = "answered",
) -> AnswerChecked:
    return AnswerChecked(
        answer=text,
        status=status,
        citations=[{"document_id": pk, "path": path, "section": ""} for pk, path in cited],
        facts_stated=stated,
        refused=status == "not_in_docs",
    )


def test_a_passing_answer_is_not_flagged() -> None:
    assert run_flags(document=PAGE, baseline=BASELINE, after=_answer()) == []


def test_a_question_that_never_passed_is_never_flagged() -> None:
    assert run_flags(document=PAGE, baseline=None, after=_answer(stated=False, cited=())) == []


def test_each_way_an_answer_breaks_has_its_reason() -> None:
    moved = _answer(cited=((9, "billing/plans.md"), (9, "billing/plans.md")))
    assert run_flags(document=PAGE, baseline=BASELINE, after=moved) == [
        "cites billing/plans.md instead of this page"
    ]
    assert run_flags(document=PAGE, baseline=BASELINE, after=_answer(stated=False)) == [
        "the answer no longer states 30 days"
    ]
    refused = _answer("Not in our docs.", cited=(), stated=False, status="not_in_docs")
    assert run_flags(document=PAGE, baseline=BASELINE, after=refused) == [
        "now refused: the assistant says the help center does not answer it"
    ]
    failed = _answer("Sorry.", cited=(), stated=False, status="failed")
    assert run_flags(document=PAGE, baseline=BASELINE, after=failed)[0].startswith(
        "could not be answered"
    )
    both = _answer(stated=False, cited=())
    assert run_flags(document=PAGE, baseline=BASELINE, after=both) == [
        "the answer no longer states 30 days",
        "no longer cites this page",
    ]
