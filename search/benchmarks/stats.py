"""Small measuring helpers shared by the benchmarks."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


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
