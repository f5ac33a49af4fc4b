"""Slow clients cost the production server sockets, not threads: against gunicorn with
config/gunicorn.conf.py (2 workers x 8 threads, as deployed), 40 connections sending their
request a header line at a time leave normal requests answering at once, and each slow one is
answered 408 and closed when its read timeout ends. (The stock gthread worker gave each of them
a thread: 17 were enough to make every other request wait for as long as they kept sending.)"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.live_server import E2EServer
from tests.support.polling import until
from tests.support.slow_clients import (
    SlowClients,
    port_of,
    production_server,
    raw_exchange,
    timed_get,
)

SLOW_CLIENTS = 40  # 2.5 x the 16 threads
READ_TIMEOUT_SECONDS = 4  # production: 20
NORMAL_REQUESTS = 10
QUICK_SECONDS = 3.0


@pytest.fixture
def server(transactional_db, tmp_path_factory) -> Iterator[E2EServer]:
    with production_server(
        log_dir=tmp_path_factory.mktemp("slow-clients-server"),
        env={"GUNICORN_REQUEST_READ_TIMEOUT": str(READ_TIMEOUT_SECONDS)},
    ) as running:
        yield running


def test_slow_clients_leave_normal_requests_quick_and_are_cut_off(server: E2EServer) -> None:
    # given 40 clients sending one header line a second and never ending their request
    slow = SlowClients(port=port_of(server), count=SLOW_CLIENTS, interval=1.0)
    slow.start()
    try:
        # when visitors load pages meanwhile
        timings = [
            timed_get(f"{server.url}{path}", timeout=2 * QUICK_SECONDS)
            for path in ("/healthz", "/docs/") * (NORMAL_REQUESTS // 2)
        ]

        # then every one is answered, quickly
        assert all(status == 200 for status, _ in timings), timings
        assert max(seconds for _, seconds in timings) < QUICK_SECONDS, timings

        # and so are bodies: one past the 1 MiB the loop buffers (the thread reads the rest),
        # and one sent after the client's "Expect: 100-continue" was answered; both reach
        # Django whole, which refuses them for their missing CSRF token
        big = b"question=" + b"a" * (3 * 1024 * 1024 // 2)
        head = b"POST /ask HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        form = b"Content-Type: application/x-www-form-urlencoded\r\n"
        length = b"Content-Length: %d\r\n" % len(big)
        (reply,) = raw_exchange(port_of(server), head + form + length + b"\r\n" + big)
        assert reply.startswith(b"HTTP/1.1 403"), reply[:200]
        expect = b"Expect: 100-continue\r\nContent-Length: 11\r\n\r\n"
        go_on, reply = raw_exchange(port_of(server), head + form + expect, b"question=hi")
        assert go_on.startswith(b"HTTP/1.1 100 Continue"), go_on
        assert b"HTTP/1.1 403" in reply, reply[:200]

        # and each slow client is told 408 and closed once its read timeout is over, those
        # that finished a first request on the connection after its answer
        until(
            slow.all_closed,
            seconds=READ_TIMEOUT_SECONDS + 10,
            why=lambda: f"{slow.closed.count(False)} slow clients still open",
        )
    finally:
        slow.stop()
    for number, received in enumerate(slow.received):
        responses = received.split(b"HTTP/1.1 ")[1:]
        statuses = [response[:3] for response in responses]
        assert statuses == ([b"200", b"408"] if number % 2 else [b"408"]), (number, received)
