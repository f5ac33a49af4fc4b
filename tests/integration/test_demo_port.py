"""``manage.py demo`` when its port is taken: one line, never a traceback. A port the user chose
(``--port``, ``DEMO_PORT``) is kept or refused, naming both ways to choose another; the default
port, when taken, gives way to the next free one, said in one line. Before, gunicorn printed 30
lines of "Address already in use" and the demo gave up."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError

from config.management.commands.demo import demo_port_choose
from tests.support.processes import database_url

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port something listens on, as another program's server would."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield listener.getsockname()[1]


def _demo(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", "demo", *args],
        cwd=ROOT,
        env={
            **os.environ,
            "GROUNDWORK_ENV": "test",
            "GROUNDWORK_DATA_DIR": str(settings.DATA_DIR),
            "DATABASE_URL": database_url(),
            "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
            **(env or {}),
        },
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.django_db
def test_a_taken_port_given_with_port_is_one_line_naming_both_settings(taken_port: int) -> None:
    result = _demo("--port", str(taken_port))

    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f"port {taken_port} is in use" in lines[0]
    assert "--port" in lines[0] and "DEMO_PORT" in lines[0]
    assert "Traceback" not in result.stderr + result.stdout
    assert "Address already in use" not in result.stderr + result.stdout
    # refused before anything else ran: no migration, no corpus load
    assert "database migrated" not in result.stdout


@pytest.mark.django_db
def test_a_taken_port_given_in_demo_port_is_refused_the_same_way(taken_port: int) -> None:
    result = _demo(env={"DEMO_PORT": str(taken_port)})

    assert result.returncode == 1
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert f"port {taken_port} is in use" in result.stderr and "DEMO_PORT" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.django_db
def test_a_demo_port_that_is_not_a_number_is_one_line_naming_it() -> None:
    result = _demo(env={"DEMO_PORT": "eighty"})

    assert result.returncode == 1
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "DEMO_PORT" in result.stderr and "'eighty'" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_chosen_port_that_is_free_is_used_as_it_is() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]

    chosen = demo_port_choose(requested=free, default=8000)

    assert chosen.port == free and chosen.notice is None


def test_a_chosen_port_that_is_taken_is_refused(taken_port: int) -> None:
    with pytest.raises(CommandError, match=f"port {taken_port} is in use.*--port.*DEMO_PORT"):
        demo_port_choose(requested=taken_port, default=8000)


def test_the_default_port_taken_gives_way_to_the_next_free_one_in_one_line(
    taken_port: int,
) -> None:
    chosen = demo_port_choose(requested=None, default=taken_port)

    assert chosen.port > taken_port
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", chosen.port))  # free indeed
    assert chosen.notice == (
        f"port {taken_port} is in use: serving on {chosen.port} instead "
        "(choose one with --port N or DEMO_PORT=N)"
    )
