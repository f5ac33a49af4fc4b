"""What every benchmark needs: a database of its own, percentiles, questions to ask, quiet logs,
and one error type. The one home of benchmark support: it sits in ``kb``, the bottom layer, so
each layer's benchmark (``kb_bench``, ``search.tooling.benchmarks``,
``assistant.tooling.benchmarks``) can use it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from django.db import connection


class BenchmarkError(RuntimeError):
    """The benchmark cannot run as asked; the message says why and how to fix it."""


def percentiles(values: Sequence[float]) -> dict[int, float]:
    """p50, p95 and p99 of ``values`` (linear interpolation, as numpy computes it)."""
    p50, p95, p99 = np.percentile(np.asarray(values, dtype=float), [50, 95, 99])
    return {50: float(p50), 95: float(p95), 99: float(p99)}


@contextmanager
def throwaway_database(name: str, *, keep: bool = False) -> Iterator[str]:
    """Switch the default connection to a fresh, migrated database called ``name`` and drop it
    afterwards (unless ``keep``), so a benchmark never touches real data. Each benchmark uses
    its own name, so two run at once never clobber each other."""
    creation = connection.creation
    old_name = connection.settings_dict["NAME"]
    old_test_name = connection.settings_dict["TEST"].get("NAME")
    connection.settings_dict["TEST"]["NAME"] = name
    creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        yield name
    finally:
        if keep:
            connection.close()
            connection.settings_dict["NAME"] = old_name
        else:
            creation.destroy_test_db(old_name, verbosity=0)
        connection.settings_dict["TEST"]["NAME"] = old_test_name


def questions_cycle(path: Path, count: int) -> list[str]:
    """``count`` questions from an eval file (one JSON case a line), cycling through them."""
    questions = [
        json.loads(line)["question"] for line in path.read_text().splitlines() if line.strip()
    ]
    return [questions[number % len(questions)] for number in range(count)]


@contextmanager
def quiet(logger_name: str) -> Iterator[None]:
    """Silence one logger's INFO lines (one per retrieval) while timing; warnings still show."""
    logger = logging.getLogger(logger_name)
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)
