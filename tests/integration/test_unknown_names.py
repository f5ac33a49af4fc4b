"""A question naming something no visible page mentions is less likely to be answerable."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.actors import SYSTEM
from kb.selectors.access import ALL_AUDIENCES
from kb.services.sync import corpus_sync
from search.keywords import proper_names
from search.results import UNKNOWN_NAME_PENALTY
from search.services import retrieve

pytestmark = pytest.mark.django_db


@pytest.fixture
def help_center(tmp_path: Path, cached_embedder) -> None:
    (tmp_path / "payments.md").write_text(
        "# Payment methods\n\nCustomers pay by card (Visa, Mastercard) or SEPA Direct Debit.\n"
    )
    (tmp_path / "partners.md").write_text(
        "---\naudience: internal\n---\n# Partners\n\nOur Klarna pilot is confidential.\n"
    )
    corpus_sync(directory=tmp_path, embedder=cached_embedder, actor=SYSTEM)


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("can customers pay with Klarna or Apple Pay?", ("Klarna", "Apple", "Pay")),
        ("Do you take Visa?", ("Visa",)),  # "Do" starts the sentence
        ("is there a QuickBooks sync? Zapier maybe.", ("QuickBooks",)),  # Zapier starts one
        ("I get E4012 on POST /v1/invoices", ("POST",)),  # E4012 is an identifier
        ("how do refunds work", ()),
    ],
)
def test_proper_names_are_the_capitalised_words_inside_a_sentence(question, names) -> None:
    assert proper_names(question) == names


def test_a_name_no_page_mentions_lowers_the_confidence(help_center) -> None:
    # given the same question, once naming something the help center knows and once not
    known = retrieve(question="can customers pay with Visa cards?")
    unknown = retrieve(question="can customers pay with Zelle cards?")

    # then only the unknown name is reported, and it costs the confidence the penalty
    assert known.unknown_names == [] and unknown.unknown_names == ["Zelle"]
    best = max(hit.similarity for hit in unknown.hits if hit.similarity is not None)
    assert unknown.confidence == pytest.approx(best - UNKNOWN_NAME_PENALTY)
    assert "names" in unknown.timings_ms


def test_a_name_only_internal_pages_mention_is_unknown_to_customers(help_center) -> None:
    question = "do you offer Klarna payments?"

    assert retrieve(question=question).unknown_names == ["Klarna"]
    assert retrieve(question=question, audiences=ALL_AUDIENCES).unknown_names == []


def test_a_failing_name_lookup_only_loses_the_hint(help_center, monkeypatch) -> None:
    from django.db import DatabaseError

    asked: list[object] = []

    def broken(**kwargs):
        asked.append(kwargs["names"])
        raise DatabaseError("relation kb_chunk is locked")

    monkeypatch.setattr("search.services.unknown_names", broken)
    result = retrieve(question="can customers pay with Zelle?")

    assert asked == [("Zelle",)]  # the lookup was tried, and failed
    assert result.unknown_names == [] and not result.degraded and result.hits
