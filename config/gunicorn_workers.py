"""gunicorn's threaded worker, with each request read by the worker's event loop before a thread
sees it (``worker_class`` in ``config/gunicorn.conf.py``).

The stock gthread worker hands a connection to a thread as soon as its first byte arrives, and
the thread then waits for the rest of the request. A client sending one header line every few
seconds holds that thread for as long as it likes: 17 such sockets held all 16 threads of the
production configuration (2 workers x 8 threads) and every other request timed out. Here the
worker's selector loop, which already watches idle kept-alive connections, also collects each
request's head and body, without blocking, until the request is complete; only then is the
connection queued for a thread, with those bytes already in gunicorn's parser. A slow client
costs a socket and its buffer, not a thread, and one that has not sent its request within
``GUNICORN_REQUEST_READ_TIMEOUT`` seconds gets a 408 and is closed.

A request larger than ``GUNICORN_REQUEST_BUFFER_BYTES`` (a large upload) is handed to a thread
once that much has arrived, and the thread reads the rest as the stock worker does. Responses
are untouched: a streamed answer is written chunk by chunk, as before.

Plain HTTP/1.1 only (TLS ends at the load balancer in front): the worker refuses to start with
``certfile``, HTTP/2 or the uwsgi protocol configured rather than serve them unprotected.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import socket
import time
from collections import OrderedDict
from functools import partial

from gunicorn import http
from gunicorn.config import Config
from gunicorn.glogging import Logger
from gunicorn.workers.gthread import TConn, ThreadWorker

# One recv() from the event loop; a request head is usually well under this.
_READ_SIZE = 65536
_HEAD_END = b"\r\n\r\n"
_TIMEOUT_TEXT = b"The request took too long to arrive.\n"
_REQUEST_TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: text/plain\r\n"
    b"Content-Length: %d\r\n\r\n%s" % (len(_TIMEOUT_TEXT), _TIMEOUT_TEXT)
)
_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"


def _positive_number(name: str, default: float) -> float:
    """A positive number from the environment; a bad value stops the start, naming it."""
    raw = os.environ.get(name, str(default))
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if value <= 0:
        raise SystemExit(f"{name} must be a positive number (got {raw!r})")
    return value


class IncomingRequest:
    """The bytes of one request as they arrive, and whether they make a whole request yet.

    Only framing is read here (where the head ends, Content-Length, chunked framing); anything
    malformed counts as complete so that gunicorn's parser, which owns the rules, refuses it.
    Each arrival scans only the new bytes: a client dribbling bytes one at a time must not make
    the loop rescan its whole buffer on every one.
    """

    def __init__(self, *, deadline: float, buffer_limit: int) -> None:
        self.deadline = deadline
        self.data = bytearray()
        self._buffer_limit = buffer_limit
        self._body_start: int | None = None
        self._body_length: int | None = None  # None with chunked framing
        self._chunk_at = 0  # chunked framing: where the next chunk-size line starts
        self.expects_continue = False

    def feed(self, chunk: bytes) -> bool:
        """Adds ``chunk``; True once the request is complete (or as large as we buffer)."""
        scan_from = max(len(self.data) - len(_HEAD_END) + 1, 0)
        self.data += chunk
        if self._body_start is None:
            end = self.data.find(_HEAD_END, scan_from)
            if end < 0:
                return len(self.data) >= self._buffer_limit
            if not self._read_head(bytes(self.data[:end])):
                return True
            self._body_start = self._chunk_at = end + len(_HEAD_END)
        return self._body_complete() or len(self.data) >= self._buffer_limit

    def _read_head(self, head: bytes) -> bool:
        """Reads the body's framing from the head; False when the head leaves it unclear."""
        length = 0
        chunked = False
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            name, value = name.strip().lower(), value.strip().lower()
            if name == b"content-length":
                if not value.isdigit():
                    return False
                length = int(value)
            elif name == b"transfer-encoding":
                chunked = chunked or value.endswith(b"chunked")
            elif name == b"expect" and value == b"100-continue":
                self.expects_continue = True
        self._body_length = None if chunked else length
        # An HTTP/1.0 client's expectation is ignored (RFC 9110, 10.1.1), as gunicorn does.
        http_11 = head.split(b"\r\n", 1)[0].rstrip().endswith(b"HTTP/1.1")
        self.expects_continue = self.expects_continue and http_11 and (chunked or length > 0)
        return True

    def _body_complete(self) -> bool:
        assert self._body_start is not None
        if self._body_length is not None:
            return len(self.data) - self._body_start >= self._body_length
        while True:  # chunked: walk whole chunks, remembering where the next one starts
            line_end = self.data.find(b"\r\n", self._chunk_at)
            if line_end < 0:
                return False
            size_field = bytes(self.data[self._chunk_at : line_end]).split(b";", 1)[0].strip()
            try:
                size = int(size_field, 16)
            except ValueError:
                return True  # the parser refuses it
            if size == 0:  # the last chunk; optional trailer fields end with an empty line
                return self.data.find(_HEAD_END, line_end) >= 0
            next_chunk = line_end + 2 + size + 2
            if next_chunk > len(self.data):
                return False
            self._chunk_at = next_chunk


