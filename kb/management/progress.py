"""The progress bar every long-running kb command shows on stderr."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from tqdm import tqdm

from kb.services import Progress


@contextmanager
def progress_bar(description: str, *, enabled: bool = True) -> Iterator[Progress]:
    """A ``progress(done, total)`` callback drawing a bar, opened on the first call (when the
    total is known) and closed on leaving the block; a no-op when not ``enabled``."""
    bar: tqdm | None = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if not enabled:
            return
        if bar is None:
            bar = tqdm(total=total, unit="doc", desc=description, file=sys.stderr)
        bar.update(done - bar.n)

    try:
        yield progress
    finally:
        if bar is not None:
            bar.close()
