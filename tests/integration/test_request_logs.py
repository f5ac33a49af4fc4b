"""The per-request log line: one for every page, form and stream, none for a static file (a
chat page load fetched six of them, and the demo's console scrolled with lines nobody reads)."""

from __future__ import annotations

import pytest
import structlog
from django.test import Client

pytestmark = pytest.mark.django_db


def _logged_paths(*paths: str) -> list[str]:
    client = Client()
    with structlog.testing.capture_logs() as events:
        statuses = [client.get(path).status_code for path in paths]
    assert all(status < 500 for status in statuses), statuses
    return [event["path"] for event in events if event["event"] == "request_finished"]


def test_a_static_file_is_served_without_a_request_log_line() -> None:
    logged = _logged_paths("/static/groundwork/site.css", "/static/assistant/chat.js")

    assert logged == []


def test_pages_and_errors_still_log_one_line_each() -> None:
    logged = _logged_paths("/healthz", "/no-such-page", "/static/no-such-file.css", "/docs/")

    # a missing static file is a 404 from the site, not a file served: it is logged
    assert logged == ["/healthz", "/no-such-page", "/static/no-such-file.css", "/docs/"]
