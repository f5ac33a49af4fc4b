"""Small measuring helpers shared by the benchmarks."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np


def percentiles(values: Sequence[float]) -> dict[int, float]:
    p50, p95, p99 = np.percentile(np.asarray(values, dtype=float), [50, 95, 99])
    return {50: float(p50), 95: float(p95), 99: float(p99)}


def questions_cycle(path: Path, count: int) -> list[str]:
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