class RequestBufferingWorker(ThreadWorker):
    """gthread whose event loop reads whole requests; threads only run the application."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.request_read_timeout = _positive_number("GUNICORN_REQUEST_READ_TIMEOUT", 20.0)
        self.request_buffer_bytes = int(
            _positive_number("GUNICORN_REQUEST_BUFFER_BYTES", 1024 * 1024)
        )
        # Insertion order is deadline order: every request gets the same timeout.
        self.incoming: OrderedDict[TConn, IncomingRequest] = OrderedDict()

    @classmethod
    def check_config(cls, cfg: Config, log: Logger) -> None:
        super().check_config(cfg, log)
        if cfg.is_ssl or cfg.http_protocols != ["h1"] or cfg.protocol != "http":
            raise SystemExit(
                "RequestBufferingWorker serves plain HTTP/1.1: end TLS and HTTP/2 at the load "
                "balancer, or choose another worker_class"
            )

    def enqueue_req(self, conn: TConn) -> None:
        """Every way to a thread (a new connection, a kept-alive one's next request, a request
        pipelined behind the last one) first collects the whole request here."""
        request = IncomingRequest(
            deadline=time.monotonic() + self.request_read_timeout,
            buffer_limit=self.request_buffer_bytes,
        )
        read_ahead = conn.parser.unreader.take_buffered() if conn.parser is not None else b""
        if read_ahead and request.feed(read_ahead):
            self._hand_to_thread(conn, request)
            return
        self.incoming[conn] = request
        conn.sock.setblocking(False)  # ThreadWorker.handle makes it blocking again
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._on_readable, conn))

    def wait_for_and_dispatch_events(self, timeout: float) -> None:
        # Both of ThreadWorker's loops (serving, and stopping gracefully) come through here
        # about once a second, which is often enough to enforce the read timeout.
        super().wait_for_and_dispatch_events(timeout)
        self._close_expired()

    def _on_readable(self, conn: TConn, client: socket.socket) -> None:
        request = self.incoming[conn]
        try:
            chunk = client.recv(_READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if not chunk:  # the client went away before finishing its request
            self._forget(conn)
            return
        expected_continue = request.expects_continue
        complete = request.feed(chunk)
        if request.expects_continue and not expected_continue and not complete:
            # The client waits for this before sending its body. gunicorn sends one more once
            # the thread has the request; a client must accept several (RFC 9110, 15.2).
            try:
                client.send(_CONTINUE)
            except OSError:
                self._forget(conn)
                return
        if complete:
            self.poller.unregister(client)
            del self.incoming[conn]
            self._hand_to_thread(conn, request)

    def _hand_to_thread(self, conn: TConn, request: IncomingRequest) -> None:
        if conn.parser is None:
            conn.parser = http.get_parser(self.cfg, conn.sock, conn.client)
        conn.parser.unreader.unread(bytes(request.data))
        conn.data_ready = True  # ThreadWorker.handle must not wait for data it already has
        super().enqueue_req(conn)

    def _close_expired(self) -> None:
        if not self.alive:  # stopping: a connection that has sent nothing holds up no request
            for conn in [conn for conn, request in self.incoming.items() if not request.data]:
                self._forget(conn)
        now = time.monotonic()
        while self.incoming:
            conn, request = next(iter(self.incoming.items()))
            if request.deadline > now:
                break
            if request.data:  # a client that never sent a byte (a preconnect) is owed nothing
                self.log.info(
                    "Closed a connection from %s: %d bytes and no whole request in %.0fs",
                    conn.client,
                    len(request.data),
                    self.request_read_timeout,
                )
                with contextlib.suppress(OSError):
                    conn.sock.send(_REQUEST_TIMEOUT_RESPONSE)
            self._forget(conn)

    def _forget(self, conn: TConn) -> None:
        self.poller.unregister(conn.sock)
        del self.incoming[conn]
        self.nr_conns -= 1
        conn.close()
