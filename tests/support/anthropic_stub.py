"""A local stand-in for Anthropic's Messages API, so the real SDK can be tested without the network.

It is a real HTTP/1.1 server on 127.0.0.1 (any free port, a background thread) answering
``POST /v1/messages`` the way the API does: a JSON ``message`` object, or with ``"stream": true``
the server-sent event stream (``message_start``, ``content_block_start``, ``ping``,
``content_block_delta`` with ``text_delta`` pieces, ``content_block_stop``, ``message_delta``
with the stop reason and usage, ``message_stop``), sent with chunked transfer encoding. It checks
the request as the API would (key, version header, alternating roles) and records every request.

By default the reply *echoes what the model was sent* (the system prompt and every message), so a
test can read what reached the "model" through the SDK and the generator. It can be told to reply
with given text or stop reason, and to misbehave for the next few requests::

    with AnthropicStub() as stub:
        client = anthropic.Anthropic(api_key=stub.api_key, base_url=stub.base_url)
        stub.fail_next(status=429, times=2)
        stub.reply("It is 30 days [1].", stop_reason="end_turn")
        ...
        assert len(stub.requests) == 3
"""

from __future__ import annotations

import itertools
import json
import re
from collections import deque
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, Literal

from tests.support.stub_server import Misbehaviour, QuietHandler, StubServer

Corruption = Literal[
    "malformed_json",  # the body (or one stream event's data) is not JSON
    "broken_stream",  # the connection is cut in the middle of a chunk
    "missing_message_stop",  # the stream ends cleanly but the message never finishes
    "error_event",  # an ``event: error`` (overloaded_error) after the first delta
    "unknown_block_index",  # a delta for a content block that was never started
]

DEFAULT_API_KEY = "sk-ant-stub-test-key"
ECHO_HEADER = "ECHO OF THE REQUEST"
WORD = re.compile(r"\S+\s*")
DELTA_WORDS = 4  # words per text_delta event
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass(frozen=True)
class AnthropicMisbehaviour(Misbehaviour):
    retry_after_ms: float | None = None  # sent as retry-after-ms with an error status
    stall: float | None = None  # after the first text delta of a stream
    corrupt: Corruption | None = None


@dataclass(frozen=True)
class Reply:
    text: str | None  # None: echo the request
    stop_reason: str


def echo_text(body: dict[str, Any]) -> str:
    """What the echo reply says: everything the model was given, in order."""
    system = body.get("system", "")
    if isinstance(system, list):
        system = "\n".join(block.get("text", "") for block in system if isinstance(block, dict))
    parts = [ECHO_HEADER, f"[system]\n{system}"]
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            content = "\n".join(
                block.get("text", "") for block in content if isinstance(block, dict)
            )
        parts.append(f"[{message.get('role')}]\n{content}")
    return "\n\n".join(parts)


def token_count(text: str) -> int:
    """Words stand in for tokens: predictable, and enough to test max_tokens."""
    return len(WORD.findall(text))


