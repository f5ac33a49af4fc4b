"""``manage.py demo`` as a customer runs it: what serves, how many database connections it may
hold, and what happens when its worker dies. The demo runs in its own process on this run's
test database and Redis, with a one-page corpus."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from kb.models import Document, DocumentIndexState
from kb.runtime.processes import free_port
from tests.support.polling import until
from tests.support.processes import database_url, stop_process

ROOT = Path(__file__).resolve().parents[2]
START_SECONDS = 120.0
WEB_WORKERS, WEB_THREADS = 1, 3
# The worker's pool process and its embedded beat may each hold one too.
WORKER_CONNECTIONS = 2
STARTED = re.compile(r"process_started\s+pid=(?P<pid>\d+)\s+process=(?P<name>\w+)")
RESTARTED = re.compile(
    r"process_restarted.*?old_pid=(?P<old>\d+)\s+pid=(?P<pid>\d+)\s+process=worker"
)


@dataclass
class Demo:
    url: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_for(self, pattern: re.Pattern[str], *, seconds: float) -> re.Match[str]:
        found: list[re.Match[str]] = []

        def logged() -> bool:
            assert self.process.poll() is None, f"the demo exited:\n{self.log()[-3000:]}"
            match = pattern.search(self.log())
            if match:
                found.append(match)
            return match is not None

        until(
            logged,
            seconds=seconds,
            why=lambda: f"no {pattern.pattern!r} in the demo's log:\n{self.log()[-3000:]}",
            interval=0.2,
        )
        return found[0]

    def get(self, path: str) -> int:
        with urllib.request.urlopen(self.url + path, timeout=30) as response:
            response.read()
            return response.status

    def fetch(
        self, path: str, *, body: bytes | None = None, content_type: str = ""
    ) -> tuple[int, str]:
        """Status and text of ``path`` (a POST of ``body`` when given), errors included."""
        headers = {"Content-Type": content_type} if content_type else {}
        request = urllib.request.Request(self.url + path, data=body, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, response.read().decode(errors="replace")
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode(errors="replace")


@pytest.fixture
def demo(transactional_db, tmp_path: Path) -> Iterator[Demo]:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "parking.md").write_text("# Parking\n\nVisitors park free in bay C.\n")
    port = free_port()
    env = {
        **os.environ,
        "GROUNDWORK_ENV": "test",
        "GROUNDWORK_DATA_DIR": str(settings.DATA_DIR),
        "DATABASE_URL": database_url(),
        # This run's Redis, named so the demo leaves it running when it stops.
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "WEB_CONCURRENCY": str(WEB_WORKERS),
        "GUNICORN_THREADS": str(WEB_THREADS),
        "LOG_LEVEL": "INFO",
        "PYTHONUNBUFFERED": "1",
    }
    log_path = tmp_path / "demo.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "manage.py", "demo", "--port", str(port), "--corpus", str(corpus)],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    running = Demo(url=f"http://127.0.0.1:{port}", process=process, log_path=log_path)
    try:
        until(
            _serving(running),
            seconds=START_SECONDS,
            why=f"the demo never served:\n{running.log()[-3000:]}",
        )
        yield running
    finally:
        stop_process(process, timeout=60)


def _serving(demo: Demo) -> Callable[[], bool]:
    def check() -> bool:
        assert demo.process.poll() is None, f"the demo exited:\n{demo.log()[-3000:]}"
        try:
            return demo.get("/healthz") == 200
        except OSError:
            return False

    return check


def _connections_to_this_database() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0]


def _burst_of_visitors(demo: Demo, *, visitors: int) -> int:
    """``visitors`` at once, each loading the document list (a database read) 3 times; returns
    the most connections to this database seen meanwhile."""
    peak = 0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        try:
            # A sample every 50 ms until the burst is over (the wait ends as soon as it is).
            while not stop.wait(0.05):
                peak = max(peak, _connections_to_this_database())
        finally:
            # This thread's own connection: left open, it kept the test database from being
            # dropped at the end of the run ("is being accessed by other users").
            connection.close()

    def visitor() -> None:
        for _ in range(3):
            assert demo.get("/docs/") == 200

    sampler = threading.Thread(target=sample)
    sampler.start()
    threads = [threading.Thread(target=visitor) for _ in range(visitors)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    stop.set()
    sampler.join()
    return peak


# One demo start (about 20 s) serves every check: the suite's time is shared.
def test_the_demo_serves_as_production_bounds_its_connections_and_restarts_a_worker(
    demo: Demo,
) -> None:
    # it greets as it always has, and DEBUG off adds no warning to it
    log = demo.log()
    assert "Groundwork is running:" in log and f"help center  {demo.url}/" in log
    assert "UserWarning" not in log, log[-3000:]
    # with a sign-in for each role, printed once, their passwords kept for the next start
    for username in ("demo", "writer", "steward"):
        assert len(re.findall(rf"^    {username} +password '[^']+' ", log, re.MULTILINE)) == 1, log
    assert "demo-logins.json; --reset-passwords gives new ones" in log
    # and still serves its styles and scripts without a collectstatic
    assert demo.get("/static/groundwork/site.css") == 200
    assert demo.get("/static/assistant/chat.js") == 200
    # with no request line for them (pages are logged, as the health check below)
    assert demo.get("/healthz") == 200
    demo.wait_for(re.compile(r"request_finished.*path=/healthz"), seconds=10)
    assert "path=/static/" not in demo.log()

    # and DEBUG is off: a 404 lists no URL patterns, and the staff-only debug endpoint's 404
    # is the very page an unknown address gets, naming no view
    unknown_status, unknown_page = demo.fetch("/no-such-page")
    debug_status, debug_page = demo.fetch("/debug/search?q=refunds")
    assert unknown_status == debug_status == 404
    assert debug_page == unknown_page
    for leak in ("debug/search", "admin/", "readyz", "search.views", "DEBUG = True"):
        assert leak not in unknown_page

    # and a question sent as UTF-16 is refused with a 415 that says why (it was a 500)
    status, page = demo.fetch(
        "/ask",
        body="question=Where do visitors park?".encode("utf-16"),
        content_type="application/x-www-form-urlencoded; charset=utf-16",
    )
    assert status == 415 and "UTF-8" in page

    # given 30 visitors at once
    peak = _burst_of_visitors(demo, visitors=30)

    # then the server never held more than one connection per thread, during or after
    bound = WEB_WORKERS * WEB_THREADS + WORKER_CONNECTIONS
    after = _connections_to_this_database()
    assert peak <= bound and after <= bound, (peak, after, bound)

    # when the demo's worker is killed
    worker_pid = next(
        int(found["pid"]) for found in STARTED.finditer(demo.log()) if found["name"] == "worker"
    )
    os.kill(worker_pid, signal.SIGKILL)

    # then the demo logs a restart, keeps serving, and the new worker indexes a saved page
    restarted = demo.wait_for(RESTARTED, seconds=30)
    assert int(restarted["old"]) == worker_pid
    assert demo.get("/healthz") == 200 and demo.process.poll() is None
    document = Document.objects.create(
        path="lockers.md", title="Lockers", body="# Lockers\n\nLockers are on level 2."
    )

    def indexed() -> bool:
        state = DocumentIndexState.objects.filter(document=document).first()
        return state is not None and state.status == DocumentIndexState.Status.INDEXED

    until(indexed, seconds=90, why=f"the restarted worker never indexed:\n{demo.log()[-3000:]}")
