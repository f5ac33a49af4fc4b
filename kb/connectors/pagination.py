"""Walking an API's pages by the link each page gives to the next one."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from kb.connectors.base import ConnectorError
from kb.connectors.http import UpstreamClient

# A listing longer than this many pages is taken for a pagination loop (a next link that never
# ends), not a help center: 10,000 pages of 100 is a million articles.
MAX_PAGES = 10_000


def pages_follow(
    client: UpstreamClient,
    first: str,
    *,
    params: Mapping[str, Any] | None = None,
    next_of: Callable[[Any], str | None],
) -> Iterator[tuple[Any, str | None]]:
    """Each page's JSON from ``first`` on, with the URL of the page after it (None on the last):
    a run that dies after a page resumes from that URL. ``params`` go on the first request
    only; a next link carries its own."""
    url: str | None = first
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        if url is None:
            return
        payload = client.get_json(url, params if url == first else None)
        if not isinstance(payload, dict):
            raise ConnectorError(f"{url.split('?', 1)[0]} answered {type(payload).__name__}")
        following = next_of(payload)
        if following is not None and following in seen:
            raise ConnectorError(f"the API's next link repeats itself ({following.split('?')[0]})")
        seen.add(url)
        yield payload, following
        url = following
    raise ConnectorError(f"more than {MAX_PAGES:,} pages: a pagination loop?")


def items_of(payload: Any, key: str) -> list[dict[str, Any]]:
    """``payload[key]`` as a list of objects; ``ConnectorError`` if the API answered another
    shape (a run must not read a changed API as "no articles" and remove everything)."""
    items = payload.get(key) if isinstance(payload, dict) else None
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise ConnectorError(f"expected a list of objects in {key!r}, got {type(items).__name__}")
    return items
