"""The website connector against a static site on 127.0.0.1: a first import from the sitemap
(robots.txt honoured, another host's link never fetched, the page's main content only), a
second run of conditional GETs that reads and embeds nothing, an upstream edit, a deletion,
an admin edit kept as a conflict, a 429 waited out, a run that dies halfway resumed, and a crawl
of links for a site without a sitemap. Real PostgreSQL and the real local embedder."""

from __future__ import annotations

import datetime
import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.utils import timezone

from kb.actors import SYSTEM
from kb.connectors import website as website_module
from kb.connectors.http import UpstreamClient
from kb.connectors.sitemaps import canonical_url, page_id
from kb.connectors.website import WebsiteConnector
from kb.embedders import Embedder
from kb.models import ConnectorState, Document, WebPageValidators
from kb.services import document_save
from kb.services.sync.connector import ConnectorReport, ConnectorRunFailed, connector_sync
from tests.conftest import CountingEmbedder
from tests.support.connectors import QUICK_RETRIES
from tests.support.website_stub import WebsiteStub

pytestmark = pytest.mark.django_db

CHROME = "<nav><a href='/'>Home</a> <a href='/docs/refunds'>Refunds</a></nav>"


def page(title: str, text: str, *, links: str = "") -> str:
    return (
        f"<html><head><title>{title} - Acme Help</title></head><body>{CHROME}"
        f"<main><h1>{title}</h1><p>{text}</p><h2>Details</h2><p>More about {title.lower()}."
        f"</p>{links}</main><footer>Copyright Acme</footer></body></html>"
    )


def site(stub: WebsiteStub) -> None:
    stub.put("/", page("Welcome", "Start here.", links="<a href='/docs/cards'>Cards</a>"))
    stub.put(
        "/docs/refunds",
        page(
            "Refunds",
            "Monthly plans are refundable within 30 days.",
            links="<a href='http://elsewhere.invalid/partner'>Partner</a>",
        ),
    )
    stub.put("/docs/cards", page("Cards", "We accept Visa and Mastercard."))
    stub.put("/private/roadmap", page("Roadmap", "Unannounced plans."))


@pytest.fixture
def stub() -> Iterator[WebsiteStub]:
    with WebsiteStub() as server:
        site(server)
        yield server


def website(stub: WebsiteStub, *, batch_pages: int = 10) -> WebsiteConnector:
    client = UpstreamClient(
        base_url=stub.origin, headers={"User-Agent": "GroundworkBot/1.0"}, policy=QUICK_RETRIES
    )
    return WebsiteConnector(
        client=client,
        start_url=stub.origin + "/",
        delay_seconds=0,
        user_agent="GroundworkBot/1.0",
        batch_pages=batch_pages,
    )


def run(connector: WebsiteConnector, embedder: Embedder) -> ConnectorReport:
    return connector_sync(connector=connector, embedder=embedder, actor=SYSTEM)


def docs(stub: WebsiteStub) -> dict[str, Document]:
    prefix = f"web/{stub.origin.removeprefix('http://')}/"
    return {
        d.path.removeprefix(prefix): d for d in Document.objects.filter(path__startswith=prefix)
    }


def test_first_import_reads_the_sitemap_honours_robots_and_stays_on_the_host(
    stub: WebsiteStub, counting_embedder: CountingEmbedder
) -> None:
    # when
    report = run(website(stub), counting_embedder)

    # then: the three public pages, none under /private/ (robots.txt), nothing elsewhere
    pages = docs(stub)
    assert sorted(pages) == ["docs/cards.md", "docs/refunds.md", "index.md"]
    refunds = pages["docs/refunds.md"]
    assert refunds.title == "Refunds"
    assert refunds.body.lstrip().startswith(
        "# Refunds\n\nMonthly plans are refundable within 30 days."
    )
    assert "Copyright" not in refunds.body and "Home" not in refunds.body  # main content only
    assert "/private/roadmap" not in stub.paths_requested()
    assert all(r.headers["user-agent"] == "GroundworkBot/1.0" for r in stub.requests)
    assert report.sync.failed == [] and len(report.sync.indexed) == 3


def test_an_unchanged_site_is_neither_read_in_full_nor_re_embedded(
    stub: WebsiteStub, counting_embedder: CountingEmbedder
) -> None:
    # given
    run(website(stub), counting_embedder)
    counting_embedder.embedded_texts.clear()
    before = len(stub.requests)

    # when
    report = run(website(stub), counting_embedder)

    # then: every page was asked for with its ETag and answered 304
    pages = [r for r in stub.requests[before:] if r.path not in ("/robots.txt", "/sitemap.xml")]
    assert sorted(r.path for r in pages) == ["/", "/docs/cards", "/docs/refunds"]
    assert all("if-none-match" in r.headers for r in pages)
    assert counting_embedder.embedded_texts == []
    assert (report.sync.indexed, report.sync.updated, report.sync.removed) == ([], [], [])


