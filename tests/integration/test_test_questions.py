"""Test questions guard an edit: after each save of a page is indexed, its questions are
answered by the real pipeline over the live index, and one whose fact is no longer stated,
whose citation moved to another page, or that is now refused is flagged with its answers before
and after. Celery runs eagerly here (the same tasks, in this process); the queue routing is
checked against the real broker in ``test_a_save_sends_the_questions_to_the_checks_queue``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from celery import current_app
from django.conf import settings
from django.contrib.auth.models import User

from assistant.models import Message
from assistant.services import test_question_runs
from kb.actors import SYSTEM
from kb.models import Chunk, Document, TestQuestion, TestQuestionRun
from kb.services import DocumentPermissionDenied, document_save
from kb.test_questions import selectors, services
from kb.test_questions.services import TestQuestionEdit
from tests.conftest import DOC_WRITERS, POLICY_STEWARDS, member, signed_in
from tests.support.chat import REFUND_QUESTION

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("empty_cache")]

MONTHLY = (
    "Monthly plans are refundable within 30 days of purchase, no questions asked. The refund "
    "goes back to the card that paid for the plan."
)
Commit = Callable[..., object]


@pytest.fixture
def eager(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(current_app.conf, "task_always_eager", True)


@pytest.fixture
def refunds(help_center: Path, eager: None) -> Document:
    return Document.objects.get(path="policies/refunds.md")


def _guard(document: Document, commit: Commit, *, question: str = REFUND_QUESTION) -> TestQuestion:
    """A steward's test question on ``document``: its first run is the baseline."""
    with commit(execute=True):
        saved = services.test_questions_save(
            document=document,
            actor=SYSTEM,
            edits=[TestQuestionEdit(question=question, facts=["30 days"])],
        )
    (test_question,) = saved.saved
    return test_question


def _edit(document: Document, commit: Commit, body: str, *, title: str | None = None) -> None:
    document.refresh_from_db()
    document.body = body
    document.title = title or document.title
    with commit(execute=True):
        document_save(document=document, actor=SYSTEM)


def _runs(test_question: TestQuestion) -> list[TestQuestionRun]:
    return list(TestQuestionRun.objects.filter(test_question=test_question).order_by("id"))


def test_an_edit_that_removes_the_fact_is_flagged_with_the_answers_before_and_after(
    refunds: Document, django_capture_on_commit_callbacks
) -> None:
    # given a test question whose first run passes
    test_question = _guard(refunds, django_capture_on_commit_callbacks)
    (baseline,) = _runs(test_question)
    assert baseline.passed, baseline.answer
    assert "30 days" in baseline.answer and "policies/refunds.md" in baseline.cited_paths

    # when an edit takes the number of days out of the page
    _edit(
        refunds,
        django_capture_on_commit_callbacks,
        refunds.body.replace("within 30 days of purchase", "within a short time of purchase"),
    )

    # then the run after its indexing is flagged, against the run that passed
    after = _runs(test_question)[-1]
    assert (
        after.trigger == "indexed"
        and after.content_hash == Document.objects.get(pk=refunds.pk).content_hash
    )
    assert after.flags == ["the answer no longer states 30 days"]
    assert after.baseline == baseline and "30 days" not in after.answer
    (result,) = selectors.test_question_results(document=refunds)
    assert result.state == "flagged" and result.before == baseline and result.latest == after
    assert [flagged.latest for flagged in selectors.flagged_results()] == [after]
    assert not Message.objects.exists()  # the runs leave no customer messages behind

    # and the page's list row, editor, history entry and the attention page show it
    steward = signed_in(member("steward-reader", POLICY_STEWARDS))
    listed = steward.get("/admin/kb/document/").content.decode()
    assert "1 of 1 flagged" in listed
    editor = steward.get(f"/admin/kb/document/{refunds.pk}/change/").content.decode()
    assert "the answer no longer states 30 days" in editor and "within 30 days" in editor
    history = steward.get(f"/admin/kb/document/{refunds.pk}/history/").content.decode()
    flagged_entry = history.split("Test questions flagged after this save was indexed", 1)[1]
    assert REFUND_QUESTION in flagged_entry and "within a short time" in flagged_entry
    assert history.count("Test questions flagged after this save") == 1  # that save's entry only
    attention = steward.get("/admin/attention/").content.decode()
    assert "Test questions an edit broke" in attention and "within 30 days" in attention


def test_changing_a_questions_facts_is_never_flagged_against_a_run_of_the_old_facts(
    refunds: Document, django_capture_on_commit_callbacks
) -> None:
    # given a question whose first run passes on "30 days"
    test_question = _guard(refunds, django_capture_on_commit_callbacks)
    assert _runs(test_question)[0].passed

    # when a steward changes its facts to one the page does not state
    with django_capture_on_commit_callbacks(execute=True):
        services.test_questions_save(
            document=refunds,
            actor=SYSTEM,
            edits=[
                TestQuestionEdit(
                    question=REFUND_QUESTION, facts=["90 days"], test_question=test_question
                )
            ],
        )

    # then the run of the new facts fails on its own, not as broken by an edit of the page
    after = _runs(test_question)[-1]
    assert after.facts == ["90 days"] and not after.passed
    assert after.flags == [] and after.baseline is None
    (result,) = selectors.test_question_results(document=refunds)
    assert result.state == "never passed"


