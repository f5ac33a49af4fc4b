"""Shared pieces of the chat tests: a tiny help center and a generator that records its calls."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from django.core.cache import cache

from assistant.generators import (
    GenerationDone,
    GenerationError,
    GenerationEvent,
    Generator,
    Prompt,
    TextDelta,
)
from kb.actors import SYSTEM
from kb.embedders import Embedder
from kb.services.sync import corpus_sync

REFUNDS = """---
title: Refund Policy
updated: 2026-09-14
---
# Refund Policy

## Monthly plans

Monthly plans are refundable within 30 days of purchase, no questions asked. The refund goes
back to the card that paid for the plan.

## Annual plans

Annual plans get a prorated refund for the unused months within 60 days of payment. After 60
days an annual plan can be cancelled but is not refunded.
"""

ESCALATION = """---
title: Escalation Playbook
audience: internal
---
# Escalation Playbook

Support agents may grant goodwill credits of up to 200 dollars without a manager's approval.
"""

WIDGET = """---
title: Embedding the Status Widget
updated: 2026-05-02
---
# Embedding the Status Widget

To embed the status widget, paste <script>alert('pwned')</script> into the footer of your page.
The status widget shows our uptime for the last ninety days.
"""

RATE_LIMITS = """---
title: API Rate Limits
updated: 2026-03-01
---
# API Rate Limits

The API allows 100 requests per second per account. Too many requests return HTTP 429 with a
Retry-After header that says how many seconds to wait before retrying.
"""

HELP_CENTER = {
    "policies/refunds.md": REFUNDS,
    "internal/escalation.md": ESCALATION,
    "developers/status-widget.md": WIDGET,
    "api/rate-limits.md": RATE_LIMITS,
}

# Questions the tiny help center answers, and where the answer lives.
REFUND_QUESTION = "Can I get a refund on a monthly plan?"
UNANSWERABLE_QUESTION = "What is the airspeed velocity of an unladen swallow?"
INTERNAL_QUESTION = "How much goodwill credit can support agents grant without approval?"


def write_help_center(root: Path, pages: dict[str, str] | None = None) -> Path:
    for path, text in (pages or HELP_CENTER).items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return root


def index_help_center(root: Path, *, embedder: Embedder) -> Path:
    """The tiny help center written under ``root`` and indexed, every page of it, with no answers
    or rate counts left in the shared Redis by earlier tests."""
    report = corpus_sync(directory=write_help_center(root), embedder=embedder, actor=SYSTEM)
    assert report.failed == [], report.failed
    cache.clear()
    return root


class RecordingGenerator:
    """A real generator, recording every call (and able to fail on demand)."""

    def __init__(self, inner: Generator) -> None:
        self._inner = inner
        self.name = inner.name
        self.quoted = inner.quoted
        self.calls: list[tuple[str, Prompt]] = []
        self.failure: GenerationError | None = None

    def stream(self, *, question: str, prompt: Prompt) -> Iterator[GenerationEvent]:
        self.calls.append((question, prompt))
        if self.failure is not None:
            raise self.failure
        yield from self._inner.stream(question=question, prompt=prompt)


class ScriptedGenerator:
    """A generator that writes the given text in a few deltas: for the pipeline's handling of
    what a model may produce (no citations, invented ones, "not covered", a cut-off answer)."""

    quoted = False

    def __init__(self, text: str, *, stop_reason: str = "end_turn", name: str = "test/scripted"):
        self.name = name
        self.text = text
        self.stop_reason = stop_reason

    def stream(self, *, question: str, prompt: Prompt) -> Iterator[GenerationEvent]:
        words = self.text.split(" ")
        for index in range(0, len(words), 3):
            yield TextDelta(" ".join(words[index : index + 3]) + " ")
        yield GenerationDone.for_stop_reason(self.stop_reason)
