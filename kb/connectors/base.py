"""What every connector gives the sync: upstream articles, page by page, with where to resume.

A connector is a ``kb_sync`` source that lives behind an API instead of in a folder. It only
reads: ``kb.services.sync.connector`` writes what it reads through the folder sync's importer,
under the same provenance and conflict rules (the database stays the truth).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

JSONValue = Any  # what a checkpoint position holds: JSON-ready values only


class ConnectorError(RuntimeError):
    """The upstream could not be read as documented (an unexpected shape, a refused call);
    what was written before it stays, and the next run resumes from the last checkpoint."""


class ConnectorNotConfigured(ConnectorError):
    """A connector asked for whose settings are missing; the message names the variables."""


@dataclass(frozen=True)
class UpstreamArticle:
    """One article as the upstream has it, in the terms our documents use."""

    article_id: str
    title: str
    body_html: str
    updated_at: datetime.datetime
    category: str = ""  # our category slug ("" when the article has none)
    draft: bool = False  # unpublished upstream: kept a draft here, and internal
    restricted: bool = False  # visible upstream only to some signed-in users: internal here
    url: str = ""  # where readers see it upstream


@dataclass(frozen=True)
class ConnectorPage:
    """One page of an upstream listing, and where a run stands once it is written.

    ``articles`` are candidates for writing: all of them when ``changed_since_cursor`` (the
    upstream chose them, an incremental export), else those updated at or after the cursor or
    not yet in the database. ``seen`` are the ids a complete listing holds on this page: once
    the listing is complete, the source's documents whose article was never seen are removed
    (if the connector confirms them gone and nobody edited them since).
    """

    articles: Sequence[UpstreamArticle] = ()
    seen: Sequence[str] = ()
    changed_since_cursor: bool = False
    # Where the next run starts if this one dies after writing this page (JSON-ready).
    position: JSONValue = None
    # The cursor a run that gets through this page may commit (None: the newest updated_at seen).
    cursor: datetime.datetime | None = None
    total: int | None = None  # articles the upstream says the listing holds, for progress
    category_labels: Mapping[str, str] = field(default_factory=dict)  # slug -> name


class Connector(Protocol):
    """One upstream help center. ``source`` is how its documents record where they came from
    (``zendesk:acme``), ``path_prefix`` the folder of their paths (``zendesk/123.md``)."""

    name: str
    source: str
    path_prefix: str

    def pages(
        self, *, cursor: datetime.datetime | None, position: JSONValue
    ) -> Iterator[ConnectorPage]:
        """The pages of a run: from ``position`` when resuming one that died (else from the
        start), asking for what changed since ``cursor`` where the API can. A run that lists
        everything (for deletions by absence) ends with the listing's last page."""
        ...

    def lists_everything(self) -> bool:
        """Whether ``pages`` ends with a complete listing, so an article never ``seen`` is gone."""
        ...

    def gone(self, article_ids: Sequence[str]) -> list[str]:
        """Of articles absent from a complete listing, those really gone upstream (a 404),
        not merely hidden from the listing."""
        ...


def article_path(connector: Connector, article_id: str) -> str:
    """The document path of an article: stable across renames and moves upstream, since it is
    the citation id and the row's identity (``zendesk/360001234.md``)."""
    return f"{connector.path_prefix}/{article_id}.md"


def article_id_of(connector: Connector, path: str) -> str | None:
    """The article id of a document path this connector writes, else None."""
    prefix = f"{connector.path_prefix}/"
    if not path.startswith(prefix) or not path.endswith(".md"):
        return None
    article_id = path[len(prefix) : -len(".md")]
    return article_id or None  # a website's ids are page paths, `/` included


def epoch_datetime(value: object) -> datetime.datetime:
    """An API's epoch seconds as an aware datetime; ``ConnectorError`` for anything else."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConnectorError(f"expected epoch seconds, got {value!r}")
    return datetime.datetime.fromtimestamp(value, tz=datetime.UTC)


def iso_datetime(value: object) -> datetime.datetime:
    """An API's ISO 8601 time (``2024-05-01T10:00:00Z``) as an aware datetime."""
    if not isinstance(value, str):
        raise ConnectorError(f"expected an ISO 8601 time, got {value!r}")
    try:
        parsed = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ConnectorError(f"expected an ISO 8601 time, got {value!r}") from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.UTC)
