"""A real Celery worker process on the real broker, using the test database."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from tests.support.polling import until
from tests.support.processes import database_url, stop_process

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def worker_process(
    extra_env: Mapping[str, str] | None = None,
    *,
    queues: str | None = None,
    name: str = "celery",
) -> Iterator[subprocess.Popen[str]]:
    """Start ``celery worker`` (solo pool) pointed at the test database, on ``queues`` (comma
    separated; every queue by default), as node ``name@<host>``; stop it afterwards. Needs
    ``transactional_db``: the worker only sees committed rows."""
    env = {**os.environ, "DATABASE_URL": database_url(), **(extra_env or {})}
    queue_options = ["--queues", queues] if queues else []
    queue_options += ["--hostname", f"{name}@%h"]
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool", "solo",
         "--loglevel", "WARNING", "--without-mingle", "--without-gossip", *queue_options],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )  # fmt: skip
    try:
        yield process
    finally:
        stop_process(process, timeout=20)


def until_worker_answers(process: subprocess.Popen[str], *, name: str = "celery") -> None:
    """Wait until the worker started as ``name`` answers a ping: connected to the broker and
    idle (a solo worker busy with a task answers none)."""
    from config.celery_app import app

    def answered() -> bool:
        assert process.poll() is None, process.stdout and process.stdout.read(2000)
        replies = app.control.ping(timeout=0.5) or []
        return any(node.startswith(f"{name}@") for reply in replies for node in reply)

    until(answered, seconds=90, why=f"the worker {name} did not answer a ping within 90 s")
