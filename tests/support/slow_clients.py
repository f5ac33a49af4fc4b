"""Clients that send their request a header line at a time and never finish it (the "slowloris"
pattern), and timed normal requests beside them: the slow-client test and its benchmark."""

from __future__ import annotations

import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from kb.runtime.processes import free_port
from tests.support.live_server import E2EServer, running_server

REQUEST_START = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
# A whole request, kept alive, with the start of the next one behind it in the same packet.
PIPELINED_START = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" + REQUEST_START


@contextmanager
def production_server(*, log_dir: Path, env: dict[str, str]) -> Iterator[E2EServer]:
    """gunicorn with config/gunicorn.conf.py, 2 workers x 8 threads as deployed, plus ``env``."""
    port = str(free_port())
    with running_server(
        ["-c", "config/gunicorn.conf.py", "config.wsgi"],
        env={
            "E2E_PORT": port,
            "GUNICORN_BIND": f"127.0.0.1:{port}",
            "WEB_CONCURRENCY": "2",
            "GUNICORN_THREADS": "8",
            "DJANGO_DEBUG": "false",
            "LOG_LEVEL": "WARNING",
            **env,
        },
        log_dir=log_dir,
    ) as server:
        yield server


def port_of(server: E2EServer) -> int:
    return int(server.url.rsplit(":", 1)[1])


@dataclass
class SlowClients:
    """``count`` connections to 127.0.0.1:``port``. Each sends the start of a request (every
    other one a whole request first, then the start of a second on the same connection) and
    then one more header line every ``interval`` seconds, from one thread, until ``stop()``.
    What the server sends back is kept per connection, and so is whether it closed."""

    port: int
    count: int
    interval: float
    received: list[bytearray] = field(default_factory=list)
    closed: list[bool] = field(default_factory=list)
    _sockets: list[socket.socket] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        for number in range(self.count):
            client = socket.create_connection(("127.0.0.1", self.port), timeout=5)
            client.sendall(PIPELINED_START if number % 2 else REQUEST_START)
            client.setblocking(False)
            self._sockets.append(client)
            self.received.append(bytearray())
            self.closed.append(False)
        self._thread = threading.Thread(target=self._trickle, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        for client in self._sockets:
            client.close()

    def all_closed(self) -> bool:
        return all(self.closed)

    def _trickle(self) -> None:
        next_line = time.monotonic() + self.interval
        line = 0
        while not self._stop.wait(0.05):
            send = time.monotonic() >= next_line
            if send:
                line += 1
                next_line += self.interval
            for number, client in enumerate(self._sockets):
                if self.closed[number]:
                    continue
                self._read(number, client)
                if send and not self.closed[number]:
                    try:
                        client.send(b"X-Slow-%d: %d\r\n" % (line, number))
                    except OSError:
                        self.closed[number] = True

    def _read(self, number: int, client: socket.socket) -> None:
        while True:
            try:
                chunk = client.recv(65536)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self.closed[number] = True
                return
            self.received[number] += chunk


def raw_exchange(port: int, *pieces: bytes, timeout: float = 10.0) -> list[bytes]:
    """Sends each of ``pieces`` on one connection and returns what the server sent after each:
    its next bytes after every piece but the last, and everything until it closes after that."""
    replies = []
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as client:
        for piece in pieces[:-1]:
            client.sendall(piece)
            replies.append(client.recv(65536))
        client.sendall(pieces[-1])
        rest = bytearray()
        while chunk := client.recv(65536):
            rest += chunk
        replies.append(bytes(rest))
    return replies


def timed_get(url: str, *, timeout: float) -> tuple[int | str, float]:
    """``url``'s status (or the error's name) and the seconds it took, never raising."""
    started = time.monotonic()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            response.read()
            status: int | str = response.status
    except urllib.error.HTTPError as error:
        status = error.code
    except OSError as error:
        status = type(error).__name__
    return status, time.monotonic() - started
