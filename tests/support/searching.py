"""Searches that keep running in other threads while a test changes the index under them."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from django.db import connection

T = TypeVar("T")
JOIN_SECONDS = 30.0


@dataclass
class BackgroundSearches(Generic[T]):
    results: list[T] = field(default_factory=list)  # one per search, in the order they finished
    errors: list[BaseException] = field(default_factory=list)  # each stopped its thread


@contextmanager
def searching(search: Callable[[], T], *, threads: int = 1) -> Iterator[BackgroundSearches[T]]:
    """Call ``search`` over and over in ``threads`` threads until the block ends.

    Every thread has its own database connection (so it reads only what is committed) and
    closes it when it stops. The test reads ``results`` and asserts ``errors`` is empty.
    """
    searches: BackgroundSearches[T] = BackgroundSearches()
    stop = threading.Event()

    def run() -> None:
        try:
            while not stop.is_set():
                searches.results.append(search())
        except BaseException as exc:  # reported to the test through `errors`
            searches.errors.append(exc)
        finally:
            connection.close()

    workers = [threading.Thread(target=run) for _ in range(threads)]
    for worker in workers:
        worker.start()
    try:
        yield searches
    finally:
        stop.set()
        for worker in workers:
            worker.join(timeout=JOIN_SECONDS)
    if any(worker.is_alive() for worker in workers):
        raise AssertionError(f"a search was still running {JOIN_SECONDS:g}s after the stop")
