"""The newcomer's questions of issue #24 over the whole public sample help center and a real
index, asked through the answer pipeline with the offline answerer: a price question in another
language, where the English-only model gives the answerer no meaning to go by and the Growth price
row must still lead ("¿Cuánto cuesta el plan Growth?"), and a follow-up that must be answered
about what it asks, not with what the customer was just told."""

from __future__ import annotations

import itertools

import pytest

from assistant.generators.extractive import ExtractiveGenerator
from assistant.models import Message
from assistant.services import answer_complete, conversation_start, message_ask
from assistant.tooling.evaluation import AnswerCase
from assistant.tooling.tuning.follow_ups import (
    follow_up_pairs,
    follow_ups_report,
    follow_ups_score,
)
from tests.conftest import CORPUS_DIR, CachedEmbedder, corpus_pages_indexed

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("empty_cache")]

# The public pages of the sample help center: on a few plan pages alone "plan" and "Growth" are
# words of most pages, which tell nothing, and the question is refused.
PAGES = sorted(
    str(path.relative_to(CORPUS_DIR))
    for path in CORPUS_DIR.glob("*/*.md")
    if path.parent.name != "internal"
)
_clients = itertools.count()


@pytest.fixture
def pages(tmp_path, cached_embedder: CachedEmbedder) -> None:
    corpus_pages_indexed(tmp_path, PAGES, cached_embedder)


@pytest.mark.parametrize(
    "question", ["¿Cuánto cuesta el plan Growth?", "Combien coûte le plan Growth ?"]
)
def test_a_foreign_price_question_leads_with_the_price_row_not_a_worked_example(
    pages, cached_embedder, question: str
) -> None:
    # given: the plans page's other sections are read beside the passages retrieved, among
    # them the overage examples ("Example: a Growth account that finalizes 5,800 invoices in
    # March pays … $32.00 overage"), which name Growth and a price as the price row does

    # when
    conversation = conversation_start(client_hash=f"price-client-{next(_clients)}")
    message = answer_complete(
        message=message_ask(conversation=conversation, question=question),
        generator=ExtractiveGenerator(embedder=cached_embedder),
    )

    # then: without the units' meaning, only what retrieval brought is quoted, and the price
    # row leads
    assert message.status == Message.Status.ANSWERED
    lead = message.answer.split("\u201c", 1)[1].split("\u201d", 1)[0]
    assert lead.startswith("Plan: Growth; Monthly billing: $99 / month")
    assert "5,800 invoices" not in message.answer


def test_a_follow_up_about_the_whole_year_is_not_answered_with_the_monthly_rule(
    pages, cached_embedder
) -> None:
    # given: the customer was told the monthly refund rule
    conversation = conversation_start(client_hash=f"follow-up-client-{next(_clients)}")
    generator = ExtractiveGenerator(embedder=cached_embedder)
    first = answer_complete(
        message=message_ask(
            conversation=conversation, question="Can I get a refund on a monthly plan?"
        ),
        generator=generator,
    )
    assert "full refund of your first monthly charge" in first.answer

    # when
    message = answer_complete(
        message=message_ask(
            conversation=conversation, question="what if we had paid for the whole year instead?"
        ),
        generator=generator,
    )

    # then: the annual rule leads ("We refund the unused portion of the year"), and what the
    # customer was just told is not said again
    assert message.status == Message.Status.ANSWERED
    lead = message.answer.split("\u201c", 1)[1].split("\u201d", 1)[0]
    assert "year" in lead or "annual" in lead, lead
    assert "unused portion of the year" in lead or "60 days of the annual charge" in lead, lead
    assert "first monthly charge" not in message.answer
    assert "Later monthly renewals" not in lead


def _refund_case(case_id: str, half: str, question: str, fact: str) -> AnswerCase:
    return AnswerCase(
        id=case_id, half=half, question=question, facts=(fact,), path="policies/refunds.md"
    )


def test_the_follow_up_rules_are_scored_on_case_pairs_of_one_page(pages, cached_embedder) -> None:
    # given: two cases of the refund page; each is asked as the other's follow-up
    monthly = _refund_case(
        "monthly", "calibration", "Can I get a refund on a monthly plan?", "first monthly charge"
    )
    annual = _refund_case(
        "annual",
        "report",
        "what if we had paid for the whole year instead?",
        "unused portion of the year",
    )
    elsewhere = AnswerCase(
        id="alone", half="report", question="Is there a free trial?", facts=("14-day",), path="x.md"
    )

    # when
    pairs = follow_up_pairs([monthly, annual, elsewhere])
    scores = follow_ups_score(pairs, embedder=cached_embedder)

    # then: a case with no other case on its page is asked as no follow-up; the annual
    # question's first quote states its fact with the rules and not without them
    assert pairs == [(annual, monthly), (monthly, annual)]
    assert (scores[(True, "report")].asked, scores[(False, "report")].asked) == (1, 1)
    assert (scores[(True, "report")].lead, scores[(False, "report")].lead) == (1, 0)
    assert scores[(True, "report")].stated_before == 0
    assert follow_ups_report(scores)[0].split() == [
        "half",
        "rules",
        "asked",
        "stated",
        "lead",
        "before",
    ]
