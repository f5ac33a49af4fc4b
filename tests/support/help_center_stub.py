"""What the Zendesk and Intercom stubs share: articles held in memory on a clock of their own
(each change is one second later), answers as JSON, a scripted 429/503 with ``Retry-After``,
and an outage from the Nth request on (an upstream that goes down halfway through a run)."""

from __future__ import annotations

import json
import threading
import urllib.parse
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

from tests.support.stub_server import Misbehaviour, QuietHandler, StubServer

CLOCK_START = 1_700_000_000  # epoch seconds of the stub's first change


@dataclass(frozen=True)
class UpstreamMisbehaviour(Misbehaviour):
    retry_after: float | str | None = None  # sent as Retry-After (seconds, or an HTTP date)


@dataclass
class StubArticle:
    article_id: int
    title: str
    body: str
    updated_at: int
    category: str = ""  # the name of its (top) category or collection
    draft: bool = False
    restricted: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


class HelpCenterStub(StubServer[UpstreamMisbehaviour]):
    """Subclasses set ``handler`` (routes) and ``authorization`` (the header value expected)."""

    normal = UpstreamMisbehaviour()
    authorization = ""

    def __init__(self) -> None:
        super().__init__()
        self.articles: dict[int, StubArticle] = {}
        self.clock = CLOCK_START
        self.outage_from: int | None = None  # requests from this count on answer 503
        self._categories: list[str] | None = None
        self._store_lock = threading.Lock()

    # --- the upstream's content ----------------------------------------------------------

    def put(
        self,
        article_id: int,
        *,
        title: str,
        body: str,
        category: str = "",
        draft: bool = False,
        restricted: bool = False,
    ) -> StubArticle:
        """Create or change an article, as an editor upstream would: its updated_at moves on."""
        with self._store_lock:
            self.clock += 1
            article = StubArticle(
                article_id, title, body, self.clock, category, draft=draft, restricted=restricted
            )
            self.articles[article_id] = article
            self._categories = None
            return article

    def delete(self, article_id: int) -> None:
        with self._store_lock:
            self.clock += 1
            del self.articles[article_id]
            self._categories = None

    def by_updated_at(self, *, newest_first: bool = False) -> list[StubArticle]:
        with self._store_lock:
            articles = list(self.articles.values())
        return sorted(articles, key=lambda a: (a.updated_at, a.article_id), reverse=newest_first)

    def categories(self) -> list[str]:
        """The categories' names, sorted; kept between changes, since every article a page
        shows asks for its category's id (sorting 5,000 articles each time made the
        benchmark's listing take minutes)."""
        with self._store_lock:
            if self._categories is None:
                self._categories = sorted(
                    {a.category for a in self.articles.values() if a.category}
                )
            return self._categories

    # --- misbehaving -----------------------------------------------------------------------

    def fail_next(
        self, *, status: int, retry_after: float | str | None = None, times: int = 1
    ) -> None:
        """Answer the next ``times`` requests with ``status`` (and ``Retry-After``)."""
        self._misbehave_next(
            UpstreamMisbehaviour(status=status, retry_after=retry_after),
            times=times,
            ways=("status", "delay"),
        )

    def down_from(self, request_number: int | None) -> None:
        """From the ``request_number``-th request on (counting all so far), answer 503; None
        ends the outage."""
        self.outage_from = request_number


class HelpCenterHandler(QuietHandler):
    stub: HelpCenterStub

    def do_GET(self) -> None:
        received = self.receive()
        if received is None:
            return
        request, misbehaviour = received
        if self.stub.outage_from is not None and len(self.stub.requests) >= self.stub.outage_from:
            self.send_json(503, {"error": "stub: down"}, {"Retry-After": "0"})
            return
        if misbehaviour.status is not None:
            extra = {}
            if misbehaviour.retry_after is not None:
                wait = misbehaviour.retry_after
                extra["Retry-After"] = wait if isinstance(wait, str) else f"{wait:g}"
            phrase = HTTPStatus(misbehaviour.status).phrase
            self.send_json(misbehaviour.status, {"error": f"stub: {phrase}"}, extra)
            return
        if request.headers.get("authorization") != self.stub.authorization:
            self.send_json(401, {"error": "Couldn't authenticate you"})
            return
        url = urllib.parse.urlsplit(self.path)
        query = {key: values[-1] for key, values in urllib.parse.parse_qs(url.query).items()}
        status, payload = self.route(url.path, query, request.headers)
        self.send_json(status, payload)

    def route(self, path: str, query: dict[str, str], headers: dict[str, str]) -> tuple[int, Any]:
        raise NotImplementedError

    def link(self, path: str, query: dict[str, Any]) -> str:
        return f"{self.stub.origin}{path}?{urllib.parse.urlencode(query)}"

    def send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)
