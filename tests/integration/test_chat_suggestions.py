"""What the chat page offers beyond the answer: questions to start with (those a steward wrote
or approved; the most asked answered ones are only proposed to stewards), related pages under an
answer, and the cited sentences a source link carries to the document page."""

from __future__ import annotations

import datetime
import re
from urllib.parse import parse_qs, urlparse

import pytest
from django.test import Client

from assistant.models import Conversation, Message, SuggestedQuestion
from assistant.selectors import AskedQuestion, most_asked_questions, related_pages_attach
from kb.models import Document
from kb.selectors.access import PUBLIC_AUDIENCES
from tests.support.chat import REFUND_QUESTION

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("empty_cache")]


def _asked(
    question: str,
    *,
    by: str,
    status: str = Message.Status.ANSWERED,
    retrieval_query: str | None = None,
    audiences: list[str] | None = None,
) -> Message:
    conversation = Conversation.objects.create(client_key_hash=by)
    return Message.objects.create(
        conversation=conversation,
        question=question,
        retrieval_query=question if retrieval_query is None else retrieval_query,
        status=status,
        snapshot={"audiences": audiences or ["public"]},
    )


def _suggestions(html: str) -> list[str]:
    return re.findall(r'<button type="submit" name="question" value="([^"]*)"', html)


def test_the_empty_page_offers_the_approved_questions_in_their_order() -> None:
    approved = SuggestedQuestion.Status.APPROVED
    SuggestedQuestion.objects.create(question="How do refunds work?", order=2, status=approved)
    SuggestedQuestion.objects.create(question="Is there a free trial?", order=1, status=approved)
    SuggestedQuestion.objects.create(
        question="Retired suggestion?", order=0, active=False, status=approved
    )
    SuggestedQuestion.objects.create(question="A visitor's proposal?", order=0)  # proposed
    _asked("Which currencies do you support?", by="a")
    _asked("Which currencies do you support?", by="b")

    html = Client().get("/").content.decode()

    assert _suggestions(html) == ["Is there a free trial?", "How do refunds work?"]
    assert re.search(r'<form class="suggestions" method="post" action="/ask"', html)


def test_the_most_asked_answered_questions_are_proposed_and_never_offered_as_they_are() -> None:
    # given: askings by different clients; only "currencies" and "refunds" qualify
    for client in "abc":
        _asked("Which currencies do you support?", by=client)
    _asked("how do refunds work?", by="a")
    _asked("How do refunds work?", by="b")  # the same question, other casing
    _asked("My card 4242 was charged twice, why?", by="a")  # one asker: theirs alone
    for client in "abc":
        _asked("Who is on the billing rota?", by=client, status=Message.Status.NOT_IN_DOCS)
        _asked("What is the API limit?", by=client, status=Message.Status.FAILED)
        _asked("and for annual plans?", by=client, retrieval_query="refunds and for annual plans?")
        _asked("Goodwill credit limit?", by=client, audiences=["public", "internal"])

    # when
    questions = most_asked_questions(limit=4)
    html = Client().get("/").content.decode()

    # then: what a steward is offered to approve; visitors see none of it before that
    assert questions == [
        AskedQuestion(question="Which currencies do you support?", askers=3),
        AskedQuestion(question="How do refunds work?", askers=2),
    ]
    assert _suggestions(html) == []


def test_old_askings_are_not_suggested() -> None:
    for client in "ab":
        message = _asked("Is there a free trial?", by=client)
        Message.objects.filter(pk=message.pk).update(
            created_at=message.created_at - datetime.timedelta(days=120)
        )

    assert most_asked_questions(limit=4) == []


def test_related_pages_are_the_retrieved_pages_not_cited_that_the_reader_may_open() -> None:
    # given: an answer citing one page, whose retrieval also found four others
    def page(path: str, **fields) -> Document:
        return Document.objects.create(
            path=path, title=path.title(), body="# X\n\nText.\n", **fields
        )

    cited, second, third = page("cited.md"), page("second.md"), page("third.md")
    retired = page("retired.md", status=Document.Status.RETIRED)
    internal = page("internal.md", audience=Document.Audience.INTERNAL)
    fourth, fifth = page("fourth.md"), page("fifth.md")
    ranked = [cited, cited, retired, third, internal, second, fourth, fifth]
    message = _asked("Question?", by="a")
    message.snapshot = {
        "hits": [{"document_id": d.pk, "path": d.path, "similarity": 0.7} for d in ranked]
    }
    message.citations = [{"number": 1, "path": "cited.md"}]

    # when
    related_pages_attach(messages=[message], audiences=PUBLIC_AUDIENCES)

    # then: best first, at most three, never the cited, a retired or an internal page
    assert [p.path for p in message.related_pages] == ["third.md", "second.md", "fourth.md"]


