"""What every local API stub shares: a real HTTP server on 127.0.0.1 (a free port, a background
thread), started and stopped as a context manager, that records each request it receives."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out has hung up before the delayed answer; that is the test's point.
        pass


@dataclass(frozen=True)
class RecordedRequest:
    path: str
    headers: dict[str, str]  # names lower-cased
    body: Any  # the parsed JSON body, or the raw text when it was not JSON


class QuietHandler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass  # the test output is no place for an access log

    def read_request(self) -> RecordedRequest:
        """The request as received: its path, its headers and its (JSON) body."""
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode("utf-8")
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = raw
        headers = {name.lower(): value for name, value in self.headers.items()}
        return RecordedRequest(path=self.path, headers=headers, body=body)


class StubServer:
    """Subclasses set ``handler`` (a ``QuietHandler`` subclass that reads ``self.stub``)."""

    handler: type[QuietHandler]

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._closing = threading.Event()  # set on stop: cuts short any scripted delay
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        handler = type(f"{type(self).__name__}Handler", (self.handler,), {"stub": self})
        self._server = QuietServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._closing.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:PORT`` of the running server."""
        if self._server is None:
            raise RuntimeError(f"{type(self).__name__} is not running; use it as a context manager")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def closing_wait(self, seconds: float) -> bool:
        """Sleep ``seconds`` unless the stub stops first; True when it is stopping."""
        return self._closing.wait(seconds)
