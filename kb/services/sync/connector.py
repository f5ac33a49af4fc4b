"""A connector's sync: the folder sync's importer fed page by page from an upstream API.

Each page's articles go through ``documents_import`` as the files of a folder named by the
connector's ``source`` (``zendesk:acme``), so the database stays the truth exactly as for
``kb_sync DIR``: an article is written only if it changed upstream since its last sync and no
one changed its row since; an admin edit is kept and reported as a conflict; an unchanged
article embeds nothing.

After each page is written the run saves a checkpoint (where to resume, the ids the listing
has seen, the newest upstream time read): a run that dies is finished by the next one from
there, and at worst the page it died in is read again, its written articles then unchanged.
The cursor moves only when a run is complete and nothing in it failed, so a failed article is
read again by the next run. A complete listing then removes the source's documents whose
article it never saw and the connector confirms gone, unless edited since (a conflict).
"""

from __future__ import annotations

import contextlib
import datetime
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import structlog
from django.db import connection
from django.utils import timezone

from kb.actors import SYSTEM, Actor
from kb.connectors import connector_from_settings
from kb.connectors.base import (
    Connector,
    ConnectorError,
    ConnectorPage,
    article_id_of,
    article_path,
)
from kb.connectors.documents import article_source
from kb.connectors.http import ConnectorHTTPError
from kb.embedders import Embedder, active_embedder
from kb.models import ConnectorState, Document, DocumentQuerySet
from kb.services.categories import category_labels_add
from kb.services.chunks import Progress
from kb.services.sync.importing import documents_import, synced_documents_remove
from kb.services.sync.report import SyncRefused, SyncReport

log = structlog.get_logger("groundwork.connectors")


class ConnectorRunFailed(RuntimeError):
    """The upstream failed mid-run; what was written stays and the checkpoint says where the
    next run resumes."""


@dataclass
class ConnectorReport:
    """What one run of a connector did: the sync's report plus the upstream side."""

    source: str
    sync: SyncReport = field(default_factory=SyncReport)
    pages: int = 0
    articles: int = 0  # read from the upstream
    resumed: bool = False
    cursor: datetime.datetime | None = None  # as the run leaves it
    requests: int = 0
    retries: int = 0
    seconds: float = 0.0

    def summary(self) -> str:
        resumed = ", resumed from a checkpoint" if self.resumed else ""
        cursor = f"{self.cursor:%Y-%m-%d %H:%M:%S}" if self.cursor else "none"
        return (
            f"{self.source}: read {self.articles:,} articles in {self.pages} page(s) "
            f"({self.requests} requests, {self.retries} retried){resumed}; cursor {cursor}; "
            f"in {self.seconds:.2f} s. {self.sync.summary()}"
        )


def connector_sync_scheduled(*, name: str) -> str:
    """A scheduled run of the connector ``name`` (the bulk queue's task): as the system, with
    the active embedder. A run already under way is left to finish, not waited for."""
    try:
        report = connector_sync(
            connector=connector_from_settings(name), embedder=active_embedder(), actor=SYSTEM
        )
    except SyncRefused as exc:
        log.info("connector_run_skipped", connector=name, reason=str(exc))
        return str(exc)
    return report.summary()


def connector_sync(
    *,
    connector: Connector,
    embedder: Embedder,
    actor: Actor,
    overwrite: bool = False,
    allow_prune_all: bool = False,
    progress: Progress | None = None,
) -> ConnectorReport:
    """Bring what changed upstream since the last run into the index (see the module)."""
    started = time.perf_counter()
    with _run_lock(connector.source):
        state, _ = ConnectorState.objects.get_or_create(
            source=connector.source, defaults={"connector": connector.name}
        )
        run = _Run.resume(state)
        report = ConnectorReport(source=connector.source, resumed=run.resumed)
        if not run.resumed:
            state.run_started_at = timezone.now()
            state.save(update_fields=["run_started_at"])
        try:
            if not run.listed:
                _pages_import(
                    connector=connector,
                    state=state,
                    run=run,
                    report=report,
                    embedder=embedder,
                    actor=actor,
                    overwrite=overwrite,
                    progress=progress,
                )
            if connector.lists_everything():
                _absent_remove(connector, run=run, report=report, allow_prune_all=allow_prune_all)
        except SyncRefused:
            # An empty listing: the next run lists again from the start, rather than resume
            # into the same refusal.
            ConnectorState.objects.filter(pk=state.pk).update(checkpoint={})
            raise
        except (ConnectorError, ConnectorHTTPError) as exc:
            state.last_error = str(exc)
            state.save(update_fields=["last_error"])
            log.warning("connector_run_stopped", source=connector.source, error=str(exc))
            raise ConnectorRunFailed(
                f"{connector.source}: {exc}; the {report.pages} page(s) read before it are "
                "written, and the next run resumes after them"
            ) from exc
        if not run.failed and run.newest is not None:
            state.cursor = run.newest
        state.checkpoint = {}
        state.run_finished_at = timezone.now()
        state.last_error = ""
        report.cursor = state.cursor
        report.seconds = time.perf_counter() - started
        state.last_summary = report.summary()
        state.save()
    log.info(
        "connector_synced",
        source=connector.source,
        pages=report.pages,
        articles=report.articles,
        indexed=len(report.sync.indexed),
        removed=len(report.sync.removed),
        conflicts=len(report.sync.conflicts),
        failed=len(report.sync.failed),
        seconds=round(report.seconds, 3),
    )
    return report


