"""Intercom articles (REST API): ``GET /articles``, paged by ``pages.next``, with the
``Intercom-Version`` header on every call.

The listing holds every article, newest ``updated_at`` first, so each run lists everything:
an article updated at or after the cursor (or never written here) is written, and an article
the complete listing lacks is gone (Intercom has no export of deletions). Collections
(``GET /help_center/collections``; a section is a collection with a ``parent_id``) map to
categories: an article's category is its top collection's name.
A ``state: draft`` article is a draft here and internal.
"""

from __future__ import annotations

import datetime
import functools
import urllib.parse
from collections.abc import Iterator, Sequence
from typing import Any

from django.conf import settings
from django.utils.text import slugify

from kb.connectors.base import (
    ConnectorError,
    ConnectorNotConfigured,
    ConnectorPage,
    JSONValue,
    UpstreamArticle,
    epoch_datetime,
)
from kb.connectors.http import UpstreamClient, retry_policy_from_settings
from kb.connectors.pagination import items_of, pages_follow

ARTICLES = "/articles"
COLLECTIONS = "/help_center/collections"
PER_PAGE = 250  # the listing's maximum per_page
COLLECTION_DEPTH = 10  # parents followed before a loop of parent_ids is assumed


class IntercomConnector:
    name = "intercom"
    path_prefix = "intercom"

    def __init__(self, *, client: UpstreamClient, per_page: int = PER_PAGE) -> None:
        self.client = client
        self.per_page = per_page
        self.source = f"intercom:{urllib.parse.urlsplit(client.base_url).netloc}"

    def lists_everything(self) -> bool:
        return True

    def pages(
        self, *, cursor: datetime.datetime | None, position: JSONValue
    ) -> Iterator[ConnectorPage]:
        collections = self._collections()
        labels = {slugify(name)[:200]: name[:200] for name in collections.values() if slugify(name)}
        first = (position or {}).get("next") or f"{ARTICLES}?page=1&per_page={self.per_page}"
        next_of = functools.partial(self._next, ARTICLES)
        for payload, following in pages_follow(self.client, first, next_of=next_of):
            items = items_of(payload, "data")
            yield ConnectorPage(
                articles=[_article(item, collections) for item in items],
                seen=[str(item.get("id")) for item in items],
                position={"next": following},
                total=payload.get("total_count")
                if isinstance(payload.get("total_count"), int)
                else None,
                category_labels=labels,
            )

    def gone(self, article_ids: Sequence[str]) -> list[str]:
        return list(article_ids)  # absent from a complete listing: deleted

    def _collections(self) -> dict[str, str]:
        """Each collection's top collection's name: a section's category is its collection's."""
        raw: dict[str, tuple[str, str | None]] = {}
        first = f"{COLLECTIONS}?page=1&per_page={self.per_page}"
        next_of = functools.partial(self._next, COLLECTIONS)
        for payload, _ in pages_follow(self.client, first, next_of=next_of):
            for item in items_of(payload, "data"):
                parent = item.get("parent_id")
                raw[str(item.get("id"))] = (
                    str(item.get("name") or ""),
                    str(parent) if parent is not None else None,
                )
        named: dict[str, str] = {}
        for collection_id, (name, parent) in raw.items():
            top = name
            for _ in range(COLLECTION_DEPTH):
                if parent is None or parent not in raw:
                    break
                top, parent = raw[parent]
            named[collection_id] = top
        return named

    def _next(self, path: str, payload: dict[str, Any]) -> str | None:
        """``pages.next``: a URL, or (in some API versions) an object naming the next page
        or a ``starting_after`` cursor."""
        following = (payload.get("pages") or {}).get("next")
        if not following:
            return None
        if isinstance(following, str):
            return following
        if isinstance(following, dict):
            query = {"per_page": self.per_page}
            if following.get("starting_after"):
                query["starting_after"] = following["starting_after"]
            elif following.get("page"):
                query["page"] = following["page"]
            else:
                return None
            return f"{path}?{urllib.parse.urlencode(query)}"
        raise ConnectorError(f"pages.next is neither a URL nor an object: {following!r}")


def _article(item: dict[str, Any], collections: dict[str, str]) -> UpstreamArticle:
    if item.get("id") is None or not isinstance(item.get("title"), str):
        raise ConnectorError(f"an Intercom article without an id or a title: {str(item)[:120]}")
    parent = item.get("parent_id")
    category = collections.get(str(parent), "") if parent is not None else ""
    return UpstreamArticle(
        article_id=str(item["id"]),
        title=item["title"],
        body_html=str(item.get("body") or ""),
        updated_at=epoch_datetime(item.get("updated_at")),
        category=slugify(category)[:200],
        draft=item.get("state") != "published",
        url=str(item.get("url") or ""),
    )


def intercom_from_settings() -> IntercomConnector:
    if not settings.INTERCOM_ACCESS_TOKEN:
        raise ConnectorNotConfigured("Intercom needs INTERCOM_ACCESS_TOKEN")
    client = UpstreamClient(
        base_url=settings.INTERCOM_BASE_URL,
        headers={
            "Authorization": f"Bearer {settings.INTERCOM_ACCESS_TOKEN}",
            "Intercom-Version": settings.INTERCOM_VERSION,
        },
        policy=retry_policy_from_settings(),
    )
    return IntercomConnector(client=client)
