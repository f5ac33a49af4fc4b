"""A website as a connector: its pages, read politely, as documents of the connector's sync.

The listing is the site's sitemap (``WEBSITE_SITEMAP_URL``, else the ``Sitemap:`` lines of its
robots.txt, else ``/sitemap.xml``; a sitemap index is followed), or, when it has none, a crawl
from ``WEBSITE_URL`` following the links of each page. Only the start URL's origin (scheme, host
and port) is read: a link or a sitemap entry elsewhere is never fetched, and a redirect that
leaves the origin is dropped. robots.txt is honoured for our user agent (``WEBSITE_USER_AGENT``),
its ``Crawl-delay`` too when longer than ``WEBSITE_DELAY_SECONDS``. One request at a time, with
that delay between them, and at most ``WEBSITE_MAX_PAGES`` pages a run.

Each page's main content (``kb.formats.html.html_article``: ``<main>``/``<article>``/
``role=main``, else readability-lxml, else the body) becomes the article the sync writes, at
``web/<host>/<url path>.md`` (``/`` and ``/docs/`` are ``index``). Its ``ETag`` and
``Last-Modified`` are kept (``WebPageValidators``) once its document holds what was read, and
sent back as a conditional GET: an unchanged page answers 304, is not read in full, and nothing
of it is written or embedded. A page whose write failed or conflicted keeps no validators, so
the next run reads it again, as a folder sync reads a file again.

A run that reaches every page of its listing (no cap hit) lists everything: a page absent from
it (gone from the sitemap or the links, a 404 or 410, disallowed by robots.txt, ``noindex``) is
gone, and its document is removed as a folder sync removes a deleted file's (unless edited since:
a conflict). A page cap hit means an incomplete listing, and nothing is removed. The query string
of a URL is not part of a page's identity (``?utm=`` and the like), nor is its fragment.
"""

from __future__ import annotations

import datetime
import email.utils
import re
import time
import urllib.parse
import urllib.robotparser
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import structlog
from bs4 import BeautifulSoup
from django.conf import settings
from django.utils import timezone

from kb.connectors.base import (
    ConnectorError,
    ConnectorNotConfigured,
    ConnectorPage,
    JSONValue,
    UpstreamArticle,
    article_path,
)
from kb.connectors.documents import article_body_markdown, article_markdown
from kb.connectors.http import UpstreamClient, retry_policy_from_settings
from kb.connectors.sitemaps import canonical_url, page_id, sitemap_page_urls
from kb.formats.html import html_article, html_decode
from kb.models import Document, WebPageValidators
from kb.services.sync.provenance import file_hash_of

log = structlog.get_logger("groundwork.connectors")

# Pages fetched between two checkpoints: one embedding batch and one resume step.
BATCH_PAGES = 10
_HTML_TYPES = ("text/html", "application/xhtml+xml")
# Links to files that are not pages are not followed by a crawl.
_NOT_PAGES = re.compile(
    r"\.(?:png|jpe?g|gif|svg|webp|ico|pdf|zip|gz|tgz|dmg|exe|mp4|mp3|webm|css|js|json|xml|txt|"
    r"woff2?|ttf|eot|csv|xlsx?|docx?|pptx?)$",
    re.IGNORECASE,
)


@dataclass
class _Crawl:
    """Where a run stands: what is left to read, what was read, in which mode."""

    mode: str  # "sitemap" (the sitemap is the listing) or "crawl" (links are followed)
    queue: list[str]
    visited: set[str] = field(default_factory=set)
    ids: set[str] = field(default_factory=set)  # page ids read this run (two URLs, one id)
    fetched: int = 0

    def position(self) -> dict[str, object]:
        return {
            "mode": self.mode,
            "queue": self.queue,
            "visited": sorted(self.visited),
            "ids": sorted(self.ids),
            "fetched": self.fetched,
        }

    @classmethod
    def resumed(cls, position: dict[str, object]) -> _Crawl:
        def strings(key: str) -> list[str]:
            values = position.get(key)
            if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                raise ConnectorError(f"the website checkpoint's {key!r} is not a list of URLs")
            return list(values)

        fetched = position.get("fetched")
        return cls(
            mode=str(position.get("mode")),
            queue=strings("queue"),
            visited=set(strings("visited")),
            ids=set(strings("ids")),
            fetched=fetched if isinstance(fetched, int) else 0,
        )


@dataclass
class _Read:
    """One page as this run read it."""

    page_id: str
    url: str
    article: UpstreamArticle | None  # None: unchanged (304)
    etag: str
    last_modified: str
    links: list[str]