def test_an_upstream_edit_re_embeds_only_that_page(
    stub: WebsiteStub, counting_embedder: CountingEmbedder
) -> None:
    # given
    run(website(stub), counting_embedder)
    counting_embedder.embedded_texts.clear()
    stub.put("/docs/refunds", page("Refunds", "Monthly plans are refundable within 14 days."))

    # when
    report = run(website(stub), counting_embedder)

    # then
    assert report.sync.indexed == [f"web/{stub.origin[7:]}/docs/refunds.md"]
    assert "within 14 days" in docs(stub)["docs/refunds.md"].body
    assert len(counting_embedder.embedded_texts) == report.sync.embedded > 0


def test_a_page_gone_from_the_sitemap_is_removed(
    stub: WebsiteStub, counting_embedder: CountingEmbedder
) -> None:
    # given
    run(website(stub), counting_embedder)
    stub.unlisted.add("/docs/cards")  # out of the sitemap (even if still served)

    # when
    report = run(website(stub), counting_embedder)

    # then
    assert sorted(docs(stub)) == ["docs/refunds.md", "index.md"]
    assert report.sync.removed == [f"web/{stub.origin[7:]}/docs/cards.md"]


def test_a_page_listed_but_answering_404_is_removed(
    stub: WebsiteStub, counting_embedder: CountingEmbedder
) -> None:
    # given: the sitemap keeps listing a page that now answers 404
    run(website(stub), counting_embedder)
    listed = stub.sitemap_xml()
    stub.delete("/docs/cards")
    stub.sitemap_xml = lambda: listed  # type: ignore[method-assign]

    # when
    report = run(website(stub), counting_embedder)

    # then
    assert report.sync.removed == [f"web/{stub.origin[7:]}/docs/cards.md"]


def test_a_page_answering_403_is_kept_and_the_run_removes_nothing(
    stub: WebsiteStub, counting_embedder: CountingEmbedder
) -> None:
    # given
    run(website(stub), counting_embedder)
    stub.refused.add("/docs/cards")
    stub.unlisted.add("/docs/refunds")  # would be removed by a complete listing

    # when
    report = run(website(stub), counting_embedder)

    # then: a 403 says nothing of whether a page is gone, so the listing is not complete
    assert report.sync.removed == []
    assert sorted(docs(stub)) == ["docs/cards.md", "docs/refunds.md", "index.md"]


