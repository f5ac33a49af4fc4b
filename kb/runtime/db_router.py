"""Reads that may lag go to a read replica; everything else stays on the primary.

With ``DATABASE_REPLICA_URL`` set, the settings add a ``replica`` database. Code that reads
what a lagging copy may serve (retrieval, the public /docs pages) runs inside
``replica_reads()``; ``PrimaryReplicaRouter`` then sends its ORM reads to the replica, and raw
SQL asks ``read_alias()`` for the connection to use. Writes, the index state and every other
read, read-after-write ones above all (admin, the chat's own conversation), stay on the
primary. Without a replica every alias is the primary and nothing changes.

A replica may lag: retrieval re-checks on the primary that the chunks it found still exist and
are visible before they can be cited (``search.selectors.chunks_still_visible``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections

REPLICA_DB_ALIAS = "replica"

_replica_reads: ContextVar[bool] = ContextVar("replica_reads", default=False)
_primary_only: ContextVar[bool] = ContextVar("primary_only", default=False)


def replica_configured() -> bool:
    return REPLICA_DB_ALIAS in connections.settings


@contextmanager
def replica_reads() -> Iterator[None]:
    """Send the reads made inside (on this thread or task) to the replica, if there is one.
    Also a decorator: each call gets its own context."""
    token = _replica_reads.set(True)
    try:
        yield
    finally:
        _replica_reads.reset(token)


@contextmanager
def primary_only() -> Iterator[None]:
    """Read the primary inside, even in ``replica_reads()``: for reads that must see what was
    just written, or what this transaction wrote and has not committed (a test question asked
    against a draft's chunks, or right after the page was indexed)."""
    token = _primary_only.set(True)
    try:
        yield
    finally:
        _primary_only.reset(token)


def read_alias() -> str:
    """The database the current code reads from: the replica inside ``replica_reads()`` when
    one is configured (and not inside ``primary_only()``), the primary otherwise."""
    if _replica_reads.get() and not _primary_only.get() and replica_configured():
        return REPLICA_DB_ALIAS
    return DEFAULT_DB_ALIAS


class PrimaryReplicaRouter:
    """Django's database router: reads follow ``read_alias()``, writes and migrations go to
    the primary, and rows from either copy may be related (they are the same rows)."""

    def db_for_read(self, model: type, **hints: Any) -> str:
        return read_alias()

    def db_for_write(self, model: type, **hints: Any) -> str:
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1: object, obj2: object, **hints: Any) -> bool:
        return True

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool:
        return db == DEFAULT_DB_ALIAS
