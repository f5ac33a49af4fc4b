"""End-to-end fixtures: the app served by a real gunicorn process, driven by Debian's Chromium.

How to write an e2e test (see ``test_admin_screenshots.py`` for a full one)::

    pytestmark = pytest.mark.e2e

    def test_something(page, e2e_server, screenshot):
        Document.objects.create(...)          # committed: the server process sees it
        page.goto("/docs/policies/refunds.md")  # relative to e2e_server.url
        expect(page.get_by_role("heading", name="Refund Policy")).to_be_visible()
        screenshot(page, "document-page")     # -> .data/screenshots/document-page.png

Fixtures:

- ``e2e_server`` (function): the app served by gunicorn with the production worker class (gthread
  reading each request in its event loop, ``config/gunicorn_workers.py``) in its own process,
  shared by the e2e tests of one worker that ask for the same environment
  (``tests/support/live_server.py``: between two tests it finishes the last one's requests and
  forgets the row ids it cached); ``.url`` is its base URL (``http://127.0.0.1:PORT``),
  ``.log_tail()`` the end of its log for assertion messages. Requesting it (``page`` does) puts
  the test in ``transactional_db``: rows the test creates are committed, so the server reads
  them, and are flushed after the test. The server uses the test database (``DATABASE_URL``)
  and this run's embedded Redis (same ``GROUNDWORK_DATA_DIR``): cache and rate limits are
  shared with the test process (``django.core.cache.cache.clear()`` resets them).
- ``e2e_server_env`` (function): extra environment for the server process, ``{}`` by default
  (a test asking for another environment than the running server's gets a new server).
  Override it in a test module (any scope) to point the server at a stub, e.g. ::

      @pytest.fixture
      def e2e_server_env(anthropic_stub):
          return {"GENERATOR": "anthropic", "ANTHROPIC_API_KEY": "test-key",
                  "ANTHROPIC_BASE_URL": anthropic_stub.url}

- ``browser`` (package): a Playwright ``Browser`` (sync API) on Debian's
  ``/usr/bin/chromium-headless-shell``; tests skip with a clear reason when that binary is
  missing (``make test`` installs it).
- ``page`` (function): a fresh ``Page`` in its own context (no cookies carried between tests),
  1280x900, ``base_url`` set to the server, 15 s timeout for actions and ``expect``. On failure
  its screenshot and the server's log tail are written to ``.data/e2e-failures/``.
- ``new_page(**context_options)`` (function): more pages, e.g. a phone:
  ``new_page(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)``.
- ``sign_in(page, user)``: log ``user`` in without the login form (a real session cookie).
- ``screenshot(target, name, *, full_page=False, **options)``: save a ``Page`` or ``Locator`` as
  ``.data/screenshots/<name>.png`` (``docs/screenshots/`` under ``make screenshots``) and
  return the path; options go to Playwright (e.g. ``clip``).

Streaming works: the gthread worker writes each chunk of a ``StreamingHttpResponse`` as
it is produced. Playwright's sync API keeps an asyncio loop running on the test's thread, which
makes Django refuse ORM calls there; ``browser`` sets ``DJANGO_ALLOW_ASYNC_UNSAFE`` for its
lifetime because the test code is synchronous and runs only between Playwright calls.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.test import Client
from playwright.sync_api import (
    Browser,
    BrowserContext,
    Locator,
    Page,
    expect,
    sync_playwright,
)

from tests.support.live_server import (
    ROOT,
    E2EServer,
    shared_server,
    shared_server_between_tests,
    stop_shared_server,
)

# Chromium's headless-only build, as Playwright runs headless: the full browser in its headless
# mode took about a third more CPU for tests/e2e (59.5 and 54.3 s against 45.2 and 39.0 s,
# alternated)
CHROMIUM = Path("/usr/bin/chromium-headless-shell")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-background-networking"]
# Tests write their screenshots under .data/ so that `make test` leaves the tree clean;
# `make screenshots` runs them with GROUNDWORK_SCREENSHOTS=docs to refresh docs/screenshots/.
SCREENSHOTS_DIR = (
    ROOT / "docs" / "screenshots"
    if os.environ.get("GROUNDWORK_SCREENSHOTS") == "docs"
    else ROOT / ".data" / "screenshots"
)
FAILURES_DIR = ROOT / ".data" / "e2e-failures"
DEFAULT_TIMEOUT_MS = 15_000
VIEWPORT = {"width": 1280, "height": 900}
_SCREENSHOT_NAME = re.compile(r"[a-z0-9][a-z0-9-]*")


@pytest.fixture
def e2e_server_env() -> dict[str, str]:
    """Extra environment for the server process; override in a module to use stubs."""
    return {}


@pytest.fixture(scope="session")
def _e2e_server_logs(
    django_db_setup: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[pytest.TempPathFactory]:
    """Where the shared servers write their logs; the last one is stopped when the session
    ends, before the test database it is connected to is dropped (``django_db_setup``)."""
    yield tmp_path_factory
    stop_shared_server()


@pytest.fixture
def e2e_server(
    transactional_db: None,
    e2e_server_env: dict[str, str],
    _e2e_server_logs: pytest.TempPathFactory,
) -> Iterator[E2EServer]:
    """The app in its own gunicorn process, on the test database, shared with the other e2e
    tests of this worker that ask for the same ``e2e_server_env``.

    The database is flushed between tests, so before the flush the server must finish every
    request of this test (a streamed answer would otherwise save its message into the next
    test's tables), and before the next test it forgets the row ids it caches (Django's
    ContentType cache: the admin's log entries would point at ids the flush removed).
    ``shared_server_between_tests`` does both, through ``tests/support/e2e_app.py``.
    """
    server = shared_server(e2e_server_env, log_dirs=_e2e_server_logs)
    shared_server_between_tests(server)
    yield server
    shared_server_between_tests(server)


@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    """One Chromium for the e2e files a worker runs one after another (each test still gets
    fresh contexts): a launch costs ~0.8 s of CPU. Package-scoped, it is closed before the
    worker's next test outside ``tests/e2e``, so Playwright's event loop and
    ``DJANGO_ALLOW_ASYNC_UNSAFE`` never reach those tests."""
    if not CHROMIUM.exists():
        pytest.skip(
            f"{CHROMIUM} is missing: install Debian's chromium-headless-shell (`make browser`, "
            "or apt-get install chromium-headless-shell) to run the end-to-end tests"
        )
    with pytest.MonkeyPatch.context() as patch, sync_playwright() as playwright:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        expect.set_options(timeout=DEFAULT_TIMEOUT_MS)
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


_CALL_FAILED = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    report = yield
    if report.when == "call":
        item.stash[_CALL_FAILED] = report.failed
    return report


@pytest.fixture
def new_page(
    browser: Browser, e2e_server: E2EServer, request: pytest.FixtureRequest
) -> Iterator[Callable[..., Page]]:
    """Open pages in fresh contexts; options go to ``Browser.new_context``."""
    contexts: list[BrowserContext] = []
    pages: list[Page] = []

    def open_page(**context_options: object) -> Page:
        options = {"viewport": VIEWPORT, "locale": "en-US", "base_url": e2e_server.url}
        context = browser.new_context(**{**options, **context_options})
        context.set_default_timeout(DEFAULT_TIMEOUT_MS)
        contexts.append(context)
        opened = context.new_page()
        pages.append(opened)
        return opened

    yield open_page
    if request.node.stash.get(_CALL_FAILED, False):
        _save_failure(request.node.name, pages, e2e_server)
    for context in contexts:
        context.close()


def _save_failure(test_name: str, pages: list[Page], server: E2EServer) -> None:
    FAILURES_DIR.mkdir(parents=True, exist_ok=True)
    safe_name = re.sub(r"[^A-Za-z0-9_.-]+", "_", test_name)
    for number, opened in enumerate(pages):
        try:
            opened.screenshot(path=FAILURES_DIR / f"{safe_name}-{number}.png", full_page=True)
        except Exception as exc:  # a crashed page must not hide the test's own failure
            sys.stderr.write(f"could not save the failure screenshot: {exc}\n")
    (FAILURES_DIR / f"{safe_name}.log").write_text(server.log_tail(20_000))
    sys.stderr.write(f"e2e failure artefacts in {FAILURES_DIR}\n")


@pytest.fixture
def page(new_page: Callable[..., Page]) -> Page:
    return new_page()


@pytest.fixture
def sign_in(e2e_server: E2EServer) -> Callable[[Page, AbstractBaseUser], None]:
    """Log a user in by giving the page a real session cookie (no login form)."""

    def log_in(target: Page, user: AbstractBaseUser) -> None:
        client = Client()
        client.force_login(user)
        cookie = client.cookies[settings.SESSION_COOKIE_NAME]
        target.context.add_cookies(
            [{"name": cookie.key, "value": cookie.value, "url": e2e_server.url}]
        )

    return log_in


@pytest.fixture
def screenshot() -> Callable[..., Path]:
    """Save a page or element as ``<SCREENSHOTS_DIR>/<name>.png``; returns the path."""

    def save(target: Page | Locator, name: str, *, full_page: bool = False, **options: Any) -> Path:
        if not _SCREENSHOT_NAME.fullmatch(name):
            raise ValueError(f"screenshot names are lower-case words joined by '-' (got {name!r})")
        SCREENSHOTS_DIR.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS_DIR / f"{name}.png"
        if isinstance(target, Locator):
            target.screenshot(path=path, animations="disabled", **options)
        else:
            target.screenshot(path=path, full_page=full_page, animations="disabled", **options)
        return path

    return save