def test_an_answer_that_moves_to_another_page_is_flagged(
    refunds: Document, django_capture_on_commit_callbacks
) -> None:
    # given another page saying the same under a heading that names it less closely, and a
    # question on the refund page that passes
    with django_capture_on_commit_callbacks(execute=True):
        document_save(
            document=Document(
                path="billing/monthly-plans.md",
                title="Billing Questions",
                body="# Billing Questions\n\n## Money back\n\n" + MONTHLY + "\n",
            ),
            actor=SYSTEM,
        )
    test_question = _guard(refunds, django_capture_on_commit_callbacks)
    assert _runs(test_question)[0].passed, _runs(test_question)[0].citations

    # when the refund page is rewritten about something else
    _edit(
        refunds,
        django_capture_on_commit_callbacks,
        "# Office Hours\n\nOur office in Leeds is open from nine to five on weekdays.\n",
        title="Office Hours",
    )

    # then the answer still states the fact, from the other page, and that is flagged
    after = _runs(test_question)[-1]
    assert after.facts_stated and not after.cites_document
    assert after.cited_paths and "policies/refunds.md" not in after.cited_paths
    assert after.flags == ["cites billing/monthly-plans.md instead of this page"]


def test_an_edit_that_leaves_nothing_to_answer_from_is_flagged_as_refused(
    refunds: Document, django_capture_on_commit_callbacks
) -> None:
    test_question = _guard(refunds, django_capture_on_commit_callbacks)

    _edit(
        refunds,
        django_capture_on_commit_callbacks,
        "# Office Hours\n\nOur office in Leeds is open from nine to five on weekdays.\n",
        title="Office Hours",
    )

    after = _runs(test_question)[-1]
    assert after.refused and after.status == "not_in_docs"
    assert after.flags == ["now refused: the assistant says the help center does not answer it"]
    assert after.baseline is not None and "30 days" in after.baseline.answer


def test_an_unrelated_edit_flags_nothing(
    refunds: Document, django_capture_on_commit_callbacks
) -> None:
    test_question = _guard(refunds, django_capture_on_commit_callbacks)

    # when the annual section changes, and another page is edited
    _edit(
        refunds,
        django_capture_on_commit_callbacks,
        refunds.body.replace("within 60 days of payment", "within 90 days of payment"),
    )
    rates = Document.objects.get(path="api/rate-limits.md")
    _edit(rates, django_capture_on_commit_callbacks, rates.body.replace("100", "200"))

    # then the question ran again after its own page's edit only, and passes
    runs = _runs(test_question)
    assert [run.trigger for run in runs] == ["question", "indexed"]
    assert all(run.passed and not run.flags for run in runs)
    assert selectors.flagged_results() == []


def test_a_draft_is_answered_without_saving_anything(
    refunds: Document, django_capture_on_commit_callbacks
) -> None:
    # given a guarded page, indexed
    test_question = _guard(refunds, django_capture_on_commit_callbacks)
    chunks_before = list(Chunk.objects.filter(document=refunds).values_list("id", "text"))
    runs_before = _runs(test_question)

    # when a draft without the fact is answered, and then the page's own text
    draft = refunds.body.replace("within 30 days of purchase", "within a short time of purchase")
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        (outcome,) = test_question_runs.test_questions_draft_run(
            document=refunds, title=refunds.title, body=draft
        )
        (unchanged,) = test_question_runs.test_questions_draft_run(
            document=refunds, title=refunds.title, body=refunds.body
        )

    # then the draft would be flagged, its answer beside the live one; the page is as it was
    assert outcome.flags == ["the answer no longer states 30 days"]
    assert "30 days" not in outcome.draft.answer and outcome.draft.cites(refunds.pk)
    assert outcome.live == runs_before[-1] and "30 days" in outcome.live.answer
    assert unchanged.flags == [] and unchanged.passes
    refunds.refresh_from_db()
    assert "within 30 days of purchase" in refunds.body
    assert list(Chunk.objects.filter(document=refunds).values_list("id", "text")) == chunks_before
    assert _runs(test_question) == runs_before and not Message.objects.exists()
    assert callbacks == []  # no indexing or test-question run was sent for the draft


