"""Request ids and one structured log line per request."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable

import structlog
from django.http import HttpRequest, HttpResponse

log = structlog.get_logger("groundwork.request")

# An id from the proxy is kept only if it looks like one: it ends up in every log line.
_INCOMING_ID = re.compile(r"^[A-Za-z0-9._-]{8,128}$")


class RequestIdMiddleware:
    """Binds a request id to every log event of the request and returns it as X-Request-ID.

    The log line carries method, path (never the query string, which may hold secrets or a
    customer's question), status and duration; stages log their own timings under the same id.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        incoming = request.headers.get("X-Request-ID", "")
        request_id = incoming if _INCOMING_ID.match(incoming) else uuid.uuid4().hex
        request.request_id = request_id  # type: ignore[attr-defined]
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(request_id=request_id)
        started = time.perf_counter()
        # Left bound afterwards on purpose: a streamed answer logs its stages after this returns;
        # the next request on this thread clears it first.
        response = self.get_response(request)
        response["X-Request-ID"] = request_id
        log.info(
            "request_finished",
            request_id=request_id,
            method=request.method,
            path=request.path,
            status=response.status_code,
            ms=round((time.perf_counter() - started) * 1000, 1),
            streaming=response.streaming,
        )
        return response