def test_a_page_without_last_modified_keeps_its_date_while_its_text_is_the_same(
    stub: WebsiteStub, counting_embedder: CountingEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given a page served without validators (no ETag, no Last-Modified), synced today
    stub.bare.add("/docs/cards")
    run(website(stub), counting_embedder)
    synced_on = docs(stub)["docs/cards.md"].updated_on

    # when it is read again, unchanged, three days later
    later = timezone.now() + datetime.timedelta(days=3)
    monkeypatch.setattr(website_module, "timezone", SimpleNamespace(now=lambda: later))
    report = run(website(stub), counting_embedder)

    # then its file is the same as before: nothing is written, the date stays
    assert docs(stub)["docs/cards.md"].updated_on == synced_on
    assert (report.sync.updated, report.sync.indexed) == ([], [])
    # and once its text changes, it is dated the day it was read
    stub.put("/docs/cards", page("Cards", "We accept Visa only."))
    run(website(stub), counting_embedder)
    assert docs(stub)["docs/cards.md"].updated_on == later.date()


def test_an_admin_edit_is_kept_and_reported_as_a_conflict(
    stub: WebsiteStub, counting_embedder: CountingEmbedder, writer: User
) -> None:
    # given
    run(website(stub), counting_embedder)
    document = docs(stub)["docs/refunds.md"]
    document.body = "# Refunds\n\nAsk support for a refund (edited here).\n"
    document_save(document=document, actor=writer)
    stub.put("/docs/refunds", page("Refunds", "Refunds are now automatic."))

    # when
    report = run(website(stub), counting_embedder)

    # then
    assert docs(stub)["docs/refunds.md"].body.endswith("(edited here).\n")
    assert [c.changed_by for c in report.sync.conflicts] == ["writer"]
    # and the page keeps no validators, so the next run reports the conflict again
    again = run(website(stub), counting_embedder)
    assert [c.changed_by for c in again.sync.conflicts] == ["writer"]


def test_a_page_deleted_in_admin_is_read_in_full_and_its_deletion_kept_as_a_conflict(
    stub: WebsiteStub, counting_embedder: CountingEmbedder, steward: User
) -> None:
    # given
    run(website(stub), counting_embedder)
    deleted = docs(stub)["docs/cards.md"]
    deleted._history_user = steward  # type: ignore[attr-defined]  # as admin's delete records it
    deleted.delete()
    before = len(stub.requests)

    # when
    report = run(website(stub), counting_embedder)

    # then: the page was asked for without its ETag, and the deletion stands, reported
    cards = [r for r in stub.requests[before:] if r.path == "/docs/cards"]
    assert [("if-none-match" in r.headers) for r in cards] == [False]
    assert "docs/cards.md" not in docs(stub)
    assert [c.changed_by for c in report.sync.conflicts] == ["steward"]


def test_a_429_and_a_503_are_retried_after_their_retry_after(
    stub: WebsiteStub, counting_embedder: CountingEmbedder
) -> None:
    # given: robots.txt is rate limited for one second, then the sitemap is busy once
    stub.fail_next(status=429, retry_after=1)
    stub.fail_next(status=503, retry_after=0)

    # when
    started = time.monotonic()
    report = run(website(stub), counting_embedder)

    # then
    assert time.monotonic() - started >= 1.0
    assert report.retries == 2
    assert len(docs(stub)) == 3


def test_a_run_that_dies_halfway_resumes_and_loses_nothing(
    stub: WebsiteStub, counting_embedder: CountingEmbedder
) -> None:
    # given: down from the sixth request (robots, sitemap, three pages, then the fourth: the
    # first batch of two pages is written, the second is not)
    for n in range(1, 4):
        stub.put(f"/docs/extra-{n}", page(f"Extra {n}", f"Fact number {n} about invoices."))
    stub.down_from(6)
    with pytest.raises(ConnectorRunFailed):
        run(website(stub, batch_pages=2), counting_embedder)
    assert len(docs(stub)) == 2
    assert ConnectorState.objects.get().checkpoint["position"]["queue"]

    # when
    stub.down_from(None)
    counting_embedder.embedded_texts.clear()
    report = run(website(stub, batch_pages=2), counting_embedder)

    # then: the rest is read, the two written pages are not written again, nothing removed
    assert report.resumed and report.sync.removed == []
    assert len(docs(stub)) == 6
    assert len(report.sync.created) == 4
    assert ConnectorState.objects.get().checkpoint == {}


def test_a_site_without_a_sitemap_is_crawled_by_its_links_on_its_host_only(
    counting_embedder: CountingEmbedder,
) -> None:
    with WebsiteStub(sitemap=False) as stub:
        site(stub)
        stub.put("/docs/orphan", page("Orphan", "No page links here."))

        # when
        report = run(website(stub), counting_embedder)

        # then: the pages linked from the start page, not the orphan nor /private/
        assert sorted(docs(stub)) == ["docs/cards.md", "docs/refunds.md", "index.md"]
        assert report.sync.failed == []
        assert "/docs/orphan" not in stub.paths_requested()
        # and a second run follows the links it stored past the start page's 304
        counting_embedder.embedded_texts.clear()
        before = len(stub.requests)
        again = run(website(stub), counting_embedder)
        second = [
            r for r in stub.requests[before:] if r.path not in ("/robots.txt", "/sitemap.xml")
        ]
        assert sorted(r.path for r in second) == ["/", "/docs/cards", "/docs/refunds"]
        assert all("if-none-match" in r.headers for r in second)
        assert again.sync.removed == [] and counting_embedder.embedded_texts == []
        assert WebPageValidators.objects.get(url=stub.origin + "/").links


def test_a_gzipped_sitemap_behind_a_sitemap_index_is_followed_on_the_host_only(
    counting_embedder: CountingEmbedder,
) -> None:
    # given robots.txt naming an index of one sitemap here (gzipped) and one on another host
    with WebsiteStub(sitemap_index=True, gzipped=True) as stub:
        site(stub)
        run(website(stub), counting_embedder)
        assert sorted(docs(stub)) == ["docs/cards.md", "docs/refunds.md", "index.md"]


def test_page_ids_and_canonical_urls() -> None:
    assert canonical_url("HTTP://Help.Acme.test/docs/./a/../refunds?utm=x#top") == (
        "http://help.acme.test/docs/refunds"
    )
    assert page_id("http://h/") == "index"
    assert page_id("http://h/docs/") == "docs/index"
    assert page_id("http://h/docs/caf%C3%A9") == "docs/café"


def test_kb_sync_source_website_reads_the_site_from_settings(
    stub: WebsiteStub,
    counting_embedder: CountingEmbedder,
    monkeypatch: pytest.MonkeyPatch,
    settings: Any,  # pytest-django's settings fixture
    capsys: pytest.CaptureFixture[str],
) -> None:
    # given
    settings.WEBSITE_URL = stub.origin + "/"
    settings.WEBSITE_DELAY_SECONDS = 0
    monkeypatch.setattr("kb.management.commands.kb_sync.active_embedder", lambda: counting_embedder)

    # when
    call_command("kb_sync", "--source", "website", "--no-progress")

    # then
    out = capsys.readouterr().out
    assert f"website:{stub.origin[7:]}: read 3 articles" in out
    assert "3 changed" in out
    assert stub.requests[0].headers["user-agent"] == settings.WEBSITE_USER_AGENT
