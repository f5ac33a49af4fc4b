"""Retiring from the "Policies needing attention" page asks first, on a page of its own that
names what would stop being answered, and can be undone from the message that follows: the
page gets its status and successor back, recorded in its history, and is answered from again
once its index holds its text."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from assistant.models import Conversation, Feedback, Message
from kb.actors import SYSTEM
from kb.models import Document, DocumentIndexState
from kb.services import document_index, document_retire, document_save
from kb.services import index_queue as index_queue_services
from kb.services.documents import UNDO_CHANGE_REASON
from kb.services.sync import corpus_sync
from kb.test_questions.models import TestQuestion
from search.services import retrieve
from tests.conftest import CachedEmbedder

pytestmark = pytest.mark.django_db

ATTENTION_URL = "/admin/attention/"
RETIRE_URL = "/admin/attention/retire/"
UNDO_URL = "/admin/attention/undo/"


def _page(path: str, **fields: object) -> Document:
    values: dict[str, object] = {"title": path.title(), "body": f"# {path}\n\nText.", **fields}
    return Document.objects.create(path=path, **values)


def _asked(question: str, *, cites: Document, vote: str | None = None) -> Message:
    message = Message.objects.create(
        conversation=Conversation.objects.create(client_key_hash="c" * 64),
        question=question,
        status=Message.Status.ANSWERED,
        citations=[{"number": 1, "document_id": cites.pk, "path": cites.path}],
    )
    if vote:
        Feedback.objects.create(message=message, client_key_hash="k" * 64, vote=vote)
    return message


def _retired_id(response) -> int:
    assert response.status_code == 302, response.content[:500]
    location = response["Location"]
    assert location.startswith(ATTENTION_URL), location
    return int(location.split("retired=")[1].split("&")[0])


def test_the_confirmation_names_the_page_its_successor_and_the_questions_it_answered(
    steward_client: Client,
) -> None:
    # given a page two customers' answers cited, and one that cited another page
    old, new = _page("a/account-deletion.md"), _page("a/free-trial.md")
    _asked("How long do you keep my data after I cancel?", cites=old, vote="down")
    _asked("Is my data deleted when the trial ends?", cites=old)
    _asked("How long is the trial?", cites=new)

    # when the row's Retire button is pressed (a GET: nothing changes yet)
    response = steward_client.get(
        RETIRE_URL, {"document": old.pk, "successor": new.path, "review_sort": "-path"}
    )

    # then the page asks, naming both pages and the questions that would lose their source
    page = response.content.decode()
    assert response.status_code == 200
    assert "Retire a/account-deletion.md?" in page
    assert "It will be superseded by" in page and "a/free-trial.md" in page
    assert "Customer questions answered from it: 2" in page
    assert "How long do you keep my data after I cancel?" in page
    assert "Is my data deleted when the trial ends?" in page
    assert "How long is the trial?" not in page
    assert 'value="Retire a/account-deletion.md"' in page
    assert 'name="review_sort" value="-path"' in page  # back to the page as it was sorted
    old.refresh_from_db()
    assert old.status == "published"


def test_the_confirmation_names_the_test_questions_that_guard_the_page(
    steward_client: Client,
) -> None:
    # given a page with two test questions, and another page's
    old, new = _page("a/account-deletion.md"), _page("a/free-trial.md")
    TestQuestion.objects.create(document=old, question="How long is data kept?", facts=["90 days"])
    TestQuestion.objects.create(document=old, question="Can I undo a deletion?", facts=["7-day"])
    TestQuestion.objects.create(document=new, question="How long is the trial?", facts=["14"])

    # when
    response = steward_client.get(RETIRE_URL, {"document": old.pk, "successor": new.path})

    # then: retiring it leaves both of its own unanswered
    page = response.content.decode()
    assert "Test questions that expect it: 2" in page
    assert "How long is data kept?" in page and "Can I undo a deletion?" in page
    assert "How long is the trial?" not in page


def test_the_confirmation_of_a_page_no_answer_cited_says_so_and_lists_what_it_supersedes(
    steward_client: Client,
) -> None:
    old = _page("a/old.md")
    _page("a/older.md", superseded_by=old)

    page = steward_client.get(RETIRE_URL, {"document": old.pk}).content.decode()

    assert "Customer questions answered from it: 0" in page
    assert "No answer has cited this page." in page
    assert "No page will supersede it" in page
    assert "Pages it supersedes: 1" in page and "a/older.md" in page


def test_a_writer_may_not_open_the_confirmation_nor_retire_or_undo(writer_client: Client) -> None:
    old = _page("a/old.md")
    assert writer_client.get(RETIRE_URL, {"document": old.pk}).status_code == 403
    assert writer_client.post(RETIRE_URL, {"document": old.pk}).status_code == 403
    assert writer_client.post(UNDO_URL, {"document": old.pk, "retired": 1}).status_code == 403
    old.refresh_from_db()
    assert old.status == "published"


def test_a_successor_that_cannot_be_named_is_refused_before_the_confirmation(
    steward_client: Client,
) -> None:
    old, draft = _page("a/old.md"), _page("a/draft.md", status="draft")

    unknown = steward_client.get(RETIRE_URL, {"document": old.pk, "successor": "a/nope.md"})
    not_current = steward_client.get(RETIRE_URL, {"document": old.pk, "successor": draft.path})

    assert unknown.status_code == 400
    assert "No page has the path &#x27;a/nope.md&#x27;" in unknown.content.decode()
    assert 'value="a/nope.md"' in unknown.content.decode()
    assert not_current.status_code == 400
    assert "must be a published, current document" in not_current.content.decode()
    # and the page shown at the confirmation's address still sorts on the attention page, its
    # forms without the refused choice
    page = unknown.content.decode()
    assert 'href="/admin/attention/?uncited_sort=' in page and "successor=a" not in page
    assert page.count(f'name="document" value="{old.pk}"') == 1


def test_confirming_retires_and_the_message_offers_an_undo_that_restores_status_and_successor(
    steward: User, steward_client: Client
) -> None:
    # given a page that supersedes an older one, retired in favour of a newer one
    old, new = _page("a/old.md"), _page("a/new.md")
    older = _page("a/older.md", superseded_by=old)
    retired = _retired_id(
        steward_client.post(
            RETIRE_URL, {"document": old.pk, "successor": new.path, "review_sort": "path"}
        )
    )
    old.refresh_from_db()
    older.refresh_from_db()
    assert (old.status, old.superseded_by_id, older.superseded_by_id) == ("retired", new.pk, new.pk)

    # when the success message is shown, it has the Undo button
    message = steward_client.get(ATTENTION_URL, {"retired": retired, "review_sort": "path"})
    page = message.content.decode()
    assert "Retired a/old.md, superseded by a/new.md" in page
    assert f'name="retired" value="{retired}"' in page and ">Undo</button>" in page

    # and it is pressed
    undone = steward_client.post(
        UNDO_URL, {"document": old.pk, "retired": retired, "review_sort": "path"}, follow=True
    )

    # then both pages are as before, the undo recorded in their history under the steward
    old.refresh_from_db()
    older.refresh_from_db()
    assert (old.status, old.superseded_by_id) == ("published", None)
    assert older.superseded_by_id == old.pk
    for page_undone in (old, older):
        last = page_undone.history.first()
        assert (last.history_user, last.history_change_reason) == (steward, UNDO_CHANGE_REASON)
    assert undone.redirect_chain[-1][0].endswith("?review_sort=path")
    assert "Undone: a/old.md is published again" in undone.content.decode()

    # and the same retirement cannot be undone twice, nor its message offer it again
    again = steward_client.post(UNDO_URL, {"document": old.pk, "retired": retired}, follow=True)
    assert "Not undone: a/old.md changed since it was retired" in again.content.decode()
    stale = steward_client.get(ATTENTION_URL, {"retired": retired}).content.decode()
    assert ">Undo</button>" not in stale and "changed since" in stale


def test_undo_puts_back_the_status_the_page_had_not_always_published(steward: User) -> None:
    # given a page that was superseded (published, not current) before it was retired
    from kb.services import document_retire_undo

    newer = _page("a/newer.md")
    old = _page("a/old.md", superseded_by=newer)
    document_retire(document=old, actor=steward, successor=None)
    retired = old.history.first().history_id

    document_retire_undo(document=old, actor=steward, history_id=retired)

    old.refresh_from_db()
    assert (old.status, old.superseded_by_id) == ("published", newer.pk)


def test_undone_text_is_answered_from_again_once_the_undo_has_it_indexed(
    tmp_path: Path,
    cached_embedder: CachedEmbedder,
    steward: User,
    steward_client: Client,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks,
) -> None:
    # given an indexed page, retired from the attention page: no longer retrieved
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "parking.md").write_text(
        "# Parking\n\n## Visitors\n\nVisitors park in the zebra-striped bay B for free.\n"
    )
    (tmp_path / "policies" / "desks.md").write_text("# Desks\n\nDesks are booked per day.\n")
    corpus_sync(directory=tmp_path, embedder=cached_embedder, actor=SYSTEM)
    parking = Document.objects.get(path="policies/parking.md")
    sent: list[int] = []
    monkeypatch.setattr(
        index_queue_services,
        "index_enqueue",
        lambda *, document_ids, bulk=False: sent.extend(document_ids) or len(document_ids),
    )
    with django_capture_on_commit_callbacks(execute=True):
        retired = _retired_id(steward_client.post(RETIRE_URL, {"document": parking.pk}))
    assert sent == []  # the text is unchanged: retiring re-embeds nothing
    question = "where do visitors park, zebra-striped bay"
    assert "policies/parking.md" not in [hit.path for hit in retrieve(question=question).hits]

    # and edited while retired, its indexing message lost (no worker took it)
    parking.refresh_from_db()
    parking.body = parking.body.replace("bay B", "bay E, the zebra-striped one,")
    with django_capture_on_commit_callbacks(execute=True):
        document_save(document=parking, actor=steward)
    sent.clear()
    state = DocumentIndexState.objects.get(document=parking)
    assert state.status == DocumentIndexState.Status.PENDING

    # when the retirement is undone
    with django_capture_on_commit_callbacks(execute=True):
        steward_client.post(UNDO_URL, {"document": parking.pk, "retired": retired})

    # then the undo sent the page's indexing; until the worker has run it, retrieval has only
    # the text the index holds, and after, the page's current text
    assert sent == [parking.pk]

    def parking_text() -> list[str]:
        hits = retrieve(question="where do visitors park, zebra-striped bay", limit=5).hits
        return [hit.text for hit in hits if hit.path == "policies/parking.md"]

    assert [("bay B" in text, "bay E" in text) for text in parking_text()] == [(True, False)]
    assert document_index(document_id=parking.pk, embedder=cached_embedder) == "indexed"
    assert [("bay B" in text, "bay E" in text) for text in parking_text()] == [(False, True)]
