"""The Zendesk Guide connector against a local Help Center API: a first import, an upstream
edit (only that article re-embedded), a deletion, an admin edit kept as a conflict, a 429
waited out, a run that dies halfway resumed from its checkpoint, drafts and restricted
articles kept internal. Real PostgreSQL and the real local embedder."""

from __future__ import annotations

import io
import time
from collections.abc import Iterator

import psycopg
import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection
from django.test import override_settings

from kb.models import Category, ConnectorState, Document
from kb.services import document_save
from kb.services.sync import SyncRefused
from kb.services.sync.connector import ConnectorRunFailed
from tests.conftest import CountingEmbedder
from tests.support import zendesk_stub
from tests.support.connectors import bodies, run, zendesk
from tests.support.zendesk_stub import ZendeskStub

pytestmark = pytest.mark.django_db


@pytest.fixture
def stub() -> Iterator[ZendeskStub]:
    with ZendeskStub() as server:
        server.put(
            1, title="Refunds", body="<p>Refunds take <b>5 days</b>.</p>", category="Billing"
        )
        server.put(
            2, title="Invoices", body="<p>Invoices are sent monthly.</p>", category="Billing"
        )
        server.put(3, title="Roadmap", body="<p>Next quarter we ship exports.</p>", draft=True)
        server.put(4, title="Partner pricing", body="<p>Partners get 20% off.</p>", restricted=True)
        yield server


def _incremental_starts(stub: ZendeskStub) -> list[str]:
    return [r.path.split("start_time=")[1] for r in stub.requests if "/incremental/" in r.path]


def test_first_import_writes_each_article_with_its_category_and_audience(
    stub: ZendeskStub, counting_embedder: CountingEmbedder
) -> None:
    # when
    report = run(zendesk(stub), counting_embedder)

    # then
    docs = {d.path: d for d in Document.objects.filter(path__startswith="zendesk/")}
    assert sorted(docs) == [f"zendesk/{n}.md" for n in (1, 2, 3, 4)]
    # the body is Markdown (kb.formats.html): the <strong> of the HTML stays bold
    assert docs["zendesk/1.md"].body.strip() == "Refunds take **5 days**."
    assert (docs["zendesk/1.md"].category, docs["zendesk/1.md"].audience) == ("billing", "public")
    assert Category.objects.get(slug="billing").label == "Billing"
    # a draft stays a draft and internal; a segment-restricted article is internal
    assert (docs["zendesk/3.md"].status, docs["zendesk/3.md"].audience) == ("draft", "internal")
    assert (docs["zendesk/4.md"].status, docs["zendesk/4.md"].audience) == ("published", "internal")
    public = set(Document.objects.visible_to(["public"]).values_list("path", flat=True))
    assert public == {"zendesk/1.md", "zendesk/2.md"}
    assert sorted(report.sync.created) == sorted(docs)
    state = ConnectorState.objects.get(source=zendesk(stub).source)
    assert state.checkpoint == {}
    assert state.cursor is not None and int(state.cursor.timestamp()) == stub.clock
    assert _incremental_starts(stub) == ["0"]


def test_an_upstream_edit_re_embeds_only_that_article(
    stub: ZendeskStub, counting_embedder: CountingEmbedder
) -> None:
    # given
    run(zendesk(stub), counting_embedder)
    cursor = ConnectorState.objects.get().cursor
    assert cursor is not None
    counting_embedder.embedded_texts.clear()
    stub.put(2, title="Invoices", body="<p>Invoices are sent weekly.</p>", category="Billing")

    # when
    report = run(zendesk(stub), counting_embedder)

    # then
    assert report.sync.indexed == ["zendesk/2.md"]
    assert bodies("zendesk")["zendesk/2.md"].strip() == "Invoices are sent weekly."
    chunks = Document.objects.get(path="zendesk/2.md").chunks.count()
    assert len(counting_embedder.embedded_texts) == report.sync.embedded == chunks
    assert all("weekly" in text for text in counting_embedder.embedded_texts)
    # the second run asked only for what changed since the first one's end
    assert _incremental_starts(stub)[-1] == str(int(cursor.timestamp()))


def test_an_article_deleted_upstream_is_removed_once_zendesk_answers_404(
    stub: ZendeskStub, counting_embedder: CountingEmbedder
) -> None:
    # given
    run(zendesk(stub), counting_embedder)
    stub.delete(2)

    # when
    report = run(zendesk(stub), counting_embedder)

    # then
    assert report.sync.removed == ["zendesk/2.md"]
    assert "zendesk/2.md" not in bodies("zendesk")
    assert any(r.path == "/api/v2/help_center/articles/2.json" for r in stub.requests)


def test_an_admin_edit_is_kept_and_reported_as_a_conflict(
    stub: ZendeskStub, counting_embedder: CountingEmbedder, writer: User
) -> None:
    # given: a writer edits the page here, and someone edits it upstream too
    run(zendesk(stub), counting_embedder)
    document = Document.objects.get(path="zendesk/1.md")
    document.body = "Refunds take 3 business days (edited here)."
    document_save(document=document, actor=writer)
    stub.put(1, title="Refunds", body="<p>Refunds take 7 days.</p>", category="Billing")
    stub.delete(2)
    edited = Document.objects.get(path="zendesk/2.md")
    edited.body = "Invoices are kept for 7 years (edited here)."
    document_save(document=edited, actor=writer)

    # when
    report = run(zendesk(stub), counting_embedder)

    # then: both edits are kept, each a conflict naming its writer
    kept = bodies("zendesk")
    assert kept["zendesk/1.md"] == "Refunds take 3 business days (edited here)."
    assert kept["zendesk/2.md"] == "Invoices are kept for 7 years (edited here)."
    conflicts = {c.path: c for c in report.sync.conflicts}
    assert set(conflicts) == {"zendesk/1.md", "zendesk/2.md"}
    assert all(c.changed_by == "writer" for c in conflicts.values())
    assert report.sync.indexed == [] and report.sync.removed == []


