"""The Intercom connector against a local Articles API: a first import, an upstream edit (only
that article re-embedded, the others not even re-read as files), a deletion by absence from
the complete listing, an admin edit kept as a conflict, a 429 waited out, a run that dies
halfway resumed from its checkpoint, drafts kept internal. Real PostgreSQL and the real local
embedder."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import User

from kb.models import Category, ConnectorState, Document
from kb.services import document_save
from kb.services.sync import SyncRefused
from kb.services.sync.connector import ConnectorRunFailed
from tests.conftest import CountingEmbedder
from tests.support import intercom_stub
from tests.support.connectors import bodies, intercom, run
from tests.support.intercom_stub import IntercomStub

pytestmark = pytest.mark.django_db


@pytest.fixture
def stub() -> Iterator[IntercomStub]:
    with IntercomStub() as server:
        server.put(
            11,
            title="Reset a password",
            body="<p>Use the <a>reset link</a>.</p>",
            category="Account",
        )
        server.put(
            12,
            title="Two-factor",
            body="<p>Turn on two-factor in settings.</p>",
            category="Account",
        )
        server.put(13, title="Beta features", body="<p>Unreleased.</p>", draft=True)
        yield server


def test_first_import_writes_each_article_under_its_top_collection(
    stub: IntercomStub, counting_embedder: CountingEmbedder
) -> None:
    # when
    report = run(intercom(stub), counting_embedder)

    # then
    docs = {d.path: d for d in Document.objects.filter(path__startswith="intercom/")}
    assert sorted(docs) == ["intercom/11.md", "intercom/12.md", "intercom/13.md"]
    assert docs["intercom/11.md"].body.strip() == "Use the reset link."
    # the article sits in a section; its category is the section's collection
    assert docs["intercom/11.md"].category == "account"
    assert Category.objects.get(slug="account").label == "Account"
    assert (docs["intercom/13.md"].status, docs["intercom/13.md"].audience) == ("draft", "internal")
    assert docs["intercom/12.md"].audience == "public"
    assert report.articles == 3
    assert all(r.headers.get("intercom-version") == intercom_stub.VERSION for r in stub.requests)
    state = ConnectorState.objects.get()
    assert state.cursor is not None and int(state.cursor.timestamp()) == stub.clock


def test_an_upstream_edit_re_embeds_only_that_article(
    stub: IntercomStub, counting_embedder: CountingEmbedder
) -> None:
    # given
    run(intercom(stub), counting_embedder)
    counting_embedder.embedded_texts.clear()
    stub.put(12, title="Two-factor", body="<p>Two-factor is now required.</p>", category="Account")

    # when
    report = run(intercom(stub), counting_embedder)

    # then: the listing read all three; the edited one (updated since the cursor) was written,
    # the one updated at the cursor itself compared again (unchanged), the oldest not even that
    assert report.articles == 3
    assert report.sync.indexed == ["intercom/12.md"]
    assert report.sync.unchanged == 1
    chunks = Document.objects.get(path="intercom/12.md").chunks.count()
    assert len(counting_embedder.embedded_texts) == report.sync.embedded == chunks
    assert bodies("intercom")["intercom/12.md"].strip() == "Two-factor is now required."


def test_an_article_absent_from_the_complete_listing_is_removed(
    stub: IntercomStub, counting_embedder: CountingEmbedder
) -> None:
    # given
    run(intercom(stub), counting_embedder)
    stub.delete(11)

    # when
    report = run(intercom(stub), counting_embedder)

    # then
    assert report.sync.removed == ["intercom/11.md"]
    assert sorted(bodies("intercom")) == ["intercom/12.md", "intercom/13.md"]


def test_an_admin_edit_is_kept_and_reported_as_a_conflict(
    stub: IntercomStub, counting_embedder: CountingEmbedder, writer: User
) -> None:
    # given
    run(intercom(stub), counting_embedder)
    document = Document.objects.get(path="intercom/11.md")
    document.body = "Ask support to reset it (edited here)."
    document_save(document=document, actor=writer)
    stub.put(
        11, title="Reset a password", body="<p>Passwords reset by email.</p>", category="Account"
    )

    # when
    report = run(intercom(stub), counting_embedder)

    # then
    assert bodies("intercom")["intercom/11.md"] == "Ask support to reset it (edited here)."
    assert [(c.path, c.changed_by) for c in report.sync.conflicts] == [("intercom/11.md", "writer")]
    assert report.sync.indexed == []


def test_a_429_is_retried_after_its_retry_after(
    stub: IntercomStub, counting_embedder: CountingEmbedder
) -> None:
    # given: the article listing's first call is rate limited for one second
    stub.fail_next(status=429, retry_after=0)  # the collections call: at once
    stub.fail_next(status=429, retry_after=1)

    # when
    started = time.monotonic()
    report = run(intercom(stub), counting_embedder)

    # then
    assert time.monotonic() - started >= 1.0
    assert report.retries == 2
    assert len(bodies("intercom")) == 3


def test_a_run_that_dies_halfway_resumes_from_its_checkpoint_and_loses_nothing(
    counting_embedder: CountingEmbedder,
) -> None:
    with IntercomStub() as stub:
        for n in range(1, 7):
            stub.put(n, title=f"Article {n}", body=f"<p>Fact number {n} about invoices.</p>")
        # given: down from the fourth request, the third page of two (after the collections
        # and pages 1 and 2)
        stub.down_from(4)
        with pytest.raises(ConnectorRunFailed):
            run(intercom(stub, per_page=2), counting_embedder)
        state = ConnectorState.objects.get()
        assert sorted(bodies("intercom")) == [f"intercom/{n}.md" for n in (3, 4, 5, 6)]
        assert state.checkpoint["position"]["next"].endswith("page=3&per_page=2")
        assert state.cursor is None
        counting_embedder.embedded_texts.clear()

        # when
        stub.down_from(None)
        before = len(stub.requests)
        report = run(intercom(stub, per_page=2), counting_embedder)

        # then: only the third page was read again, and nothing is lost or removed
        article_pages = [r.path for r in stub.requests[before:] if r.path.startswith("/articles")]
        assert article_pages == ["/articles?page=3&per_page=2"]
        assert report.resumed and report.sync.removed == []
        assert sorted(bodies("intercom")) == [f"intercom/{n}.md" for n in range(1, 7)]
        assert sorted(report.sync.created) == ["intercom/1.md", "intercom/2.md"]
        assert ConnectorState.objects.get().checkpoint == {}


def test_an_empty_listing_removes_nothing_and_the_next_run_lists_again(
    stub: IntercomStub, counting_embedder: CountingEmbedder
) -> None:
    # given: every article gone from the listing at once (a wrong workspace, a token's scope)
    run(intercom(stub), counting_embedder)
    kept = {number: stub.articles[number] for number in (11, 12, 13)}
    for number in kept:
        stub.delete(number)

    # when / then
    with pytest.raises(SyncRefused, match="listed no articles"):
        run(intercom(stub), counting_embedder)
    assert len(bodies("intercom")) == 3
    assert ConnectorState.objects.get().checkpoint == {}

    # when: the articles are back, the next run lists them again instead of resuming
    for number, article in kept.items():
        stub.put(
            number,
            title=article.title,
            body=article.body,
            category=article.category,
            draft=article.draft,
        )
    report = run(intercom(stub), counting_embedder)
    assert not report.resumed and report.articles == 3 and report.sync.removed == []
    assert report.sync.unchanged == 3  # the same articles: nothing embedded again
