"""What visitors type reaches other visitors only through a steward: the most asked answered
questions are proposed in admin, and the home page's "Popular questions" are the approved ones."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from assistant.models import Conversation, Message, SuggestedQuestion
from assistant.services.suggestions import (
    SuggestionPermissionDenied,
    suggestion_save,
    suggestions_propose,
    suggestions_review,
)
from assistant.tasks import suggestions_propose_task

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("empty_cache")]

ATTACK = "How do refunds work? Faster: text your card number to +1 415 555 0199"
CHANGELIST = "/admin/assistant/suggestedquestion/"


def _suggestions(html: str) -> list[str]:
    return re.findall(r'<button type="submit" name="question" value="([^"]*)"', html)


def _home_page_suggestions() -> list[str]:
    return _suggestions(Client().get("/").content.decode())


def _asked(question: str, *, by: str) -> Message:
    conversation = Conversation.objects.create(client_key_hash=by)
    return Message.objects.create(
        conversation=conversation,
        question=question,
        retrieval_query=question,
        status=Message.Status.ANSWERED,
        snapshot={"audiences": ["public"]},
    )


def _proposal(question: str) -> SuggestedQuestion:
    return SuggestedQuestion.objects.get(question=question)


def test_a_question_asked_from_six_cookie_jars_never_reaches_another_visitor_unapproved(
    help_center,
) -> None:
    # given: the same question asked and answered from six fresh cookie jars
    for _ in range(6):
        Client().post("/ask", {"question": ATTACK}, follow=True)
    assert Message.objects.filter(question=ATTACK, status=Message.Status.ANSWERED).count() == 6

    # when: proposals are made (the beat task) and a seventh visitor opens the home page
    suggestions_propose_task()
    html = Client().get("/").content.decode()

    # then: the page offers nothing a visitor typed, and this one is not even proposed (it asks
    # readers for their card number)
    assert _suggestions(html) == []
    assert "415 555 0199" not in html
    assert not SuggestedQuestion.objects.exists()


def test_a_proposal_reaches_visitors_only_after_a_steward_approves_it_in_admin(
    writer_client: Client, steward_client: Client
) -> None:
    # given: a question asked and answered by three clients, proposed
    for client in "abc":
        _asked("Which currencies do you support?", by=client)
    suggestions_propose()
    proposal = _proposal("Which currencies do you support?")
    assert (proposal.status, proposal.askers) == (SuggestedQuestion.Status.PROPOSED, 3)
    assert _home_page_suggestions() == []

    # when: a doc writer tries the approve action
    approve = {"action": "approve", "_selected_action": [proposal.pk]}
    writer_client.post(CHANGELIST, approve)

    # then: nothing changes (writers read proposals; the action is not theirs)
    assert writer_client.get(CHANGELIST).status_code == 200
    assert _proposal("Which currencies do you support?").status == SuggestedQuestion.Status.PROPOSED
    assert _home_page_suggestions() == []

    # when: a steward approves it
    response = steward_client.post(CHANGELIST, approve, follow=True)

    # then: every visitor is offered it, and admin says who approved it
    assert "1 approved" in response.content.decode()
    approved = _proposal("Which currencies do you support?")
    assert approved.status == SuggestedQuestion.Status.APPROVED
    assert approved.reviewed_by is not None and approved.reviewed_by.username == "steward"
    assert _home_page_suggestions() == ["Which currencies do you support?"]


def test_only_a_steward_may_write_approve_or_decline_suggestions(writer, steward) -> None:
    # given
    for client in "ab":
        _asked("Is there a free trial?", by=client)
    (proposal,) = suggestions_propose()

    # when / then: the service refuses a doc writer on every path
    with pytest.raises(SuggestionPermissionDenied, match="Only a policy steward"):
        suggestions_review(suggestions=[proposal], actor=writer, approve=True)
    with pytest.raises(SuggestionPermissionDenied):
        suggestions_review(suggestions=[proposal], actor=writer, approve=False)
    with pytest.raises(SuggestionPermissionDenied):
        suggestion_save(suggestion=SuggestedQuestion(question="Typed by a writer?"), actor=writer)
    assert _proposal("Is there a free trial?").status == SuggestedQuestion.Status.PROPOSED
    assert not SuggestedQuestion.objects.filter(question="Typed by a writer?").exists()

    # and a steward's own question is on the page at once (a steward wrote it)
    suggestion_save(suggestion=SuggestedQuestion(question="How do refunds work?"), actor=steward)
    assert _home_page_suggestions() == ["How do refunds work?"]


def test_a_steward_writes_a_suggestion_in_admin_and_a_doc_writer_may_not(
    writer_client: Client, steward_client: Client
) -> None:
    form = {"question": "How do refunds work?", "order": "1", "active": "on"}

    assert writer_client.post(f"{CHANGELIST}add/", form).status_code == 403
    assert _home_page_suggestions() == []

    assert steward_client.post(f"{CHANGELIST}add/", form).status_code == 302
    assert _home_page_suggestions() == ["How do refunds work?"]


def test_a_declined_proposal_is_never_shown_nor_proposed_again(steward) -> None:
    # given: a visitor's probe asked from two cookie jars, proposed
    probe = "refund' OR '1'='1"
    for client in "ab":
        _asked(probe, by=client)
    (proposal,) = suggestions_propose()

    # when: the steward declines it, and more clients ask it
    suggestions_review(suggestions=[proposal], actor=steward, approve=False)
    for client in "cde":
        _asked(probe.upper(), by=client)

    # then: it is not proposed again, in any casing, and never shown
    assert suggestions_propose() == []
    assert SuggestedQuestion.objects.get().status == SuggestedQuestion.Status.DECLINED
    assert _home_page_suggestions() == []


def test_proposing_again_adds_nothing_and_recounts_the_askers() -> None:
    for client in "ab":
        _asked("Is there a free trial?", by=client)
    assert len(suggestions_propose()) == 1

    _asked("IS THERE A FREE TRIAL?", by="c")

    assert suggestions_propose() == []
    assert _proposal("Is there a free trial?").askers == 3


def test_questions_with_invisible_or_direction_characters_are_not_proposed() -> None:
    # given: U+202E would show a steward "…?yrtnuoc" reversed: not what visitors would read
    for text in ("Where is \u202eyrtnuoc my?", "Is\u200bthere a free trial?"):
        for client in "ab":
            _asked(text, by=client)
    for client in "ab":
        _asked("Is there a free trial?", by=client)

    # when
    proposals = suggestions_propose()

    # then
    assert [p.question for p in proposals] == ["Is there a free trial?"]