def test_the_editor_shows_the_flag_and_answers_a_draft(
    refunds: Document, django_capture_on_commit_callbacks
) -> None:
    test_question = _guard(refunds, django_capture_on_commit_callbacks)
    author = member("author", DOC_WRITERS)
    client = signed_in(author)

    response = client.post(
        f"/admin/test-questions/{refunds.pk}/draft/",
        {"title": refunds.title, "body": "# Refund Policy\n\nRefunds take a while.\n"},
    )

    assert response.status_code == 200
    html = response.content.decode()
    assert "Saving would flag it" in html and test_question.question in html
    assert "On this draft" in html and "30 days" in html  # the live answer, beside the draft's
    assert (
        signed_in(member("reader", is_staff=False))
        .post(f"/admin/test-questions/{refunds.pk}/draft/", {"body": "x"})
        .status_code
        == 302
    )  # to the admin's sign-in


def test_writers_change_the_questions_of_their_pages_and_stewards_of_every_page(
    refunds: Document, writer: User, steward: User, django_capture_on_commit_callbacks
) -> None:
    edit = [TestQuestionEdit(question=REFUND_QUESTION, facts=["30 days"])]
    other = member("other-writer", DOC_WRITERS)
    # the writer saves a version of the page: it is theirs now, not the other writer's
    refunds.body += "\nRefunds are paid in the currency of the purchase.\n"
    refunds._history_user = writer  # type: ignore[attr-defined]
    with django_capture_on_commit_callbacks(execute=True):
        document_save(document=refunds, actor=writer)

    with pytest.raises(DocumentPermissionDenied):
        services.test_questions_save(document=refunds, actor=other, edits=edit)
    with pytest.raises(DocumentPermissionDenied):
        services.test_questions_save(
            document=refunds, actor=member("reader", is_staff=False), edits=edit
        )
    with django_capture_on_commit_callbacks(execute=True):
        (mine,) = services.test_questions_save(document=refunds, actor=writer, edits=edit).saved
    rates = Document.objects.get(path="api/rate-limits.md")
    with pytest.raises(DocumentPermissionDenied):
        services.test_questions_save(document=rates, actor=writer, edits=edit)
    with django_capture_on_commit_callbacks(execute=True):
        assert services.test_questions_save(document=rates, actor=steward, edits=edit).saved

    # the admin: the author edits the questions inline; another writer sees them read-only
    page = f"/admin/kb/document/{refunds.pk}/change/"
    assert 'name="test_questions-0-question"' in signed_in(writer).get(page).content.decode()
    others_view = signed_in(other).get(page).content.decode()
    assert mine.question in others_view and 'name="test_questions-0-question"' not in others_view
    assert "Answer the test questions on this draft" in others_view  # they may still try a draft
    assert TestQuestion.objects.filter(document=refunds).count() == 1


def test_a_save_sends_the_questions_to_the_checks_queue(
    refunds: Document, django_capture_on_commit_callbacks, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.integration.test_queues import _drain

    test_question = _guard(refunds, django_capture_on_commit_callbacks)
    monkeypatch.setitem(current_app.conf, "task_always_eager", False)
    _drain(settings.CHECKS_QUEUE), _drain(settings.INTERACTIVE_QUEUE)
    from kb.services import document_index_all_models

    _edit(refunds, django_capture_on_commit_callbacks, refunds.body + "\nOne more line.\n")
    assert _drain(settings.INTERACTIVE_QUEUE) == [("kb.tasks.document_index_task", [refunds.pk])]
    with django_capture_on_commit_callbacks(execute=True):
        document_index_all_models(document_id=refunds.pk)

    assert _drain(settings.CHECKS_QUEUE) == [
        ("assistant.tasks.test_questions_run_task", [refunds.pk, "indexed", None])
    ]
    assert _drain(settings.INTERACTIVE_QUEUE) == []
    assert len(_runs(test_question)) == 1  # only the baseline: the run waits for its worker


def test_a_writer_who_may_not_change_the_questions_still_saves_the_page(
    refunds: Document, django_capture_on_commit_callbacks
) -> None:
    # given a question on the page, and a writer who never wrote it
    _guard(refunds, django_capture_on_commit_callbacks)
    client = signed_in(member("other-writer", DOC_WRITERS))
    page = f"/admin/kb/document/{refunds.pk}/change/"
    form = client.get(page).context["adminform"].form
    data = {name: form[name].value() or "" for name in form.fields}
    data.update(
        {
            "body": refunds.body + "\nOne more line.\n",
            "index_states-TOTAL_FORMS": "1",
            "index_states-INITIAL_FORMS": "1",
            # a forged row: the inline is read-only for them, so it is never saved
            "test_questions-TOTAL_FORMS": "1",
            "test_questions-INITIAL_FORMS": "0",
            "test_questions-0-question": "Forged?",
            "test_questions-0-facts": "x",
            "test_questions-0-match": "all",
        }
    )

    response = client.post(page, data)

    assert response.status_code == 302, response.content.decode()[:2000]
    assert "One more line." in Document.objects.get(pk=refunds.pk).body
    assert list(TestQuestion.objects.values_list("question", flat=True)) == [REFUND_QUESTION]
