"""A local Intercom speaking the Articles API as documented: ``GET /articles`` (newest
``updated_at`` first, ``page``/``per_page`` up to 250, ``pages.next`` a URL, ``total_count``),
``GET /help_center/collections`` (sections are collections with a ``parent_id``), epoch
timestamps, ``state: draft|published``, a bearer token and the ``Intercom-Version`` header."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tests.support.help_center_stub import HelpCenterHandler, HelpCenterStub, StubArticle

ACCESS_TOKEN = "intercom-test-token"
VERSION = "2.11"


class IntercomStub(HelpCenterStub):
    authorization = f"Bearer {ACCESS_TOKEN}"

    def __init__(self) -> None:
        super().__init__()
        self.handler = _Handler

    def collection_id(self, name: str) -> int:
        return 3000 + self.categories().index(name)

    def section_id(self, name: str) -> int:
        return 4000 + self.categories().index(name)  # one section under each collection


class _Handler(HelpCenterHandler):
    stub: IntercomStub

    def route(self, path: str, query: dict[str, str], headers: dict[str, str]) -> tuple[int, Any]:
        if headers.get("intercom-version") != VERSION:
            return 400, {"type": "error.list", "errors": [{"code": "intercom_version_invalid"}]}
        if path == "/articles":
            articles = self.stub.by_updated_at(newest_first=True)
            return self._page(path, query, articles, render=self._article)
        if path == "/help_center/collections":
            collections: list[dict[str, Any]] = []
            for name in self.stub.categories():
                top = self.stub.collection_id(name)
                collections.append(
                    {"type": "collection", "id": str(top), "name": name, "parent_id": None}
                )
                collections.append(
                    {
                        "type": "collection",
                        "id": str(self.stub.section_id(name)),
                        "name": f"{name} basics",
                        "parent_id": str(top),
                    }
                )
            return self._page(path, query, collections)
        return 404, {"type": "error.list", "errors": [{"code": "not_found"}]}

    def _page(
        self,
        path: str,
        query: dict[str, str],
        items: Sequence[Any],
        render: Callable[[Any], dict[str, Any]] = dict,
    ) -> tuple[int, Any]:
        page = int(query.get("page", "1"))
        per_page = int(query.get("per_page", "25"))
        if not 1 <= per_page <= 250:
            return 400, {"type": "error.list", "errors": [{"code": "parameter_invalid"}]}
        total_pages = max(1, -(-len(items) // per_page))
        pages: dict[str, Any] = {
            "type": "pages",
            "page": page,
            "per_page": per_page,
            "total_pages": total_pages,
        }
        if page < total_pages:
            pages["next"] = self.link(path, {"page": page + 1, "per_page": per_page})
        return 200, {
            "type": "list",
            "pages": pages,
            "total_count": len(items),
            "data": [render(item) for item in items[(page - 1) * per_page : page * per_page]],
        }

    def _article(self, article: StubArticle) -> dict[str, Any]:
        return {
            "type": "article",
            "id": str(article.article_id),
            "workspace_id": "ws123",
            "title": article.title,
            "description": "",
            "body": article.body,
            "author_id": 991,
            "state": "draft" if article.draft else "published",
            "created_at": article.updated_at,
            "updated_at": article.updated_at,
            "url": f"https://help.example.com/en/articles/{article.article_id}",
            "parent_id": self.stub.section_id(article.category) if article.category else None,
            "parent_type": "collection" if article.category else None,
        }
