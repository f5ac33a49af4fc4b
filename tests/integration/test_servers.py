"""The embedded servers start by themselves when first needed (loading the settings starts
none); external servers configured by URL work too."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import psutil
import pytest
from django.conf import settings
from django.db import connection

from kb.runtime import embedded

ROOT = Path(__file__).resolve().parents[2]

# Publishes one message through the configured Celery broker and reads it back.
ROUND_TRIP = """
import django, uuid
django.setup()
from config.celery_app import app
queue_name = "groundwork-test-" + uuid.uuid4().hex
with app.connection_for_write() as conn:
    conn.ensure_connection(max_retries=2)
    queue = conn.SimpleQueue(queue_name)
    queue.put({"ping": queue_name})
    message = queue.get(timeout=5)
    message.ack()
    assert message.payload == {"ping": queue_name}, message.payload
    queue.close()
    queue.queue.bind(conn.default_channel).delete()
print("round trip via", conn.transport_cls)
"""


def _port_open(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _run(code: str, **environ: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )


@pytest.mark.django_db
def test_embedded_postgres_has_pgvector() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        (version,) = cursor.fetchone()
        cursor.execute("SHOW server_version")
        (server_version,) = cursor.fetchone()
    assert tuple(int(part) for part in version.split(".")[:2]) >= (0, 8)
    if "DATABASE_URL" not in os.environ:
        assert server_version.startswith("18")


def test_embedded_redis_broker_round_trip() -> None:
    if "CELERY_BROKER_URL" in os.environ:
        pytest.skip("an external broker is configured")
    assert settings.CELERY_BROKER_URL.startswith("redis+socket://")
    result = _run(ROUND_TRIP)
    assert result.returncode == 0, result.stderr


@pytest.mark.external
def test_external_redis_url_works() -> None:
    if not _port_open(6379):
        pytest.skip("no Redis on 127.0.0.1:6379 on this machine")
    result = _run(ROUND_TRIP, CELERY_BROKER_URL="redis://127.0.0.1:6379/15")
    assert result.returncode == 0, result.stderr
    assert "redis" in result.stdout.lower()


@pytest.mark.external
def test_external_rabbitmq_url_works() -> None:
    if not _port_open(5672):
        pytest.skip("no RabbitMQ on 127.0.0.1:5672 on this machine")
    result = _run(ROUND_TRIP, CELERY_BROKER_URL="amqp://guest:guest@127.0.0.1:5672//")
    assert result.returncode == 0, result.stderr


def test_embedded_redis_restarts_after_stop(tmp_path: Path) -> None:
    data_dir = tmp_path / f"d{uuid.uuid4().hex[:6]}"
    socket_path = embedded.redis_ensure_running(data_dir=data_dir)
    try:
        assert socket_path.exists()
        assert embedded.redis_stop(data_dir=data_dir) is True
        assert embedded.redis_ensure_running(data_dir=data_dir) == socket_path
    finally:
        embedded.redis_stop(data_dir=data_dir)


def test_unstartable_postgres_says_why_in_one_line(tmp_path: Path) -> None:
    # given a data directory that is a file, so no cluster can live there
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (data_dir / "postgres").write_text("not a directory")

    with pytest.raises(embedded.EmbeddedServerError) as raised:
        embedded.postgres_ensure_running(data_dir=data_dir)

    message = str(raised.value)
    assert "\n" not in message
    assert "Embedded PostgreSQL could not start" in message and "DATABASE_URL" in message


def _shared_buffers_and_start(endpoint: embedded.PostgresEndpoint) -> tuple[str, str]:
    with embedded._maintenance_connection(endpoint) as maintenance:
        row = maintenance.execute(
            "SELECT current_setting('shared_buffers'), pg_postmaster_start_time()::text"
        ).fetchone()
    assert row is not None
    return row[0], row[1]


def test_embedded_postgres_runs_with_the_configured_shared_buffers(tmp_path: Path) -> None:
    # given a new cluster asked for 48MB of shared buffers (PostgreSQL's default is 128MB)
    data_dir = tmp_path / f"p{uuid.uuid4().hex[:6]}"
    try:
        endpoint = embedded.postgres_ensure_running(data_dir=data_dir, shared_buffers="48MB")
        size, started = _shared_buffers_and_start(endpoint)
        assert size == "48MB"

        # when it is asked again for the same size, it keeps running as it is
        endpoint = embedded.postgres_ensure_running(data_dir=data_dir, shared_buffers="48MB")
        assert _shared_buffers_and_start(endpoint) == (size, started)

        # when the size changes, it restarts once with the new one
        endpoint = embedded.postgres_ensure_running(data_dir=data_dir, shared_buffers="64MB")
        size, restarted = _shared_buffers_and_start(endpoint)
        assert size == "64MB" and restarted != started

        # and a size PostgreSQL cannot read is one line naming the variable, server untouched
        with pytest.raises(embedded.EmbeddedServerError) as raised:
            embedded.postgres_ensure_running(data_dir=data_dir, shared_buffers="lots")
        assert "EMBEDDED_POSTGRES_SHARED_BUFFERS" in str(raised.value)
        assert "\n" not in str(raised.value)
        assert _shared_buffers_and_start(endpoint) == ("64MB", restarted)
    finally:
        embedded.postgres_stop(data_dir=data_dir)


# --- Started at first use, never on import -------------------------------------------------------


def _fresh_data_dir() -> Path:
    """A data directory no server has used yet, under the run's own (short enough for sockets)."""
    return Path(settings.DATA_DIR) / f"fresh-{uuid.uuid4().hex[:8]}"


