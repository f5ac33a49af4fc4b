"""The stewards' "Policies needing attention" page: each of its lists lists what it should and
nothing else, and a row's form retires the page with a successor through the retire service
(its confirmation and undo: ``test_attention_retire.py``)."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from assistant.attention import thumbed_down_pages, uncited_pages
from assistant.models import Conversation, Feedback, Message
from kb.attention.contradictions import contradictions_compute, similar_passage_pairs
from kb.attention.documents import index_failures, reviews_due
from kb.models import Chunk, Document, DocumentIndexState, EmbeddingModel
from kb.services import embedding_model_register
from tests.conftest import CachedEmbedder, corpus_pages_indexed

pytestmark = pytest.mark.django_db

ATTENTION_URL = "/admin/attention/"
RETIRE_URL = "/admin/attention/retire/"
# The refund policies, current and of 2023, the cancellation pages (the legacy one retired),
# and two pages about other things that state numbers of their own. All but the 2023 page are
# the e2e tests' pages too, so the session's cached embedder has their vectors already.
CONTRADICTION_PAGES = (
    "policies/refunds.md",
    "policies/refunds-2023.md",
    "policies/cancellation.md",
    "policies/cancellation-legacy.md",
    "api/rate-limits.md",
    "billing/invoices.md",
)
UNRELATED_PAGES = {"api/rate-limits.md", "billing/invoices.md"}


def _page(path: str, **fields: object) -> Document:
    values: dict[str, object] = {"title": path, "body": f"# {path}\n\nText.", **fields}
    return Document.objects.create(path=path, **values)


def _answer(question: str, *, cites: list[Document], vote: str | None = None, comment: str = "",
            asked: datetime.datetime | None = None) -> Message:  # fmt: skip
    conversation = Conversation.objects.create(client_key_hash="c" * 64)
    message = Message.objects.create(
        conversation=conversation,
        question=question,
        status=Message.Status.ANSWERED,
        citations=[
            {"number": n, "document_id": d.pk, "path": d.path} for n, d in enumerate(cites, 1)
        ],
    )
    if asked is not None:
        Message.objects.filter(pk=message.pk).update(created_at=asked)
    if vote is not None:
        Feedback.objects.create(
            message=message, client_key_hash="k" * 64, vote=vote, comment=comment
        )
    return message


@pytest.fixture
def sample_policies(tmp_path: Path, cached_embedder: CachedEmbedder) -> EmbeddingModel:
    corpus_pages_indexed(tmp_path, CONTRADICTION_PAGES, cached_embedder)
    return EmbeddingModel.objects.active().get()


# --- Review dates -------------------------------------------------------------------------------


def test_pages_past_or_near_their_review_date_are_listed_most_overdue_first() -> None:
    # given
    today = timezone.localdate()
    overdue = _page("a/overdue.md", review_by=today - datetime.timedelta(days=3))
    due_soon = _page("a/due-soon.md", review_by=today + datetime.timedelta(days=30))
    _page("a/later.md", review_by=today + datetime.timedelta(days=31))
    _page("a/no-date.md")
    _page("a/retired.md", review_by=today - datetime.timedelta(days=9), status="retired")

    # when
    due = reviews_due(today=today)

    # then
    assert [(row.document.path, row.days_left) for row in due] == [
        (overdue.path, -3),
        (due_soon.path, 30),
    ]
    assert due[0].overdue and due[0].days_overdue == 3 and not due[1].overdue


# --- Thumbed-down answers -----------------------------------------------------------------------


def test_pages_cited_by_thumbed_down_answers_show_the_count_and_the_latest_complaint() -> None:
    # given
    refunds, pricing, praised = _page("p/refunds.md"), _page("p/pricing.md"), _page("p/ok.md")
    _answer("Can I get my money back?", cites=[refunds, pricing], vote="down", comment="wrong")
    _answer("Refund after 20 days?", cites=[refunds], vote="down", comment="It said 14 days")
    _answer("How do I pay?", cites=[praised], vote="up")
    _answer("Where is my invoice?", cites=[praised])

    # when
    pages = thumbed_down_pages()

    # then: the page cited by two thumbed-down answers first; praised pages are not listed
    assert [(page.document.path, page.answers) for page in pages] == [
        ("p/refunds.md", 2),
        ("p/pricing.md", 1),
    ]
    assert pages[0].last_question == "Refund after 20 days?"
    assert pages[0].last_comment == "It said 14 days"


def test_a_retired_page_leaves_the_thumbed_down_list() -> None:
    retired = _page("p/old.md", status="retired")
    _answer("Old question", cites=[retired], vote="down")
    assert thumbed_down_pages() == []


# --- Pages no answer cited ----------------------------------------------------------------------


def test_published_pages_no_answer_cited_in_90_days_are_listed_never_cited_first() -> None:
    # given
    now = timezone.now()
    cited_lately, cited_long_ago = _page("u/lately.md"), _page("u/long-ago.md")
    never = _page("u/never.md")
    _page("u/draft.md", status="draft")
    _page("u/retired.md", status="retired")
    _answer("recent", cites=[cited_lately], asked=now - datetime.timedelta(days=89))
    _answer("old", cites=[cited_long_ago], asked=now - datetime.timedelta(days=120))

    # when
    pages = uncited_pages(now=now)

    # then
    assert [page.document.path for page in pages] == [never.path, cited_long_ago.path]
    assert pages[0].last_cited is None
    assert pages[1].last_cited == now - datetime.timedelta(days=120)


# --- Failed indexing ----------------------------------------------------------------------------


def test_pages_whose_indexing_failed_are_listed_with_the_error(
    cached_embedder: CachedEmbedder,
) -> None:
    # given
    model = embedding_model_register(embedder=cached_embedder)
    broken, fine = _page("f/broken.md"), _page("f/fine.md")
    DocumentIndexState.objects.mark_failed(
        document_id=broken.pk, embedding_model=model, error="embedder timed out after 30 s"
    )
    DocumentIndexState.objects.filter(document=fine).update(status="indexed")

    # when
    failures = index_failures()

    # then
    assert [(row.document.path, row.embedding_model, row.error) for row in failures] == [
        (broken.path, model.key, "embedder timed out after 30 s")
    ]


# --- Probable contradictions --------------------------------------------------------------------


def test_the_2023_refund_page_contradicts_the_current_refund_policy(
    sample_policies: EmbeddingModel,
) -> None:
    # when
    found = contradictions_compute(embedding_model=sample_policies)

    # then: the monthly refund windows of the two refund pages, older page first, values marked
    pairs = {(row.first.path, row.second.path, row.first.heading_path) for row in found}
    assert (
        "policies/refunds-2023.md",
        "policies/refunds.md",
        "Refund Policy (2023) > Monthly subscriptions",
    ) in pairs
    monthly = next(
        row
        for row in found
        if row.first.heading_path == "Refund Policy (2023) > Monthly subscriptions"
        and row.second.path == "policies/refunds.md"
    )
    assert [s.text for s in monthly.first_segments if s.marked] == ["14 days", "14 days"]
    assert [s.text for s in monthly.second_segments if s.marked] == ["30 days", "30 days"]
    assert "".join(s.text for s in monthly.first_segments) == monthly.first.text
    # shown rendered, as the public page shows it, the values marked in it
    assert "<strong>first monthly payment within <mark>14 days</mark></strong>" in (
        monthly.first_html
    )
    assert "**" not in monthly.first_html and "<mark>30 days</mark>" in monthly.second_html


def test_passages_about_the_same_thing_that_state_no_differing_values_are_not_listed(
    sample_policies: EmbeddingModel,
) -> None:
    # given the two refund pages' introductions: about the same thing, stating no values
    intros = {"Refund Policy (2023)", "Refund Policy"}
    chunks = dict(Chunk.objects.filter(heading_path__in=intros).values_list("id", "heading_path"))
    similar = {
        frozenset((chunks.get(a), chunks.get(b)))
        for a, b, _ in similar_passage_pairs(embedding_model=sample_policies)
    }
    assert frozenset(intros) in similar

    # when the contradictions are computed, then that pair is not one
    found = contradictions_compute(embedding_model=sample_policies)
    listed = {frozenset((row.first.heading_path, row.second.heading_path)) for row in found}
    assert frozenset(intros) not in listed
    assert all(row.disagreements for row in found)


def test_unrelated_and_retired_pages_are_never_in_a_contradiction(
    sample_policies: EmbeddingModel,
) -> None:
    found = contradictions_compute(embedding_model=sample_policies)
    listed = {path for row in found for path in (row.first.path, row.second.path)}
    assert found
    assert not listed & UNRELATED_PAGES
    assert "policies/cancellation-legacy.md" not in listed  # retired, with a successor
    assert all(row.first.document_id != row.second.document_id for row in found)


# --- The page -----------------------------------------------------------------------------------


def test_the_page_is_for_stewards_only(writer_client: Client, steward_client: Client) -> None:
    assert writer_client.get(ATTENTION_URL).status_code == 403
    response = steward_client.get("/admin/")
    assert ATTENTION_URL.encode() in response.content
    assert ATTENTION_URL.encode() not in writer_client.get("/admin/").content


def test_each_list_shows_its_count_and_sorts_by_a_column(steward_client: Client) -> None:
    # given
    today = timezone.localdate()
    _page("r/a.md", review_by=today - datetime.timedelta(days=1))
    _page("r/b.md", review_by=today + datetime.timedelta(days=2))

    # when
    by_date = steward_client.get(ATTENTION_URL)
    by_path_descending = steward_client.get(ATTENTION_URL, {"review_sort": "-path"})

    # then
    review = by_date.context["lists"]["review"]
    assert [row.document.path for row in review.rows] == ["r/a.md", "r/b.md"]
    assert b'<section id="review"' in by_date.content
    assert "Review date passed or due within 30 days <span" in by_date.content.decode()
    sorted_rows = by_path_descending.context["lists"]["review"].rows
    assert [row.document.path for row in sorted_rows] == ["r/b.md", "r/a.md"]
    path_header = by_path_descending.context["lists"]["review"].headers[0]
    assert path_header.sorted == "descending" and "review_sort=path" in path_header.url


def test_a_row_retires_its_page_with_the_chosen_successor(
    steward: User, steward_client: Client
) -> None:
    # given
    today = timezone.localdate()
    old = _page("r/old.md", review_by=today - datetime.timedelta(days=1))
    new = _page("r/new.md")

    # when
    response = steward_client.post(
        RETIRE_URL, {"document": old.pk, "successor": new.path, "review_sort": "path"}
    )

    # then: retired through the service (history names the steward), gone from the list
    assert response.status_code == 302
    assert response["Location"].startswith(f"{ATTENTION_URL}?review_sort=path&retired=")
    old.refresh_from_db()
    assert (old.status, old.superseded_by_id) == ("retired", new.pk)
    assert old.history.first().history_user == steward
    page = steward_client.get(response["Location"])
    assert [row.document.path for row in page.context["lists"]["review"].rows] == []
    assert "Retired r/old.md, superseded by r/new.md" in page.content.decode()


def test_retiring_the_older_page_of_a_contradiction_removes_it_from_the_list(
    sample_policies: EmbeddingModel, steward_client: Client
) -> None:
    # given
    cache.clear()
    before = steward_client.get(ATTENTION_URL).context["lists"]["contradictions"].rows
    old = Document.objects.get(path="policies/refunds-2023.md")
    assert any(row.first.document_id == old.pk for row in before)

    # when: the row's form, its successor already filled with the newer page
    steward_client.post(RETIRE_URL, {"document": old.pk, "successor": "policies/refunds.md"})

    # then: the cached list was computed again for the changed index
    after = steward_client.get(ATTENTION_URL).context["lists"]["contradictions"].rows
    assert not any(old.pk in (row.first.document_id, row.second.document_id) for row in after)
