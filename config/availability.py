"""The database is down: a plain "temporarily unavailable" page with ``Retry-After``, not a 500.

Nothing has to be restarted when PostgreSQL comes back: Django opens a new connection at the
next request (``CONN_HEALTH_CHECKS`` drops a broken persistent one first), so this module only
decides what a reader sees meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable

import structlog
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string

log = structlog.get_logger("groundwork.request")

RETRY_AFTER_SECONDS = 60
UNAVAILABLE_MESSAGE = "The help center is temporarily unavailable. Please try again in a minute."


def is_database_outage(exc: BaseException) -> bool:
    """Whether ``exc`` means the database cannot be reached (refused, dropped, restarting),
    as opposed to a bug in a query, which stays a 500."""
    return isinstance(exc, (OperationalError, InterfaceError))


def unavailable_response() -> HttpResponse:
    """The 503 page; self-contained (no database, no session) so an outage cannot break it."""
    html = render_to_string("503.html", {"message": UNAVAILABLE_MESSAGE})
    response = HttpResponse(html, status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    response["Cache-Control"] = "no-store"
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