class AnthropicStub(StubServer[AnthropicMisbehaviour]):
    """The server and its script; a context manager that starts and stops it."""

    normal = AnthropicMisbehaviour()

    def __init__(self, *, api_key: str = DEFAULT_API_KEY) -> None:
        self.api_key = api_key
        super().__init__()
        self._replies: deque[Reply] = deque()
        self._default_reply = Reply(text=None, stop_reason="end_turn")
        self._ids = itertools.count(1)

    @property
    def base_url(self) -> str:
        """What the SDK's ``base_url`` takes: it appends ``/v1/messages`` itself."""
        return self.origin

    # --- script and record -----------------------------------------------------------------

    def reply(self, text: str | None, *, stop_reason: str = "end_turn", times: int = 1) -> None:
        """Answer the next ``times`` successful requests with ``text`` (None: echo) and
        ``stop_reason``; afterwards the stub echoes again."""
        with self._lock:
            self._replies.extend([Reply(text=text, stop_reason=stop_reason)] * times)

    def fail_next(
        self,
        *,
        status: int | None = None,
        delay: float | None = None,
        stall: float | None = None,
        corrupt: Corruption | None = None,
        times: int = 1,
        retry_after_ms: float | None = None,
    ) -> None:
        """Misbehave on the next ``times`` requests, in one of four ways.

        ``status``: answer with that HTTP status and an API-style error body; a 429 or 529
        carries ``retry-after-ms`` (``retry_after_ms``, default 1) so retries stay fast.
        ``delay``: wait that long before answering (to outlast a client timeout). ``stall``:
        start a stream, then go quiet after the first delta. ``corrupt``: answer 200 with a
        broken body or stream.
        """
        if status in (429, 529) and retry_after_ms is None:
            retry_after_ms = 1
        misbehaviour = AnthropicMisbehaviour(
            status=status, retry_after_ms=retry_after_ms, delay=delay, stall=stall, corrupt=corrupt
        )
        ways = ("status", "delay", "stall", "corrupt")
        self._misbehave_next(misbehaviour, times=times, ways=ways)

    def _next_reply(self) -> Reply:
        with self._lock:
            return self._replies.popleft() if self._replies else self._default_reply

    def _message_id(self) -> str:
        return f"msg_stub{next(self._ids):06d}"


