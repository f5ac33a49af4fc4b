"""What every local API stub shares: a real HTTP server on 127.0.0.1 (a free port, a background
thread), started and stopped as a context manager, that records each request it receives and
can be scripted to misbehave on the next few (an error status, a delay, a provider's own faults)."""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Generic, Self, TypeVar


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


@dataclass(frozen=True)
class Misbehaviour:
    """How a stub answers one request; every field None: normally. Stubs add their own ways."""

    status: int | None = None  # answer with this HTTP error status
    delay: float | None = None  # wait this long before answering (to outlast a client timeout)


M = TypeVar("M", bound=Misbehaviour)


class QuietHandler(BaseHTTPRequestHandler):
    stub: StubServer[Any]  # set on the subclass made per server

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

    def receive(self) -> tuple[RecordedRequest, Any] | None:
        """Read and record the request, take the next scripted misbehaviour and wait out its
        delay. None when the stub stopped during the delay: nobody waits for an answer then."""
        request = self.read_request()
        misbehaviour = self.stub.record(request)
        if misbehaviour.delay is not None and self.stub.closing_wait(misbehaviour.delay):
            return None
        return request, misbehaviour


class StubServer(Generic[M]):
    """Subclasses set ``handler`` (a ``QuietHandler`` subclass that reads ``self.stub``) and
    ``normal`` (their ``Misbehaviour`` subclass with nothing set)."""

    handler: type[QuietHandler]
    normal: M

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._closing = threading.Event()  # set on stop: cuts short any scripted delay
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._requests: list[RecordedRequest] = []
        self._script: deque[M] = deque()

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
        assert isinstance(host, str)  # a TCP server's; typeshed also allows AF_UNIX's bytes
        return f"http://{host}:{port}"

    def closing_wait(self, seconds: float) -> bool:
        """Sleep ``seconds`` unless the stub stops first; True when it is stopping."""
        return self._closing.wait(seconds)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def record(self, request: RecordedRequest) -> M:
        """Keep ``request``; how to answer it: the next scripted misbehaviour, else normally."""
        with self._lock:
            self._requests.append(request)
            return self._script.popleft() if self._script else self.normal

    def _misbehave_next(self, misbehaviour: M, *, times: int, ways: Sequence[str]) -> None:
        """Script ``misbehaviour`` for the next ``times`` requests; it must take exactly one of
        the ``ways`` (field names) a stub offers."""
        if sum(getattr(misbehaviour, way) is not None for way in ways) != 1:
            raise ValueError(f"fail_next takes exactly one of {', '.join(ways[:-1])} or {ways[-1]}")
        with self._lock:
            self._script.extend([misbehaviour] * times)
