"""The app served by a real gunicorn process, for the end-to-end tests and the server tests.

``running_server`` starts one for a block. ``shared_server`` keeps one per test process
(per xdist worker) for the e2e tests, which reuse it while they ask for the same environment:
starting gunicorn and loading the app and the model cost ~1.5-3 s of CPU, and there are dozens
of e2e tests. Between two tests the shared server is made as good as new for what the tests can
see (``tests/support/e2e_app.py``): no request of the last test still running, no cached row id
of the flushed database. It is stopped before any test outside ``tests/e2e`` runs
(``stop_shared_server``, from the root conftest), so those tests meet no extra process or
database connection, and at the end of the session, before the test database is dropped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.conf import settings

from kb.runtime.processes import free_port
from tests.support.e2e_app import BETWEEN_TESTS_PATH
from tests.support.polling import until
from tests.support.processes import database_url, stop_process

ROOT = Path(__file__).resolve().parents[2]
SERVER_START_SECONDS = 90.0
# A streamed answer still running when its page closed ends within this (its next write fails).
QUIET_SECONDS = 30.0


@dataclass(frozen=True)
class E2EServer:
    url: str  # base URL, no trailing slash
    log_path: Path
    process: subprocess.Popen[bytes]

    def log_tail(self, characters: int = 4000) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return text[-characters:]


def _wait_until_serving(server: E2EServer) -> None:
    def serving() -> bool:
        if server.process.poll() is not None:
            pytest.fail(
                f"the e2e server exited with {server.process.returncode}:\n{server.log_tail()}"
            )
        try:
            with urllib.request.urlopen(f"{server.url}/docs/", timeout=5) as response:
                return response.status == 200
        except urllib.error.HTTPError as error:
            pytest.fail(f"the e2e server answered {error.code} at start:\n{server.log_tail()}")
        except OSError:
            return False  # not listening yet

    until(
        serving,
        seconds=SERVER_START_SECONDS,
        why=lambda: (
            f"the e2e server did not answer within {SERVER_START_SECONDS:.0f}s:\n"
            f"{server.log_tail()}"
        ),
        interval=0.2,
    )


@contextmanager
def running_server(
    arguments: list[str], *, env: dict[str, str], log_dir: Path
) -> Iterator[E2EServer]:
    """``gunicorn`` with ``arguments`` (which must bind ``127.0.0.1:PORT`` for a free ``PORT``,
    passed in ``env["E2E_PORT"]``), on the test database and this run's Redis; stopped after."""
    port = env["E2E_PORT"]
    log_path = log_dir / "server.log"
    server_env = {
        **os.environ,
        "GROUNDWORK_ENV": "test",
        "GROUNDWORK_DATA_DIR": str(settings.DATA_DIR),
        "DATABASE_URL": database_url(),
        "PYTHONUNBUFFERED": "1",
        **env,
    }
    server_env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)  # the test process needs it, not the server
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", *arguments],
            cwd=ROOT,
            env=server_env,
            stdout=log,
            stderr=log,
        )
    server = E2EServer(url=f"http://127.0.0.1:{port}", log_path=log_path, process=process)
    try:
        _wait_until_serving(server)
        yield server
    finally:
        stop_process(process, timeout=15)


def e2e_arguments(port: str) -> list[str]:
    """The e2e server's gunicorn: the production worker class (gthread, each request read in
    its event loop, ``config/gunicorn_workers.py``), one worker of four threads."""
    return [
        "tests.support.e2e_app:application",
        "--bind", f"127.0.0.1:{port}",
        "--worker-class", "config.gunicorn_workers.RequestBufferingWorker",
        "--workers", "1", "--threads", "4",
        "--timeout", "120", "--graceful-timeout", "5",
        "--access-logfile", "-", "--error-logfile", "-",
    ]  # fmt: skip


@dataclass
class _Shared:
    env: dict[str, str]
    server: E2EServer
    stack: ExitStack


_shared: _Shared | None = None


def shared_server(env: dict[str, str], *, log_dirs: pytest.TempPathFactory) -> E2EServer:
    """This process's e2e server for ``env``: the running one if it was started with the same
    environment and is alive, else a new one (the old one stopped first)."""
    global _shared
    if _shared is not None and (_shared.env != env or _shared.server.process.poll() is not None):
        stop_shared_server()
    if _shared is None:
        port = str(free_port())
        stack = ExitStack()
        server = stack.enter_context(
            running_server(
                e2e_arguments(port),
                env={"E2E_PORT": port, **env},
                log_dir=log_dirs.mktemp("e2e-server"),
            )
        )
        _shared = _Shared(env=dict(env), server=server, stack=stack)
    return _shared.server


def _in_flight(server: E2EServer) -> int:
    """Requests the server is still answering; when it is none, it also forgets cached ids."""
    with urllib.request.urlopen(f"{server.url}{BETWEEN_TESTS_PATH}", timeout=10) as response:
        return int(json.load(response)["in_flight"])


def shared_server_between_tests(server: E2EServer) -> None:
    """Wait until ``server`` answers no request of the test that just ended (its log says which
    one lingers); a server that stays busy or has died is stopped, and the next test starts a
    new one. Called before the database is flushed, and again before the next test."""
    if _shared is None or _shared.server is not server:
        return
    if server.process.poll() is not None:
        stop_shared_server()
        return
    try:
        until(
            lambda: _in_flight(server) == 0,
            seconds=QUIET_SECONDS,
            why="",
            interval=0.05,
        )
    except (pytest.fail.Exception, OSError):
        sys.stderr.write(
            f"the shared e2e server was still busy after {QUIET_SECONDS:.0f}s; restarting it:\n"
            f"{server.log_tail(2000)}\n"
        )
        stop_shared_server()


def stop_shared_server() -> None:
    global _shared
    if _shared is not None:
        stack, _shared = _shared.stack, None
        stack.close()
