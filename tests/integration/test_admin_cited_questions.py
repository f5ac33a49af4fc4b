"""The document editor lists the customer questions its answers cited it for, with feedback."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User
from django.db import connection
from django.test import Client

from assistant.models import Conversation, Feedback, Message
from assistant.selectors import messages_citing, questions_citing_document
from kb.models import Document
from tests.conftest import member, signed_in

pytestmark = pytest.mark.django_db


def _page(path: str) -> Document:
    return Document.objects.create(path=path, title=path, body=f"# {path}\n\nText.\n")


def _asked(question: str, *cited: Document) -> Message:
    conversation = Conversation.objects.create(client_key_hash="client")
    citations = [
        {"number": number, "document_id": document.pk, "path": document.path, "chunk_id": 1}
        for number, document in enumerate(cited, start=1)
    ]
    return Message.objects.create(
        conversation=conversation, question=question, status="answered", citations=citations
    )


def test_the_latest_twenty_questions_citing_the_page_newest_first(
    django_assert_num_queries,
) -> None:
    # given: 22 answers citing the refund page (some with another page), 1 citing only another
    refunds, other = _page("policies/refunds.md"), _page("billing/invoices.md")
    asked = [
        _asked(f"refund question {n}", refunds, *([other] if n % 2 else [])) for n in range(22)
    ]
    _asked("invoice question", other)
    Feedback.objects.create(message=asked[-1], client_key_hash="a", vote="down", comment="Wrong")
    Feedback.objects.create(message=asked[-1], client_key_hash="b", vote="up")

    # when: with their feedback, in two queries whatever the number of rows
    with django_assert_num_queries(2):
        questions = questions_citing_document(document_id=refunds.pk)
        feedback = [[(f.vote, f.comment) for f in message.feedback.all()] for message in questions]

    # then
    assert [message.question for message in questions] == [
        f"refund question {n}" for n in range(21, 1, -1)
    ]
    assert sorted(feedback[0]) == [("down", "Wrong"), ("up", "")]
    assert all(not votes for votes in feedback[1:])


def test_editor_shows_the_questions_with_feedback_and_links_to_each(writer: User) -> None:
    # given
    refunds = _page("policies/refunds.md")
    message = _asked("Can I get a refund after 40 days?", refunds)
    Feedback.objects.create(
        message=message, client_key_hash="a", vote="down", comment="It said 30 days"
    )
    _asked("How do invoices work?", _page("billing/invoices.md"))

    # when: a doc writer opens the page
    html = signed_in(writer).get(f"/admin/kb/document/{refunds.pk}/change/").content.decode()

    # then
    panel = html.split('id="questions-answered"', 1)[1].split("</table>", 1)[0]
    assert "Questions answered from this page" in html
    assert f'href="/admin/assistant/message/{message.pk}/change/"' in panel
    assert "Can I get a refund after 40 days?" in panel
    assert "Not helpful: <q>It said 30 days</q>" in panel
    assert "How do invoices work?" not in panel
    assert (
        signed_in(writer).get(f"/admin/assistant/message/{message.pk}/change/").status_code == 200
    )


def test_a_page_no_answer_cited_says_so(writer: User) -> None:
    page = _page("policies/new.md")

    html = signed_in(writer).get(f"/admin/kb/document/{page.pk}/change/").content.decode()

    assert "No answer has cited this page yet." in html


def test_staff_who_may_not_read_answers_do_not_see_the_questions() -> None:
    # given: staff who may edit documents but not read customers' answers
    editor = member("editor")
    editor.user_permissions.add(*_kb_permissions("view_document", "change_document"))
    refunds = _page("policies/refunds.md")
    _asked("A customer's private question", refunds)

    html = signed_in(editor).get(f"/admin/kb/document/{refunds.pk}/change/").content.decode()

    assert "A customer&#x27;s private question" not in html
    assert "shown to staff who may view answers" in html


def _kb_permissions(*codenames: str):
    return Permission.objects.filter(content_type__app_label="kb", codename__in=codenames)


def test_new_page_form_has_no_questions_panel(writer: User) -> None:
    client: Client = signed_in(writer)

    assert "questions-answered" not in client.get("/admin/kb/document/add/").content.decode()


def test_the_citing_messages_are_found_through_the_citations_index() -> None:
    # given: 10,000 answers citing one of 1,000 pages each, made in SQL so the test stays fast
    conversation = Conversation.objects.create(client_key_hash="client")
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO assistant_message (public_id, conversation_id, question, retrieval_query,
                answer, status, citations, generator, quoted, cached, degraded, snapshot,
                created_at)
            SELECT gen_random_uuid(), %s, 'question ' || g, '', '', 'answered',
                   jsonb_build_array(jsonb_build_object('number', 1, 'document_id', g %% 1000)),
                   '', false, false, false, '{}'::jsonb, now()
            FROM generate_series(1, 10000) AS g
            """,
            [conversation.pk],
        )
        cursor.execute("ANALYZE assistant_message")

    # when
    plan = messages_citing(document_id=7).explain()

    # then
    assert "assistant_msg_citations" in plan, plan
    assert messages_citing(document_id=7).count() == 10