def test_a_429_is_retried_after_its_retry_after(
    stub: ZendeskStub, counting_embedder: CountingEmbedder
) -> None:
    # given: the first call is rate limited for one second
    stub.fail_next(status=429, retry_after=1)

    # when
    started = time.monotonic()
    report = run(zendesk(stub), counting_embedder)

    # then
    assert time.monotonic() - started >= 1.0
    assert report.retries == 1
    assert stub.requests[0].path == stub.requests[1].path  # the same call, again
    assert len(bodies("zendesk")) == 4


def test_a_run_that_dies_halfway_resumes_from_its_checkpoint_and_loses_nothing(
    counting_embedder: CountingEmbedder,
) -> None:
    with ZendeskStub(export_page_size=2) as stub:
        for n in range(1, 7):
            stub.put(n, title=f"Article {n}", body=f"<p>Fact number {n} about parcels.</p>")
        # given: the upstream goes down at the third export page (requests: categories,
        # sections, export pages 1 and 2)
        stub.down_from(5)
        with pytest.raises(ConnectorRunFailed, match="resumes after them"):
            run(zendesk(stub), counting_embedder)
        written = sorted(bodies("zendesk"))
        state = ConnectorState.objects.get()
        assert written == [f"zendesk/{n}.md" for n in (1, 2, 3)]  # page 2 repeats article 2
        assert state.checkpoint["position"]["phase"] == "incremental"
        assert state.cursor is None
        counting_embedder.embedded_texts.clear()

        # when: it is back up, and the next run goes on
        stub.down_from(None)
        before = len(stub.requests)
        report = run(zendesk(stub), counting_embedder)

        # then: resumed from the third page, every article is in, none embedded twice
        assert report.resumed
        starts = [
            r.path.split("start_time=")[1]
            for r in stub.requests[before:]
            if "/incremental/" in r.path
        ]
        assert starts[0] == state.checkpoint["position"]["next"].split("start_time=")[1] != "0"
        assert sorted(bodies("zendesk")) == [f"zendesk/{n}.md" for n in range(1, 7)]
        assert sorted(report.sync.created) == [f"zendesk/{n}.md" for n in (4, 5, 6)]
        assert all("number 1 " not in text for text in counting_embedder.embedded_texts)
        assert ConnectorState.objects.get().checkpoint == {}


def test_kb_sync_source_zendesk_reads_its_settings_and_reports(stub: ZendeskStub) -> None:
    out, err = io.StringIO(), io.StringIO()
    with override_settings(
        ZENDESK_BASE_URL=stub.origin,
        ZENDESK_EMAIL=zendesk_stub.EMAIL,
        ZENDESK_API_TOKEN=zendesk_stub.API_TOKEN,
        ZENDESK_OAUTH_TOKEN="",
    ):
        call_command("kb_sync", "--source", "zendesk", "--no-progress", stdout=out, stderr=err)

    assert "read 4 articles" in out.getvalue()
    assert "4 changed" in out.getvalue()
    assert len(bodies("zendesk")) == 4


def test_an_article_that_fails_holds_the_cursor_back_until_it_is_written(
    stub: ZendeskStub, counting_embedder: CountingEmbedder
) -> None:
    # given: an article whose title does not fit a document's (500 characters at most)
    stub.put(5, title="T" * 600, body="<p>Too long a title.</p>")

    # when
    first = run(zendesk(stub), counting_embedder)

    # then: the others are in, it is reported, and the cursor stays where it was (none)
    assert [f.path for f in first.sync.failed] == ["zendesk/5.md"]
    assert len(bodies("zendesk")) == 4
    assert ConnectorState.objects.get().cursor is None

    # when: fixed upstream, the next run reads everything since the old cursor again
    stub.put(5, title="A shorter title", body="<p>Fixed.</p>")
    second = run(zendesk(stub), counting_embedder)

    # then
    assert second.sync.created == ["zendesk/5.md"] and not second.sync.failed
    assert second.sync.unchanged == 4  # read again, not embedded again
    assert ConnectorState.objects.get().cursor is not None


def test_a_second_run_of_the_same_source_is_refused_while_one_runs(
    stub: ZendeskStub, counting_embedder: CountingEmbedder
) -> None:
    # given: another session holds the source's run lock, as a run under way does
    source = [zendesk(stub).source]
    with psycopg.connect(**connection.get_connection_params(), autocommit=True) as other:
        other.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", source)
        # when / then
        with pytest.raises(SyncRefused, match="already running"):
            run(zendesk(stub), counting_embedder)
        assert stub.requests == [] and bodies("zendesk") == {}
        # unlocked here: a closed session's locks go only once the server has ended it
        other.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", source)
    assert len(run(zendesk(stub), counting_embedder).sync.created) == 4
