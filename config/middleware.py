"""Request ids and one structured log line per request; the Content-Security-Policy header;
requests in a charset other than UTF-8, and requests holding a NUL, refused; the 503 page while
the database is down."""

from __future__ import annotations

import codecs
import re
import time
import uuid
from collections.abc import Callable

import structlog
from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.utils.html import escape

from kb.runtime.availability import is_database_outage, unavailable_response

log = structlog.get_logger("groundwork.request")

# An id from the proxy is kept only if it looks like one: it ends up in every log line.
_INCOMING_ID = re.compile(r"^[A-Za-z0-9._-]{8,128}$")


class RequestIdMiddleware:
    """Binds a request id to every log event of the request and returns it as X-Request-ID.

    The log line carries method, path (never the query string, which may hold secrets or a
    customer's question), status and duration; stages log their own timings under the same id.
    A static file served has no line: a chat page load fetched six, and the demo's console
    scrolled with lines nobody reads (one that fails, a 404 or 500, is logged).
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
        if response.status_code < 400 and request.path.startswith(settings.STATIC_URL):
            return response
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


CHARSET_REFUSED = (
    "This request says its content is in the {charset} character set; this site reads UTF-8 "
    "only. Send it as UTF-8 (every form on this site does)."
)
# Codec names (as codecs.lookup spells them) whose text is UTF-8: ASCII is a subset of it.
_UTF_8_COMPATIBLE = ("utf-8", "ascii")


class RequestCharsetMiddleware:
    """Refuses, with a 415 that says why, a request whose Content-Type names a charset other
    than UTF-8, before anything reads its body; a UTF-8 alias (``UTF8``, ``us-ascii``) is read
    as UTF-8.

    Django decodes fields in whatever charset the request names, and refuses a form in any
    other than ``utf-8`` with ``BadRequest``; with DEBUG on, the error page read that form
    again, raised again and made it a 500 on every path. One rule here, placed before the
    first middleware that reads a body, covers every view, DEBUG on or off.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        charset = request.content_params.get("charset") if request.content_params else None
        if charset is not None:
            try:
                codec = codecs.lookup(charset).name
            except LookupError:
                codec = ""
            if codec not in _UTF_8_COMPATIBLE:
                log.info("request_refused", reason="charset", charset=charset[:40])
                return HttpResponse(
                    escape(CHARSET_REFUSED.format(charset=charset[:40])),
                    status=415,
                    content_type="text/html",
                )
            request.encoding = "utf-8"  # the spelling Django's form parser accepts
        return self.get_response(request)


NUL_REFUSED = (
    "This request contains a NUL character (\\x00), which no address or form field may hold. "
    "Remove it and try again."
)


class NulCharacterMiddleware:
    """Refuses, with a 400 that says why, any request whose path or form fields hold a NUL.

    PostgreSQL text cannot store one, so a NUL that reached a query raised ``DataError`` (a 500)
    from whichever lookup or save met it first: one rule here covers every view and form,
    present and future, instead of a check in each.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if _holds_nul(request):
            log.info("request_refused", reason="nul_character", path=request.path.replace("\0", ""))
            return HttpResponseBadRequest(escape(NUL_REFUSED), content_type="text/html")
        return self.get_response(request)


def _holds_nul(request: HttpRequest) -> bool:
    if "\0" in request.path:
        return True
    fields = [request.GET]
    if request.method == "POST":
        fields.append(request.POST)  # parsed once here; views and CSRF reuse it
    for query in fields:
        for key, values in query.lists():
            if "\0" in key or any("\0" in value for value in values):
                return True
    uploads = (request.FILES.get(key) for key in request.FILES)
    return any(upload is not None and "\0" in (upload.name or "") for upload in uploads)


class ContentSecurityPolicyMiddleware:
    """Sends ``settings.CONTENT_SECURITY_POLICY`` with every response, errors and streams too.

    A document may hold ``![](https://elsewhere/track.png)``; the renderer already shows such an
    image as its description, and the policy is the second wall: no page of this site loads a
    script, style or image from anywhere else, or runs inline script.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", settings.CONTENT_SECURITY_POLICY)
        return response


class DatabaseUnavailableMiddleware:
    """Turns a database outage raised by any view (or the template it renders) into the 503."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not is_database_outage(exception):
            return None
        log.warning("database_unavailable", path=request.path, error=str(exception).split("\n")[0])
        return unavailable_response()
