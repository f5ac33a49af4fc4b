"""The no-answer decision's third signal: a best passage that shares with the question only
words most pages mention (the company's name) does not support an answer. Common words are
read from the index, per audience, on published current pages only."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import DatabaseError

import search.selectors
from assistant.no_answer import no_answer_decide
from kb.actors import SYSTEM
from kb.embedders.hashing import HashingEmbedder
from kb.models import Document
from kb.selectors.access import ALL_AUDIENCES, PUBLIC_AUDIENCES
from kb.services import document_retire, embedding_model_add
from kb.services.sync import corpus_sync
from search.results import RetrievalResult
from search.services import words_common_to_most_pages
from tests.support.retrieval import one_hit_result

pytestmark = pytest.mark.django_db

PAGES = {
    "roles.md": "# Team roles\n\nNorthwind has three roles: owner, editor and viewer.\n",
    "refunds.md": "# Refunds\n\nNorthwind refunds monthly plans in 30 days, or on escalation.\n",
    "exports.md": "# Exports\n\nExport your Northwind data as CSV from Settings.\n",
    "security.md": "# Security\n\nRegister up to five hardware keys for escalation.\n",
    "internal.md": (
        "---\naudience: internal\n---\n# Escalation\n\nNorthwind agents page the escalation lead.\n"
    ),
}


@pytest.fixture
def help_center(tmp_path: Path) -> Path:
    for path, text in PAGES.items():
        (tmp_path / path).write_text(text)
    embedding_model_add(embedder=HashingEmbedder())
    report = corpus_sync(directory=tmp_path, embedder=HashingEmbedder(), actor=SYSTEM)
    assert report.failed == []
    return tmp_path


def _common(*words: str, audiences=PUBLIC_AUDIENCES) -> set[str]:
    return words_common_to_most_pages(words=list(words), audiences=audiences)


def test_a_word_is_common_when_more_than_half_the_visible_pages_mention_it(help_center) -> None:
    # "northwind" is on 3 of the 4 public pages, "refunds" on 1, "escalation" on 2 (half is
    # not more than half); "the" is a stop word to the index and never common
    assert _common("northwind", "refunds", "escalation", "the") == {"northwind"}
    # staff also see the internal page: "escalation" is on 3 of their 5
    assert _common("northwind", "escalation", audiences=ALL_AUDIENCES) == {
        "northwind",
        "escalation",
    }


def test_a_retired_page_no_longer_counts(help_center) -> None:
    document_retire(document=Document.objects.get(path="exports.md"), actor=SYSTEM)

    # 2 of the 3 current public pages still mention it; with one more gone, 1 of 2 is not more
    assert _common("northwind") == {"northwind"}
    document_retire(document=Document.objects.get(path="refunds.md"), actor=SYSTEM)
    assert _common("northwind") == set()


def test_the_share_is_read_on_a_bounded_sample_of_pages(help_center, monkeypatch) -> None:
    # given words each on one public page only: over all four pages none is common
    words = ("owner", "refunds", "exports", "keys")
    assert _common(*words) == set()

    # with a sample of one page, the common words are exactly that one page's word
    monkeypatch.setattr(search.selectors, "COMMON_WORD_SAMPLE", 1)
    each_page = [{"owner"}, {"refunds"}, {"exports"}, {"keys"}]  # roles, refunds, exports, security
    assert _common(*words) in each_page


def _result(text: str, similarity: float) -> RetrievalResult:
    return one_hit_result(
        path="roles.md",
        title="Team roles",
        heading_path="Team roles",
        text=text,
        similarity=similarity,
        embedding_model="test/hashing-64",
    )


def test_a_passage_sharing_only_the_company_name_is_refused_below_the_high_bar(
    help_center, settings
) -> None:
    settings.NO_ANSWER_THRESHOLD, settings.NO_ANSWER_UNSUPPORTED_THRESHOLD = 0.40, 0.56
    question = "How many people work at Northwind?"
    roles = "Northwind has three roles: owner, editor and viewer."

    refused = no_answer_decide(query=question, result=_result(roles, 0.49))
    assert refused.refuse and refused.reason == "the best passage shares only words most pages use"
    assert refused.common_words == ("northwind",) and refused.question_coverage == 0
    assert refused.as_json()["common_words"] == ["northwind"]

    # a passage that shares a word few pages use is evidence; a very close one needs none
    people = f"{roles} Add as many people as your plan allows."
    assert not no_answer_decide(query=question, result=_result(people, 0.49)).refuse
    assert not no_answer_decide(query=question, result=_result(roles, 0.60)).refuse


def test_a_failed_lookup_loses_the_hint_and_nothing_else(help_center, monkeypatch) -> None:
    def fail(**kwargs):
        raise DatabaseError("the replica went away")

    monkeypatch.setattr("search.services.common_words", fail)
    roles = "Northwind has three roles: owner, editor and viewer."

    decision = no_answer_decide(
        query="How many people work at Northwind?", result=_result(roles, 0.49)
    )

    assert not decision.refuse and decision.common_words == ()