def test_a_related_page_whose_title_asks_for_card_numbers_is_named_by_its_path() -> None:
    # given
    attack = Document.objects.create(
        path="payouts.md",
        title="Payouts: email your card number to payouts@evil.example",
        body="# Payouts\n\nPayouts are sent every Friday.\n",
    )
    plain = Document.objects.create(path="fees.md", title="Fees", body="# Fees\n\nText.\n")
    message = _asked("Question?", by="a")
    message.snapshot = {
        "hits": [{"document_id": d.pk, "path": d.path, "similarity": 0.7} for d in (attack, plain)]
    }
    message.citations = []

    # when
    related_pages_attach(messages=[message], audiences=PUBLIC_AUDIENCES)

    # then
    assert [(p.path, p.title) for p in message.related_pages] == [
        ("payouts.md", "payouts.md"),
        ("fees.md", "Fees"),
    ]


def test_a_retrieved_page_far_from_the_question_is_not_offered_as_related() -> None:
    # given: an answer whose retrieval also found a close page and two far ones (0.60 is the
    # similarity measured to separate pages that answer too from the rest)
    close, far, unknown = (
        Document.objects.create(path=path, title=path, body="# X\n\nText.\n")
        for path in ("close.md", "far.md", "unknown.md")
    )
    message = _asked("Question?", by="a")
    message.snapshot = {
        "hits": [
            {"document_id": far.pk, "path": far.path, "similarity": 0.41},
            {"document_id": close.pk, "path": close.path, "similarity": 0.63},
            {"document_id": unknown.pk, "path": unknown.path, "similarity": None},
        ]
    }
    message.citations = []

    # when
    related_pages_attach(messages=[message], audiences=PUBLIC_AUDIENCES)

    # then: only the close one; a page without a similarity (vector leg down) is not offered
    assert [p.path for p in message.related_pages] == ["close.md"]


def test_an_answer_lists_related_pages_and_its_source_link_carries_the_cited_sentences(
    help_center,
) -> None:
    # given / when: a question the tiny help center answers, asked without JavaScript
    client = Client()
    html = client.post("/ask", {"question": REFUND_QUESTION}, follow=True).content.decode()

    # then: every source link names the sentences the answer quoted, inside the cited chunk
    message = Message.objects.get()
    document = Document.objects.get(path="policies/refunds.md")
    source = next(s for s in message.citations if s["path"] == "policies/refunds.md")
    assert source["quotes"], source
    for start, end in source["quotes"]:
        assert source["char_start"] <= start < end <= source["char_end"]
        sentence = " ".join(document.body[start:end].split())
        assert sentence.replace("**", "") in " ".join(message.answer.split())
    assert source["quote_section"] == "Refund Policy > Monthly plans"
    link = re.search(r'<a class="source-link" href="([^"]+)">([^<]+)</a>', html)
    assert link and link.group(2) == "Refund Policy &gt; Monthly plans"
    href = link.group(1).replace("&amp;", "&")
    assert parse_qs(urlparse(href).query)["quote"] == [
        ",".join(f"{start}-{end}" for start, end in source["quotes"])
    ]
    # and no page of the tiny help center is related to refunds (rate limits, a status widget):
    # none is offered
    assert all(
        (hit["similarity"] or 0) < 0.60
        for hit in message.snapshot["hits"]
        if hit["path"] != "policies/refunds.md"
    ), message.snapshot["hits"]
    assert '<ul class="related-list">' not in html

    # when: the customer follows the link
    page = client.get(href).content.decode()

    # then: the quoted sentence is the highlight, under its own section's name
    marked = " ".join(re.sub(r"<[^>]+>", "", m) for m in re.findall(r"<mark[^>]*>.*?</mark>", page))
    assert "30 days" in marked
    assert 'from the section <a href="#monthly-plans">Monthly plans</a>' in page
    assert "cited-context" in page
