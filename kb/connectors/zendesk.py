"""Zendesk Guide (Help Center API): articles, their sections and categories.

A run reads what changed since the cursor from the incremental article export
(``/api/v2/help_center/incremental/articles.json?start_time=``, epoch seconds; each page gives
``end_time`` and a ``next_page`` URL, the next start), then lists every article id with cursor
pagination (``/api/v2/help_center/articles.json?page[size]=100``, ``links.next`` while
``meta.has_more``) to find deletions: the export does not report them. An article the listing
lacks is removed only once a GET of it answers 404 (deleted, or archived: archived articles are
not served). Sections map to their category, whose name is our category.

A draft (``draft: true``) is a draft here and internal; an article restricted to a user segment
(``user_segment_id`` set, or ``user_segment_ids`` not empty) is internal.
"""

from __future__ import annotations

import base64
import datetime
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
    iso_datetime,
)
from kb.connectors.http import UpstreamClient, UpstreamNotFound, retry_policy_from_settings
from kb.connectors.pagination import items_of, pages_follow

INCREMENTAL_ARTICLES = "/api/v2/help_center/incremental/articles.json"
ARTICLES = "/api/v2/help_center/articles.json"
SECTIONS = "/api/v2/help_center/sections.json"
CATEGORIES = "/api/v2/help_center/categories.json"
PAGE_SIZE = 100  # the cursor pagination's maximum page[size]


class ZendeskConnector:
    name = "zendesk"
    path_prefix = "zendesk"

    def __init__(self, *, client: UpstreamClient) -> None:
        self.client = client
        self.source = f"zendesk:{urllib.parse.urlsplit(client.base_url).netloc}"

    def lists_everything(self) -> bool:
        return True

    def pages(
        self, *, cursor: datetime.datetime | None, position: JSONValue
    ) -> Iterator[ConnectorPage]:
        position = position or {"phase": "incremental", "next": None}
        categories = self._categories()
        labels = {slugify(name)[:200]: name[:200] for name in categories.values() if slugify(name)}
        sections = self._sections(categories)
        if position["phase"] == "incremental":
            start = int(cursor.timestamp()) if cursor is not None else 0
            first = position["next"] or f"{INCREMENTAL_ARTICLES}?start_time={start}"
            for payload, following in pages_follow(self.client, first, next_of=_incremental_next):
                end_time = epoch_datetime(payload.get("end_time"))
                articles = [_article(item, sections) for item in items_of(payload, "articles")]
                done = following is None
                yield ConnectorPage(
                    articles=articles,
                    changed_since_cursor=True,
                    position={"phase": "listing" if done else "incremental", "next": following},
                    cursor=end_time,
                    category_labels=labels,
                )
            position = {"phase": "listing", "next": None}
        first = position["next"] or f"{ARTICLES}?page%5Bsize%5D={PAGE_SIZE}"
        for payload, following in pages_follow(self.client, first, next_of=_cursor_next):
            yield ConnectorPage(
                seen=[str(item.get("id")) for item in items_of(payload, "articles")],
                position={"phase": "listing", "next": following},
                total=None,
            )

    def gone(self, article_ids: Sequence[str]) -> list[str]:
        gone = []
        for article_id in article_ids:
            try:
                self.client.get_json(f"/api/v2/help_center/articles/{article_id}.json")
            except UpstreamNotFound:
                gone.append(article_id)
        return gone

    def _categories(self) -> dict[Any, str]:
        names: dict[Any, str] = {}
        first = f"{CATEGORIES}?page%5Bsize%5D={PAGE_SIZE}"
        for payload, _ in pages_follow(self.client, first, next_of=_cursor_next):
            for item in items_of(payload, "categories"):
                names[item.get("id")] = str(item.get("name") or "")
        return names

    def _sections(self, categories: dict[Any, str]) -> dict[Any, str]:
        """Each section's category's name."""
        sections: dict[Any, str] = {}
        first = f"{SECTIONS}?page%5Bsize%5D={PAGE_SIZE}"
        for payload, _ in pages_follow(self.client, first, next_of=_cursor_next):
            for item in items_of(payload, "sections"):
                category = categories.get(item.get("category_id"), "")
                sections[item.get("id")] = category
        return sections


def _article(item: dict[str, Any], sections: dict[Any, str]) -> UpstreamArticle:
    if item.get("id") is None or not isinstance(item.get("title"), str):
        raise ConnectorError(f"a Zendesk article without an id or a title: {str(item)[:120]}")
    category = sections.get(item.get("section_id"), "")
    return UpstreamArticle(
        article_id=str(item["id"]),
        title=item["title"],
        body_html=str(item.get("body") or ""),
        updated_at=iso_datetime(item.get("updated_at")),
        category=slugify(category)[:200],
        draft=bool(item.get("draft")),
        restricted=item.get("user_segment_id") is not None or bool(item.get("user_segment_ids")),
        url=str(item.get("html_url") or ""),
    )


def _incremental_next(payload: dict[str, Any]) -> str | None:
    """The export's next page: none at the end of the stream (no ``next_page``, or
    ``end_of_stream``)."""
    following = payload.get("next_page")
    if not following or payload.get("end_of_stream"):
        return None
    return str(following)


def _cursor_next(payload: dict[str, Any]) -> str | None:
    meta = payload.get("meta") or {}
    links = payload.get("links") or {}
    if not meta.get("has_more") or not links.get("next"):
        return None
    return str(links["next"])


def zendesk_from_settings() -> ZendeskConnector:
    if not settings.ZENDESK_BASE_URL:
        raise ConnectorNotConfigured("Zendesk needs ZENDESK_SUBDOMAIN (or ZENDESK_BASE_URL)")
    if settings.ZENDESK_OAUTH_TOKEN:
        authorization = f"Bearer {settings.ZENDESK_OAUTH_TOKEN}"
    elif settings.ZENDESK_EMAIL and settings.ZENDESK_API_TOKEN:
        pair = f"{settings.ZENDESK_EMAIL}/token:{settings.ZENDESK_API_TOKEN}".encode()
        authorization = f"Basic {base64.b64encode(pair).decode()}"
    else:
        raise ConnectorNotConfigured(
            "Zendesk needs ZENDESK_EMAIL and ZENDESK_API_TOKEN, or ZENDESK_OAUTH_TOKEN"
        )
    client = UpstreamClient(
        base_url=settings.ZENDESK_BASE_URL,
        headers={"Authorization": authorization},
        policy=retry_policy_from_settings(),
    )
    return ZendeskConnector(client=client)
