"""The processes ``make demo`` runs, and the supervisor that keeps them running.

The demo serves with the production web server and settings file (gunicorn,
``config/gunicorn.conf.py``: a fixed number of worker processes and threads) and with DEBUG
off, because what the demo serves is what a team evaluates. Django's development server starts
a thread, and with persistent connections a database connection, per request: under 50
concurrent askers it ran the embedded PostgreSQL out of connections. Under gunicorn each thread
holds at most one connection, so the web server holds at most ``WEB_CONCURRENCY`` x
``GUNICORN_THREADS``.

Each child runs in its own process group, so stopping (or restarting) one also ends what it
forked: a Celery worker's pool process and embedded beat would otherwise outlive it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import structlog
from django.db import connection

log = structlog.get_logger("groundwork.demo")

BASE_DIR = Path(__file__).resolve().parents[2]
# Files and modules of the wiring, named to the child processes (not imported here).
GUNICORN_CONFIG = BASE_DIR / "config" / "gunicorn.conf.py"
# glibc gives each allocating thread its own heap arena (up to 8 per core) and keeps what a
# burst grew them to. Two arenas, and large buffers (the embedder's tensors) in their own
# mappings that go back to the system when freed, let memory return to its idle figure:
# measured on 8 threads of sentence batches, 238 -> 483 MB without these, 188 -> 193 MB with.
MALLOC_ENV = {"MALLOC_ARENA_MAX": "2", "MALLOC_MMAP_THRESHOLD_": "65536"}
# The web server and the worker run with DEBUG off, as in production, whatever the shell says:
# with it on, every 404 listed the site's URL patterns and named the view that raised it.
# (Django's debug pages are for `manage.py runserver` on a developer's machine.)
AS_IN_PRODUCTION_ENV = {"DJANGO_DEBUG": "false"}
# A child that exits this often within RESTART_WINDOW_SECONDS is broken, not unlucky.
MAX_RESTARTS = 5
RESTART_WINDOW_SECONDS = 60.0


class SupervisorGaveUp(RuntimeError):
    """A child kept exiting; the message names it and says where to look."""


@dataclass(frozen=True)
class ChildSpec:
    name: str
    command: Sequence[str]
    env: Mapping[str, str] = field(default_factory=dict)


def web_server(*, port: int, env: Mapping[str, str] | None = None) -> ChildSpec:
    """gunicorn with the production settings file, on loopback at ``port``."""
    return ChildSpec(
        name="web",
        command=[
            sys.executable,
            "-m",
            "gunicorn",
            "-c",
            str(GUNICORN_CONFIG),
            "--bind",
            f"127.0.0.1:{port}",
            "config.wsgi",
        ],
        env={
            **{k: os.environ.get(k, v) for k, v in MALLOC_ENV.items()},
            **AS_IN_PRODUCTION_ENV,
            **(env or {}),
        },
    )


def celery_worker(*, schedule: Path) -> ChildSpec:
    """One Celery worker with beat embedded: it runs the periodic sweeps too."""
    return ChildSpec(
        name="worker",
        command=[
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--beat",
            "--concurrency",
            "1",
            "--loglevel",
            "INFO",
            "--schedule",
            str(schedule),
        ],
        env=AS_IN_PRODUCTION_ENV,
    )


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def database_url() -> str:
    """``DATABASE_URL`` for a child process: the database this process is connected to (a
    benchmark's or a test run's own, not the one in the settings)."""
    # Connected first: the embedded server's HOST and PORT are known from its first connection.
    connection.ensure_connection()
    database = connection.settings_dict
    host = quote(str(database["HOST"] or ""), safe="")
    password = f":{quote(database['PASSWORD'], safe='')}" if database.get("PASSWORD") else ""
    user = quote(str(database["USER"] or ""), safe="")
    return f"postgres://{user}{password}@{host}:{database['PORT']}/{database['NAME']}"


@dataclass
class _Child:
    spec: ChildSpec
    process: subprocess.Popen[bytes]
    exits: deque[float] = field(default_factory=deque)


class Supervisor:
    """Starts children, restarts any that exits (with a log line), and stops them all."""

    def __init__(self, specs: Sequence[ChildSpec]) -> None:
        self._specs = list(specs)
        self._children: list[_Child] = []

    def start(self) -> None:
        self._children = [_Child(spec, self._spawn(spec)) for spec in self._specs]

    def pids(self) -> dict[str, int]:
        return {child.spec.name: child.process.pid for child in self._children}

    def check(self) -> None:
        """Restart every child that has exited. Raises ``SupervisorGaveUp`` for a child that
        exited more than ``MAX_RESTARTS`` times within ``RESTART_WINDOW_SECONDS``."""
        for child in self._children:
            code = child.process.poll()
            if code is None:
                continue
            now = time.monotonic()
            child.exits.append(now)
            while child.exits and child.exits[0] < now - RESTART_WINDOW_SECONDS:
                child.exits.popleft()
            _kill_group(child.process.pid, signal.SIGKILL)  # what it forked dies with it
            if len(child.exits) > MAX_RESTARTS:
                raise SupervisorGaveUp(
                    f"the {child.spec.name} process exited {len(child.exits)} times within "
                    f"{RESTART_WINDOW_SECONDS:.0f}s (last exit code {code}); its log is above"
                )
            old_pid = child.process.pid
            child.process = self._spawn(child.spec)
            log.warning(
                "process_restarted",
                process=child.spec.name,
                exit_code=code,
                old_pid=old_pid,
                pid=child.process.pid,
            )

    def stop(self, *, timeout: float = 20.0) -> None:
        """SIGTERM to every child (each stops what it started, gracefully), then SIGKILL to
        whatever is left of its group after ``timeout``."""
        for child in self._children:
            if child.process.poll() is None:
                child.process.terminate()
        deadline = time.monotonic() + timeout
        for child in self._children:
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.process.wait(timeout=max(deadline - time.monotonic(), 0.1))
            _kill_group(child.process.pid, signal.SIGKILL)
            child.process.wait()

    def _spawn(self, spec: ChildSpec) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            list(spec.command),
            cwd=BASE_DIR,
            env={**os.environ, **spec.env},
            start_new_session=True,
        )
        log.info("process_started", process=spec.name, pid=process.pid)
        return process


def _kill_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # the group is gone already
        os.killpg(pgid, sig)