@dataclass
class _Run:
    """A run's progress, as its checkpoint keeps it between pages."""

    cursor: datetime.datetime | None  # the last complete run's
    position: object = None
    seen: set[str] = field(default_factory=set)
    newest: datetime.datetime | None = None
    failed: bool = False  # an article failed: the cursor must not pass it
    listed: bool = False  # every page is written; what is left is the removals
    resumed: bool = False

    @classmethod
    def resume(cls, state: ConnectorState) -> _Run:
        checkpoint = state.checkpoint or {}
        newest = checkpoint.get("newest")
        return cls(
            cursor=state.cursor,
            position=checkpoint.get("position"),
            seen=set(checkpoint.get("seen", [])),
            newest=datetime.datetime.fromisoformat(newest) if newest else None,
            failed=bool(checkpoint.get("failed")),
            listed=bool(checkpoint.get("listed")),
            resumed=bool(checkpoint),
        )

    def checkpoint(self) -> dict[str, object]:
        return {
            "position": self.position,
            "seen": sorted(self.seen),
            "newest": self.newest.isoformat() if self.newest else None,
            "failed": self.failed,
            "listed": self.listed,
        }

    def advance(self, page: ConnectorPage) -> None:
        self.position = page.position
        self.seen.update(page.seen)
        times = [page.cursor] if page.cursor else [a.updated_at for a in page.articles]
        if self.newest is not None:
            times.append(self.newest)
        self.newest = max(times, default=None)


def _pages_import(
    *,
    connector: Connector,
    state: ConnectorState,
    run: _Run,
    report: ConnectorReport,
    embedder: Embedder,
    actor: Actor,
    overwrite: bool,
    progress: Progress | None,
) -> None:
    """Write each page's candidates, then save the checkpoint after it."""
    stored = set(_source_rows(connector.source).values_list("path", flat=True))
    client = getattr(connector, "client", None)
    for page in connector.pages(cursor=run.cursor, position=run.position):
        articles = [
            article
            for article in page.articles
            if page.changed_since_cursor
            or run.cursor is None
            or article.updated_at >= run.cursor
            or article_path(connector, article.article_id) not in stored
        ]
        if articles:
            written = documents_import(
                sources=[article_source(connector, article) for article in articles],
                embedder=embedder,
                origin=connector.source,
                actor=actor,
                folder=connector.source,
                overwrite=overwrite,
                prune=False,
            )
            report.sync.add(written)
            run.failed = run.failed or bool(written.failed)
        if page.category_labels:
            category_labels_add(labels=page.category_labels)
        run.advance(page)
        report.pages += 1
        report.articles += len(page.articles)
        ConnectorState.objects.filter(pk=state.pk).update(checkpoint=run.checkpoint())
        if progress is not None:
            progress(report.articles, max(page.total or 0, report.articles))
        if client is not None:
            report.requests, report.retries = client.requests_made, client.retries
    run.listed = True
    ConnectorState.objects.filter(pk=state.pk).update(checkpoint=run.checkpoint())


def _absent_remove(
    connector: Connector, *, run: _Run, report: ConnectorReport, allow_prune_all: bool
) -> None:
    """Remove the documents of a complete listing's articles it never saw, once the connector
    confirms them gone; an empty listing removes nothing unless ``allow_prune_all``."""
    absent: dict[str, str] = {}
    for path in _source_rows(connector.source).values_list("path", flat=True):
        article_id = article_id_of(connector, path)
        if article_id is not None and article_id not in run.seen:
            absent[article_id] = path
    if not absent:
        return
    if not run.seen and not allow_prune_all:
        raise SyncRefused(
            f"{connector.source} listed no articles but the index holds {len(absent)} documents "
            "synced from it; refusing to remove them all (pass --allow-prune-all if that is "
            "what you want)"
        )
    gone = connector.gone(sorted(absent))
    synced_documents_remove(
        folder=connector.source, paths=[absent[i] for i in gone], report=report.sync
    )
    client = getattr(connector, "client", None)
    if client is not None:
        report.requests, report.retries = client.requests_made, client.retries


def _source_rows(source: str) -> DocumentQuerySet:
    return Document.objects.filter(origin=Document.Origin.FOLDER, sync_folder=source)


@contextlib.contextmanager
def _run_lock(source: str) -> Iterator[None]:
    """One run per source at a time (a scheduled run and a command's): a PostgreSQL session
    lock, released when the run ends or its connection closes (a killed worker's too)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", [source])
        (locked,) = cursor.fetchone()
    if not locked:
        raise SyncRefused(f"a sync of {source} is already running; try again when it ends")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", [source])
