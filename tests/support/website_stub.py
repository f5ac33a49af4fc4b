"""A small static website on 127.0.0.1 for the website connector: pages with ETags and
Last-Modified (answering 304 to a matching conditional GET), a robots.txt, an optional
sitemap.xml (or a sitemap index), a scripted 429/503 with ``Retry-After``, and an outage from
the Nth request on."""

from __future__ import annotations

import email.utils
import gzip
import hashlib
import threading
from dataclasses import dataclass
from http import HTTPStatus

from tests.support.stub_server import Misbehaviour, QuietHandler, StubServer

CLOCK_START = 1_700_000_000


@dataclass(frozen=True)
class SiteMisbehaviour(Misbehaviour):
    retry_after: float | None = None


@dataclass
class StubPage:
    html: str
    etag: str
    last_modified: str


class WebsiteStub(StubServer[SiteMisbehaviour]):
    normal = SiteMisbehaviour()

    def __init__(
        self, *, sitemap: bool = True, sitemap_index: bool = False, gzipped: bool = False
    ) -> None:
        super().__init__()
        self.pages: dict[str, StubPage] = {}
        self.robots = "User-agent: *\nDisallow: /private/\n"
        self.sitemap = sitemap
        self.sitemap_index = sitemap_index
        self.gzipped = gzipped  # the pages' sitemap served gzip-compressed, as .xml.gz files are
        self.unlisted: set[str] = set()  # served, but left out of the sitemap
        self.refused: set[str] = set()  # answered 403
        self.bare: set[str] = set()  # served without ETag or Last-Modified
        self.outage_from: int | None = None
        self.clock = CLOCK_START
        self._store_lock = threading.Lock()

    def put(self, path: str, html: str) -> None:
        """Create or change the page at ``path``: a new ETag and Last-Modified."""
        with self._store_lock:
            self.clock += 60
            etag = '"' + hashlib.sha256(html.encode()).hexdigest()[:16] + '"'
            modified = email.utils.formatdate(self.clock, usegmt=True)
            self.pages[path] = StubPage(html, etag, modified)

    def delete(self, path: str) -> None:
        with self._store_lock:
            del self.pages[path]

    def fail_next(self, *, status: int, retry_after: float | None = None, times: int = 1) -> None:
        self._misbehave_next(
            SiteMisbehaviour(status=status, retry_after=retry_after),
            times=times,
            ways=("status", "delay"),
        )

    def down_from(self, request_number: int | None) -> None:
        self.outage_from = request_number

    def paths_requested(self, since: int = 0) -> list[str]:
        return [request.path for request in self.requests[since:]]

    def sitemap_xml(self) -> str:
        with self._store_lock:
            listed = [path for path in self.pages if path not in self.unlisted]
        urls = "".join(f"<url><loc>{self.origin}{path}</loc></url>" for path in listed)
        return (
            '<?xml version="1.0" encoding="UTF-8"?>'
            f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'
        )


class WebsiteHandler(QuietHandler):
    stub: WebsiteStub

    def do_GET(self) -> None:
        received = self.receive()
        if received is None:
            return
        request, misbehaviour = received
        if self.stub.outage_from is not None and len(self.stub.requests) >= self.stub.outage_from:
            self.send(503, "down", {"Retry-After": "0"})
            return
        if misbehaviour.status is not None:
            extra = {}
            if misbehaviour.retry_after is not None:
                extra["Retry-After"] = f"{misbehaviour.retry_after:g}"
            self.send(misbehaviour.status, HTTPStatus(misbehaviour.status).phrase, extra)
            return
        path = self.path.split("?", 1)[0]
        if path == "/robots.txt":
            extra_lines = "Sitemap: " + self.stub.origin + "/sitemap_index.xml\n"
            robots = self.stub.robots + (extra_lines if self.stub.sitemap_index else "")
            self.send(200, robots, {"Content-Type": "text/plain"})
            return
        if path == "/sitemap_index.xml" and self.stub.sitemap_index:
            index = (
                '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/'
                f'sitemap/0.9"><sitemap><loc>{self.stub.origin}/sitemap-pages.xml</loc>'
                "</sitemap><sitemap><loc>http://elsewhere.invalid/sitemap.xml</loc></sitemap>"
                "</sitemapindex>"
            )
            self.send(200, index, {"Content-Type": "application/xml"})
            return
        if (path == "/sitemap.xml" and self.stub.sitemap and not self.stub.sitemap_index) or (
            path == "/sitemap-pages.xml" and self.stub.sitemap_index
        ):
            xml = self.stub.sitemap_xml().encode()
            self.send_bytes(200, gzip.compress(xml) if self.stub.gzipped else xml)
            return
        if path in self.stub.refused:
            self.send(403, "<h1>Forbidden</h1>")
            return
        page = self.stub.pages.get(path)
        if page is None:
            self.send(404, "<h1>Not found</h1>", {"Content-Type": "text/html"})
            return
        validators = {"ETag": page.etag, "Last-Modified": page.last_modified}
        if path in self.stub.bare:
            validators = {}
        if request.headers.get("if-none-match") == page.etag:
            self.send(304, "", validators)
            return
        self.send(200, page.html, {"Content-Type": "text/html; charset=utf-8", **validators})

    def send_bytes(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def send(self, status: int, text: str, headers: dict[str, str] | None = None) -> None:
        body = text.encode()
        headers = {"Content-Type": "text/html; charset=utf-8", **(headers or {})}
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        if status != 304:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if status != 304:
            self.wfile.write(body)


WebsiteStub.handler = WebsiteHandler