class _Handler(QuietHandler):
    stub: AnthropicStub  # set on the subclass made per server
    protocol_version = "HTTP/1.1"  # keep-alive and chunked streams, as the real API

    def do_POST(self) -> None:
        received = self.receive()
        if received is None:
            return  # shutting down: nobody is waiting for this answer any more
        request, misbehaviour = received
        headers, body = request.headers, request.body
        if misbehaviour.status is not None:
            extra = {}
            if misbehaviour.retry_after_ms is not None:
                extra["retry-after-ms"] = f"{misbehaviour.retry_after_ms:g}"
            phrase = _phrase(misbehaviour.status)
            self._send_error(misbehaviour.status, f"stub: {phrase}", extra)
            return
        if self.path.split("?")[0] != "/v1/messages":
            self._send_error(404, f"Not found: {self.path}")
            return
        key = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
        if key != self.stub.api_key:
            self._send_error(401, "invalid x-api-key")
            return
        if not headers.get("anthropic-version"):
            self._send_error(400, "anthropic-version: header is required")
            return
        problem = _request_problem(body)
        if problem is not None:
            self._send_error(400, problem)
            return

        reply = self.stub._next_reply()
        text = echo_text(body) if reply.text is None else reply.text
        stop_reason = reply.stop_reason
        words = WORD.findall(text)
        if len(words) > body["max_tokens"]:
            text, stop_reason = "".join(words[: body["max_tokens"]]), "max_tokens"
        message = {
            "id": self.stub._message_id(),
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": [{"type": "text", "text": text}] if text else [],
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {
                "input_tokens": token_count(echo_text(body)),
                "output_tokens": token_count(text),
            },
        }
        if body.get("stream"):
            self._stream(message, corrupt=misbehaviour.corrupt, stall=misbehaviour.stall)
        elif misbehaviour.corrupt is not None:
            self._send_raw(200, '{"id": "msg_broken", "type": "message", "content": [{"ty')
        else:
            self._send_json(200, message)

    # --- the event stream ------------------------------------------------------------------

    def _stream(
        self, message: dict[str, Any], *, corrupt: Corruption | None, stall: float | None
    ) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("request-id", f"req_{message['id']}")
        self.end_headers()
        text = message["content"][0]["text"] if message["content"] else ""
        pieces = ["".join(group) for group in _groups(WORD.findall(text), DELTA_WORDS)]
        start = {**message, "content": [], "stop_reason": None}
        start["usage"] = {**message["usage"], "output_tokens": 1}
        try:
            self._event("message_start", {"type": "message_start", "message": start})
            index = 0
            if pieces or message["stop_reason"] != "refusal":
                block = {"type": "text", "text": ""}
                self._event(
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": block},
                )
            self._event("ping", {"type": "ping"})
            for number, piece in enumerate(pieces):
                delta_index = 7 if corrupt == "unknown_block_index" else index
                delta = {"type": "text_delta", "text": piece}
                if corrupt == "malformed_json" and number == 1:
                    self._chunk('event: content_block_delta\ndata: {"type": "content_blo\n\n')
                    continue
                self._event(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": delta_index, "delta": delta},
                )
                if number == 0 and stall is not None and self.stub.closing_wait(stall):
                    return
                if number == 0 and corrupt == "error_event":
                    error = {"type": "overloaded_error", "message": "Overloaded"}
                    self._event("error", {"type": "error", "error": error})
                    self._end_chunks()
                    return
                if number == 0 and corrupt == "broken_stream":
                    # Announce a chunk longer than what follows, then hang up.
                    self.wfile.write(b'400\r\nevent: content_block_delta\ndata: {"ty')
                    self.wfile.flush()
                    self.close_connection = True
                    return
            if pieces or message["stop_reason"] != "refusal":
                self._event("content_block_stop", {"type": "content_block_stop", "index": index})
            if corrupt == "missing_message_stop":
                self._end_chunks()
                return
            self._event(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                    "usage": {"output_tokens": message["usage"]["output_tokens"]},
                },
            )
            self._event("message_stop", {"type": "message_stop"})
            self._end_chunks()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (its timeout), as tests intend

    def _event(self, name: str, data: dict[str, Any]) -> None:
        self._chunk(f"event: {name}\ndata: {json.dumps(data)}\n\n")

    def _chunk(self, text: str) -> None:
        encoded = text.encode("utf-8")
        self.wfile.write(f"{len(encoded):x}\r\n".encode() + encoded + b"\r\n")
        self.wfile.flush()

    def _end_chunks(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    # --- plain responses -------------------------------------------------------------------

    def _send_error(
        self, status: int, message: str, extra_headers: dict[str, str] | None = None
    ) -> None:
        error_type = ERROR_TYPES.get(
            status, "api_error" if status >= 500 else "invalid_request_error"
        )
        payload = {
            "type": "error",
            "error": {"type": error_type, "message": message},
            "request_id": "req_stub_error",
        }
        self._send_json(status, payload, extra_headers)

    def _send_json(
        self, status: int, payload: dict[str, Any], extra_headers: dict[str, str] | None = None
    ) -> None:
        self._send_raw(status, json.dumps(payload), extra_headers)

    def _send_raw(
        self, status: int, text: str, extra_headers: dict[str, str] | None = None
    ) -> None:
        encoded = text.encode("utf-8")
        self.send_response(status, _phrase(status))
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(encoded)))
        self.send_header("request-id", "req_stub")
        for name, value in (extra_headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(encoded)


def _phrase(status: int) -> str:
    if status == 529:
        return "Overloaded"  # not in http.HTTPStatus: Anthropic's own
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def _groups(items: list[str], size: int) -> list[list[str]]:
    return [items[start : start + size] for start in range(0, len(items), size)]


def _request_problem(body: Any) -> str | None:
    """Why the API would reject ``body`` with a 400, or None."""
    if not isinstance(body, dict):
        return "Request body must be a JSON object"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model: Field required"
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        return "max_tokens: must be a positive integer"
    system = body.get("system", "")
    if not isinstance(system, (str, list)):
        return "system: must be a string or a list of text blocks"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    for position, message in enumerate(messages):
        expected = "user" if position % 2 == 0 else "assistant"
        if not isinstance(message, dict) or message.get("role") != expected:
            return f"messages.{position}.role: roles must alternate, starting with user"
        content = message.get("content")
        if isinstance(content, str):
            if not content.strip():
                return f"messages.{position}.content: text content blocks must be non-empty"
        elif not isinstance(content, list) or not content:
            return f"messages.{position}.content: must be a string or a list of blocks"
    return None


AnthropicStub.handler = _Handler
