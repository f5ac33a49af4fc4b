"""The embedded servers start by themselves; external servers configured by URL work too."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from config import embedded

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