class WebsiteConnector:
    name = "website"

    def __init__(
        self,
        *,
        client: UpstreamClient,
        start_url: str,
        sitemap_url: str = "",
        max_pages: int = 500,
        delay_seconds: float = 1.0,
        user_agent: str = "GroundworkBot/1.0",
        batch_pages: int = BATCH_PAGES,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        parts = urllib.parse.urlsplit(start_url)
        self.client = client
        self.start_url = canonical_url(start_url)
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.source = f"website:{parts.netloc}"
        self.path_prefix = f"web/{parts.netloc}"
        self.sitemap_url = sitemap_url
        self.max_pages = max_pages
        self.delay_seconds = delay_seconds
        self.user_agent = user_agent
        self.batch_pages = max(1, batch_pages)
        self._sleep = sleep
        self._complete = False
        self._unsure = 0  # pages that answered neither 200, 304 nor 404/410 this run
        self._last_request = 0.0
        self.skipped: dict[str, int] = {}  # why pages were not read: "robots", "gone", ...

    def lists_everything(self) -> bool:
        """True once this run read every page of its listing: no cap hit, and no page that
        answered an error other than 404/410 (a 403 says nothing of whether the page is gone).
        A run resumed past its listing has not, and removes nothing this time."""
        return self._complete

    def gone(self, article_ids: Sequence[str]) -> list[str]:
        """Absent from a complete listing is gone for a website (out of the sitemap and the
        links, a 404 or 410): no page is asked for again."""
        return list(article_ids)

    def pages(
        self, *, cursor: datetime.datetime | None, position: JSONValue
    ) -> Iterator[ConnectorPage]:
        robots = self._robots()
        delay = max(self.delay_seconds, float(robots.crawl_delay(self.user_agent) or 0))
        crawl = _Crawl.resumed(position) if position else self._listing(robots)
        known = {
            row.url: row
            for row in WebPageValidators.objects.filter(source=self.source).only(
                "url", "etag", "last_modified", "links"
            )
        }
        batch: list[_Read] = []
        while crawl.queue and crawl.fetched < self.max_pages:
            url = crawl.queue.pop(0)
            if url in crawl.visited:
                continue
            crawl.visited.add(url)
            if not robots.can_fetch(self.user_agent, url):
                self._skip("robots", url)
                continue
            if page_id(url) in crawl.ids:
                self._skip("duplicate", url)
                continue
            self._pause(delay)
            read = self._read(url, known.get(url))
            crawl.fetched += 1
            if read is None:
                continue
            crawl.ids.add(read.page_id)
            crawl.visited.add(read.url)
            if crawl.mode == "crawl":
                queued = set(crawl.queue)
                for link in read.links:
                    if link not in crawl.visited and link not in queued:
                        crawl.queue.append(link)
                        queued.add(link)
            batch.append(read)
            if len(batch) >= self.batch_pages:
                yield self._page(batch, crawl)
                self._validators_save(batch)
                batch = []
        yield self._page(batch, crawl)
        self._validators_save(batch)
        self._complete = not crawl.queue and not self._unsure
        if self._complete:
            WebPageValidators.objects.filter(source=self.source).exclude(
                url__in=crawl.visited
            ).delete()
        log.info(
            "website_crawled",
            source=self.source,
            fetched=crawl.fetched,
            complete=self._complete,
            left=len(crawl.queue),
            **self.skipped,
        )

    # --- the listing ------------------------------------------------------------------------

    def _robots(self) -> urllib.robotparser.RobotFileParser:
        robots = urllib.robotparser.RobotFileParser(self.origin + "/robots.txt")
        answer = self.client.get_page(self.origin + "/robots.txt")
        if answer.status == 200:
            robots.parse(answer.body.decode("utf-8", "replace").splitlines())
        else:  # RFC 9309: a robots.txt that is not there (4xx) allows everything
            robots.allow_all = True  # type: ignore[attr-defined]
        return robots

    def _listing(self, robots: urllib.robotparser.RobotFileParser) -> _Crawl:
        named = [self.sitemap_url] if self.sitemap_url else []
        named += [url for url in robots.site_maps() or [] if self.client.on_origin(url)]
        for sitemap in named or [self.origin + "/sitemap.xml"]:
            urls = sitemap_page_urls(self.client, sitemap, required=bool(named))
            if urls is not None:
                return _Crawl(mode="sitemap", queue=list(dict.fromkeys(urls)))
        return _Crawl(mode="crawl", queue=[self.start_url])

    # --- a page ---------------------------------------------------------------------------

    def _read(self, url: str, known: WebPageValidators | None) -> _Read | None:
        path = article_path(self, page_id(url))
        stored = Document.objects.filter(path=path, sync_folder=self.source).first()
        headers: dict[str, str] = {}
        if known is not None and stored is not None:  # a page deleted here is read in full
            if known.etag:
                headers["If-None-Match"] = known.etag
            if known.last_modified:
                headers["If-Modified-Since"] = known.last_modified
        answer = self.client.get_page(url, headers=headers)
        if answer.status == 304 and known is not None:
            self._skip("unchanged", url)
            return _Read(page_id(url), url, None, known.etag, known.last_modified, known.links)
        if answer.status in (404, 410):
            self._skip("gone", url)
            return None
        if answer.status != 200:
            # Not an answer about the page (a 403, a 401): the run cannot tell it is gone.
            self._unsure += 1
            self._skip(f"http_{answer.status}", url)
            return None
        final = canonical_url(answer.url)
        if not self.client.on_origin(final):
            self._skip("redirected_away", url)
            return None
        content_type = answer.headers.get("content-type", "text/html").lower()
        text = html_decode(answer.body) if content_type.startswith(_HTML_TYPES) else None
        if text is None:
            self._skip("not_html", url)
            return None
        soup = BeautifulSoup(text, "lxml")
        if _noindex(soup):
            self._skip("noindex", url)
            return None
        links = self._links(soup, final)
        article = html_article(text, base_url=final)
        updated = _http_date(answer.headers.get("last-modified", ""))
        if updated is None:
            updated = _kept_date(stored, article.content_html, final)
        return _Read(
            page_id=page_id(final),
            url=final,
            article=UpstreamArticle(
                article_id=page_id(final),
                title=article.title,
                body_html=article.content_html,
                updated_at=updated,
                url=final,
            ),
            etag=answer.headers.get("etag", ""),
            last_modified=answer.headers.get("last-modified", ""),
            links=links,
        )

    def _links(self, soup: BeautifulSoup, base: str) -> list[str]:
        links: list[str] = []
        for anchor in soup.find_all("a", href=True):
            href = str(anchor["href"]).strip()
            if not href or href.startswith(("#", "mailto:", "tel:", "javascript:")):
                continue
            if "nofollow" in (anchor.get("rel") or []):
                continue
            url = canonical_url(urllib.parse.urljoin(base, href))
            if self.client.on_origin(url) and not _NOT_PAGES.search(url):
                links.append(url)
        return list(dict.fromkeys(links))

    def _page(self, batch: list[_Read], crawl: _Crawl) -> ConnectorPage:
        articles = [read.article for read in batch if read.article is not None]
        return ConnectorPage(
            articles=articles,
            seen=[read.page_id for read in batch],
            changed_since_cursor=True,  # the conditional GETs chose them
            position=crawl.position(),
            cursor=max((a.updated_at for a in articles), default=None),
            total=crawl.fetched + min(len(crawl.queue), self.max_pages - crawl.fetched),
        )

    def _validators_save(self, batch: list[_Read]) -> None:
        """Keep each page's validators once its document holds what was read (see the
        module); an unchanged page's are kept as they were."""
        for read in batch:
            if read.article is None:
                continue
            path = article_path(self, read.page_id)
            written = Document.objects.filter(
                path=path,
                sync_folder=self.source,
                synced_file_hash=file_hash_of(article_markdown(read.article)),
            ).exists()
            values = {"links": read.links, "etag": "", "last_modified": ""}
            if written:
                values.update(etag=read.etag, last_modified=read.last_modified)
            WebPageValidators.objects.update_or_create(
                source=self.source, url=read.url, defaults=values
            )

    def _pause(self, delay: float) -> None:
        wait = self._last_request + delay - time.monotonic()
        if self._last_request and wait > 0:
            self._sleep(wait)
        self._last_request = time.monotonic()

    def _skip(self, reason: str, url: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1
        if reason not in ("unchanged", "duplicate"):
            log.info("website_page_skipped", source=self.source, url=url, reason=reason)


def _noindex(soup: BeautifulSoup) -> bool:
    for meta in soup.find_all("meta", attrs={"name": True, "content": True}):
        robots = str(meta["name"]).lower() in ("robots", "groundworkbot")
        if robots and "noindex" in str(meta["content"]).lower():
            return True
    return False


def _http_date(value: str) -> datetime.datetime | None:
    try:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
    except (TypeError, ValueError):
        return None
    if parsed is None:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.UTC)


def _kept_date(stored: Document | None, content_html: str, url: str) -> datetime.datetime:
    """A page without ``Last-Modified``: the date its document has while its text is the same
    (so an unchanged page's file stays byte for byte the same), else now."""
    if (
        stored is not None
        and stored.updated_on is not None
        and stored.body.strip() == article_body_markdown(content_html, base_url=url).strip()
    ):
        return datetime.datetime.combine(stored.updated_on, datetime.time(), datetime.UTC)
    return timezone.now()


def website_from_settings() -> WebsiteConnector:
    if not settings.WEBSITE_URL:
        raise ConnectorNotConfigured("the website connector needs WEBSITE_URL (its start page)")
    parts = urllib.parse.urlsplit(settings.WEBSITE_URL)
    client = UpstreamClient(
        base_url=f"{parts.scheme}://{parts.netloc}",
        headers={
            "User-Agent": settings.WEBSITE_USER_AGENT,
            "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.5",
        },
        policy=retry_policy_from_settings(),
    )
    return WebsiteConnector(
        client=client,
        start_url=settings.WEBSITE_URL,
        sitemap_url=settings.WEBSITE_SITEMAP_URL,
        max_pages=settings.WEBSITE_MAX_PAGES,
        delay_seconds=settings.WEBSITE_DELAY_SECONDS,
        user_agent=settings.WEBSITE_USER_AGENT,
    )
