"""Errors as people read them: one short line, in logs, stored evidence and error pages.

It lives at the bottom layer because every layer reports failures the same way: ``kb`` (the
Voyage client), ``search`` (a degraded stage's reason) and ``assistant`` (a failed answer).
"""

from __future__ import annotations

# A failure reason in a log line, a stored snapshot or a message: long enough to say what and
# where, short enough to read at a glance.
REASON_CHARS = 300
# A server's own words inside one of our reasons, kept shorter so what we add after them survives.
DETAIL_CHARS = 160


def one_line(exc: BaseException) -> str:
    """An exception as one line for people and logs: its type and first line."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0] if lines else ''}".strip(" :")


def shortened(text: str, *, limit: int = REASON_CHARS) -> str:
    """``text`` on one line (whitespace runs collapsed), cut to ``limit`` with an ellipsis."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
