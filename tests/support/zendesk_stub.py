"""A local Zendesk Guide speaking the Help Center API as documented: the incremental article
export (``start_time`` epoch seconds, up to ``page_size`` articles oldest change first, each
page's ``end_time`` and ``next_page``), cursor pagination (``page[size]``, ``page[after]``,
``meta.has_more``, ``links.next``) of articles, sections and categories, one article by id
(404 once deleted), and API-token basic auth."""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from django.utils.text import slugify

from tests.support.help_center_stub import HelpCenterHandler, HelpCenterStub, StubArticle

EMAIL = "agent@example.com"
API_TOKEN = "zendesk-test-token"
ARTICLE = re.compile(r"/api/v2/help_center/articles/(\d+)\.json")


class ZendeskStub(HelpCenterStub):
    authorization = "Basic " + base64.b64encode(f"{EMAIL}/token:{API_TOKEN}".encode()).decode()

    def __init__(self, *, export_page_size: int = 1000) -> None:
        super().__init__()
        self.export_page_size = export_page_size
        self.handler = _Handler

    def category_id(self, name: str) -> int:
        return 1000 + self.categories().index(name)

    def section_id(self, name: str) -> int:
        return 2000 + self.categories().index(name)  # one section per category


class _Handler(HelpCenterHandler):
    stub: ZendeskStub

    def route(self, path: str, query: dict[str, str], headers: dict[str, str]) -> tuple[int, Any]:
        if path == "/api/v2/help_center/incremental/articles.json":
            return self._incremental(query)
        if path == "/api/v2/help_center/articles.json":
            return self._cursor_page(
                path, query, "articles", self.stub.by_updated_at(), render=self._article
            )
        if path == "/api/v2/help_center/sections.json":
            sections = [
                {
                    "id": self.stub.section_id(n),
                    "name": f"{n} FAQ",
                    "category_id": self.stub.category_id(n),
                }
                for n in self.stub.categories()
            ]
            return self._cursor_page(path, query, "sections", sections)
        if path == "/api/v2/help_center/categories.json":
            categories = [
                {"id": self.stub.category_id(n), "name": n} for n in self.stub.categories()
            ]
            return self._cursor_page(path, query, "categories", categories)
        match = ARTICLE.fullmatch(path)
        if match:
            article = self.stub.articles.get(int(match.group(1)))
            if article is None:
                return 404, {"error": "RecordNotFound", "description": "Not found"}
            return 200, {"article": self._article(article)}
        return 404, {"error": "InvalidEndpoint"}

    def _incremental(self, query: dict[str, str]) -> tuple[int, Any]:
        if not query.get("start_time", "").isdigit():
            return 400, {"error": "InvalidValue", "description": "start_time is required"}
        start = int(query["start_time"])
        changed = [a for a in self.stub.by_updated_at() if a.updated_at >= start]
        page = changed[: self.stub.export_page_size]
        end_time = page[-1].updated_at if page else start
        more = len(changed) > len(page)
        return 200, {
            "articles": [self._article(a) for a in page],
            "count": len(page),
            "end_time": end_time,
            "next_page": self.link(
                "/api/v2/help_center/incremental/articles.json", {"start_time": end_time}
            )
            if more
            else None,
        }

    def _cursor_page(
        self,
        path: str,
        query: dict[str, str],
        key: str,
        items: Sequence[Any],
        render: Callable[[Any], dict[str, Any]] = dict,
    ) -> tuple[int, Any]:
        """One page of ``items``, each shown by ``render`` (only the page's: 5,000 articles
        rendered for each page of 100 made the benchmark's stub its slowest part)."""
        size = int(query.get("page[size]", "30"))
        if not 1 <= size <= 100:
            return 400, {"error": "InvalidPaginationParameter"}
        after = query.get("page[after]")
        start = int(base64.b64decode(after).decode()) if after else 0
        page = items[start : start + size]
        has_more = start + size < len(items)
        cursor = base64.b64encode(str(start + size).encode()).decode()
        return 200, {
            key: [render(item) for item in page],
            "meta": {"has_more": has_more, "after_cursor": cursor if has_more else None},
            "links": {
                "next": self.link(path, {"page[size]": size, "page[after]": cursor})
                if has_more
                else None
            },
        }

    def _article(self, article: StubArticle) -> dict[str, Any]:
        updated = datetime.fromtimestamp(article.updated_at, tz=UTC)
        return {
            "id": article.article_id,
            "title": article.title,
            "body": article.body,
            "draft": article.draft,
            "section_id": self.stub.section_id(article.category) if article.category else None,
            "user_segment_id": 77 if article.restricted else None,
            "locale": "en-us",
            "html_url": f"https://acme.zendesk.com/hc/en-us/articles/{article.article_id}-{slugify(article.title)}",
            "updated_at": updated.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "created_at": updated.strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
