"""The app as the shared end-to-end server serves it: ``config.wsgi.application`` unchanged, with
two paths of the test fixture's own in front of it, answered before Django sees a request.

One gunicorn process serves many e2e tests (``tests/support/live_server.py``), and the database
is flushed between them. Between two tests the fixture asks ``/__e2e__/between-tests``:

- how many requests are still in flight (a streamed answer whose page just closed may still
  save its message): the fixture waits for none before the flush, so no row of one test is
  written into the next;
- and, when none is, the process forgets the ids it keeps in memory: Django caches
  ``ContentType`` rows by id (the admin's log entries use them), and the flush gives those rows
  new ids.

Nothing else in the app keeps rows in memory (the embedders, rerankers and generators it caches
per process depend on the settings alone, which are one server's environment). Production runs
``config.wsgi`` itself; only the e2e fixture serves this module.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

BETWEEN_TESTS_PATH = "/__e2e__/between-tests"

_lock = threading.Lock()
_in_flight = 0


@functools.cache
def _groundwork() -> Callable[..., Iterable[bytes]]:
    """``config.wsgi.application``, loaded at the first request: the test process imports this
    module for its path and must not set Django up a second time."""
    from config.wsgi import application

    return application


def _finished() -> None:
    global _in_flight
    with _lock:
        _in_flight -= 1


class _Counted:
    """A response body that counts its request as finished once the server closes it."""

    def __init__(self, body: Iterable[bytes]) -> None:
        self._body = body

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._body)

    def close(self) -> None:
        try:
            close = getattr(self._body, "close", None)
            if close is not None:
                close()
        finally:
            _finished()


def _between_tests(start_response: Callable[..., Any]) -> list[bytes]:
    _groundwork()  # Django set up before its models are imported
    with _lock:
        others = _in_flight
        if others == 0:
            from django.contrib.contenttypes.models import ContentType

            ContentType.objects.clear_cache()
    start_response("200 OK", [("Content-Type", "application/json")])
    return [json.dumps({"in_flight": others}).encode()]


def application(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    global _in_flight
    if environ.get("PATH_INFO") == BETWEEN_TESTS_PATH:
        return _between_tests(start_response)
    with _lock:
        _in_flight += 1
    try:
        body = _groundwork()(environ, start_response)
    except BaseException:
        _finished()
        raise
    file_wrapper = environ.get("wsgi.file_wrapper")
    if isinstance(file_wrapper, type) and isinstance(body, file_wrapper):
        # A static file (WhiteNoise): it never touches the database, and gunicorn sends it
        # with sendfile only if it is handed the wrapper itself.
        _finished()
        return body
    return _Counted(body)
