"""The database is down: a plain "temporarily unavailable" page with ``Retry-After``, not a 500.

Nothing has to be restarted when PostgreSQL comes back: Django opens a new connection at the
next request (``CONN_HEALTH_CHECKS`` drops a broken persistent one first), so this module only
decides what a reader sees meanwhile: ``DatabaseUnavailableMiddleware`` (``config.middleware``)
answers with it for any view, the chat's streamed answer for its own stream.
"""

from __future__ import annotations

from django.db import InterfaceError, OperationalError
from django.http import HttpResponse
from django.template.loader import render_to_string

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
