"""``manage.py ops_status``: the figures to watch, one line each: messages waiting per queue,
index states per embedding model (pending, failed, not current, oldest pending), answer
latency over the last hour, replica lag. ``--json`` prints them for a monitoring agent."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError

from config.status import answer_latency, index_states, queue_depths, replica_lag_seconds
from kb.errors import one_line


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} s"


class Command(BaseCommand):
    help = "Queue depth per queue, pending index states, answer latency and replica lag."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="one JSON object")

    def handle(self, *args: Any, **options: Any) -> None:
        queues = queue_depths()
        try:
            states, latency, lag = index_states(), answer_latency(), replica_lag_seconds()
        except DatabaseError as exc:
            raise CommandError(
                f"cannot read the database ({one_line(exc)}); is it up and migrated?"
            ) from exc
        if options["json"]:
            self.stdout.write(
                json.dumps(
                    {
                        "queues": [dataclasses.asdict(queue) for queue in queues],
                        "index": [dataclasses.asdict(state) for state in states],
                        "answers_last_hour": dataclasses.asdict(latency),
                        "replica_lag_seconds": lag,
                    }
                )
            )
            return
        for queue in queues:
            depth = queue.error or f"{queue.messages} waiting"
            self.stdout.write(f"queue {queue.queue:<12} {depth}")
        for state in states:
            counts = ", ".join(f"{status} {count}" for status, count in state.by_status.items())
            self.stdout.write(
                f"index {state.model} ({state.state}): {counts or 'no documents'}; "
                f"not current {state.not_current}; oldest pending "
                f"{_seconds(state.oldest_pending_seconds)}"
            )
        self.stdout.write(
            f"answers (last hour): {latency.answers}, p50 {_seconds(latency.p50_seconds)}, "
            f"p95 {_seconds(latency.p95_seconds)}; {latency.pending} pending"
        )
        self.stdout.write(
            "replica: none configured" if lag is None else f"replica lag {_seconds(lag)}"
        )
