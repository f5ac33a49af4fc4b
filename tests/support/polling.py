"""Waiting for a state another process or thread brings about: poll it with a deadline."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest


def until(
    condition: Callable[[], object],
    *,
    seconds: float,
    why: str | Callable[[], object],
    interval: float = 0.05,
) -> None:
    """Return as soon as ``condition()`` is true; fail the test with ``why`` once ``seconds``
    have passed. ``why`` may be a callable, read only on failure (a worker's output, say).
    An assertion inside ``condition`` fails the test at once, as it would inline."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(str(why() if callable(why) else why))
        time.sleep(interval)