def _embedded_env(data_dir: Path) -> dict[str, str]:
    """The environment of the default set-up, with its embedded servers under ``data_dir``."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    env.update(GROUNDWORK_ENV="test", GROUNDWORK_DATA_DIR=str(data_dir))
    env.update(DJANGO_SETTINGS_MODULE="config.settings")
    return env


def _run_embedded(*args: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` on the default set-up, with its embedded servers under ``data_dir``."""
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=_embedded_env(data_dir),
        capture_output=True,
        text=True,
        timeout=120,
    )


def _stop_and_remove(*data_dirs: Path) -> None:
    embedded.stop_all(list(data_dirs))
    for data_dir in data_dirs:
        shutil.rmtree(data_dir, ignore_errors=True)


def _servers_under(data_dir: Path) -> set[str]:
    """Which embedded servers run with their data under ``data_dir``: postgres, redis."""
    found = set()
    for process in psutil.process_iter(["cmdline"]):
        command = " ".join(process.info["cmdline"] or [])
        if str(data_dir) in command:
            if "postgres" in command.split()[0]:
                found.add("postgres")
            elif "redis-server" in command.split()[0]:
                found.add("redis")
    return found


def test_loading_the_settings_and_manage_py_check_start_no_server() -> None:
    # given a data directory no server has used
    data_dir = _fresh_data_dir()
    try:
        # when the settings are loaded and the apps set up (what mypy's Django plugin does),
        # and `manage.py check` runs
        loaded = _run_embedded(
            "-c",
            "import django; django.setup(); from django.conf import settings; "
            "print(settings.DATABASES['default']['ENGINE'], settings.CELERY_BROKER_URL)",
            data_dir=data_dir,
        )
        checked = _run_embedded("manage.py", "check", data_dir=data_dir)

        # then both succeed with the embedded set-up, and no server started or data appeared
        assert loaded.returncode == 0, loaded.stderr
        assert loaded.stdout.split()[0] == "kb.runtime.postgres"
        assert checked.returncode == 0, checked.stderr
        assert "no issues" in checked.stdout
        assert not data_dir.exists()
        assert _servers_under(data_dir) == set()
    finally:
        _stop_and_remove(data_dir)


FIRST_CONNECTION = """
import django
django.setup()
from pathlib import Path
from django.conf import settings
from django.db import connection
data_dir = Path(settings.DATA_DIR)
assert not data_dir.exists(), "a server started before the first connection"
with connection.cursor() as cursor:
    cursor.execute("SELECT current_database()")
    print(cursor.fetchone()[0], connection.settings_dict["HOST"])
print(sorted(path.name for path in data_dir.iterdir()))
"""


def test_the_first_database_connection_starts_postgres_and_only_postgres() -> None:
    data_dir = _fresh_data_dir()
    try:
        result = _run_embedded("-c", FIRST_CONNECTION, data_dir=data_dir)

        assert result.returncode == 0, result.stderr
        database, host = result.stdout.splitlines()[0].split()
        assert database == "groundwork" and host  # the socket directory, filled in at connect
        assert (data_dir / "postgres" / "postmaster.pid").exists()
        assert _servers_under(data_dir) == {"postgres"}
    finally:
        _stop_and_remove(data_dir)


# the process writes a key named by its argument: on a shared server, one key written by several
# processes at once reads back whichever write came last
FIRST_CACHE_USE = """
import sys, django
django.setup()
from django.core.cache import cache
cache.set(f"started-by {sys.argv[1]}", sys.argv[1], 30)
print(cache.get(f"started-by {sys.argv[1]}"))
"""


def test_the_first_cache_use_and_the_first_broker_connection_each_start_redis() -> None:
    cache_dir, broker_dir = _fresh_data_dir(), _fresh_data_dir()
    try:
        cached = _run_embedded("-c", FIRST_CACHE_USE, "first use", data_dir=cache_dir)
        published = _run_embedded("-c", ROUND_TRIP, data_dir=broker_dir)

        assert cached.returncode == 0, cached.stderr
        assert cached.stdout.strip() == "first use"
        assert _servers_under(cache_dir) == {"redis"}
        assert published.returncode == 0, published.stderr
        assert _servers_under(broker_dir) == {"redis"}
    finally:
        _stop_and_remove(cache_dir, broker_dir)


def test_processes_whose_first_cache_use_comes_together_share_one_redis() -> None:
    # given a data directory no server has used, and three processes (a web server's workers
    # and a Celery worker, say) that first touch the cache at the same moment
    data_dir = _fresh_data_dir()
    try:
        processes = [
            subprocess.Popen(
                [sys.executable, "-c", FIRST_CACHE_USE, f"process {number}"],
                cwd=ROOT,
                env=_embedded_env(data_dir),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for number in range(3)
        ]
        outputs = [process.communicate(timeout=120) for process in processes]

        # then each of them worked, and on one and the same server
        for number, (process, (stdout, stderr)) in enumerate(zip(processes, outputs, strict=True)):
            assert process.returncode == 0, stderr
            assert stdout.strip() == f"process {number}"
        redis_servers = [
            process
            for process in psutil.process_iter(["cmdline"])
            if str(data_dir) in " ".join(process.info["cmdline"] or [])
            and "redis-server" in (process.info["cmdline"] or [""])[0]
        ]
        assert len(redis_servers) == 1, [process.info["cmdline"] for process in redis_servers]
    finally:
        for process in psutil.process_iter(["cmdline"]):
            command = process.info["cmdline"] or [""]
            if str(data_dir) in " ".join(command) and "redis-server" in command[0]:
                process.kill()  # a second server the socket no longer leads to
        _stop_and_remove(data_dir)
