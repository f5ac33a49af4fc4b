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
  started for each test (about 2 s); ``.url`` is its base URL (``http://127.0.0.1:PORT``),
  ``.log_tail()`` the end of its log for assertion messages. Requesting it (``page`` does) puts
  the test in ``transactional_db``: rows the test creates are committed, so the server reads
  them, and are flushed after the test. The server uses the test database (``DATABASE_URL``)
  and this run's embedded Redis (same ``GROUNDWORK_DATA_DIR``): cache and rate limits are
  shared with the test process (``django.core.cache.cache.clear()`` resets them).
- ``e2e_server_env`` (function): extra environment for the server process, ``{}`` by default.
  Override it in a test module (any scope) to point the server at a stub, e.g. ::

      @pytest.fixture
      def e2e_server_env(anthropic_stub):
          return {"GENERATOR": "anthropic", "ANTHROPIC_API_KEY": "test-key",
                  "ANTHROPIC_BASE_URL": anthropic_stub.url}

- ``browser`` (module): a Playwright ``Browser`` (sync API) on ``/usr/bin/chromium``; tests skip
  with a clear reason when that binary is missing (``make test`` installs it).
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
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
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

from kb.runtime.processes import free_port
from tests.support.polling import until
from tests.support.processes import database_url, stop_process

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-background-networking"]
# Tests write their screenshots under .data/ so that `make test` leaves the tree clean;
# `make screenshots` runs them with GROUNDWORK_SCREENSHOTS=docs to refresh docs/screenshots/.
SCREENSHOTS_DIR = (
    ROOT / "docs" / "screenshots"
    if os.environ.get("GROUNDWORK_SCREENSHOTS") == "docs"
    else ROOT / ".data" / "screenshots"
)
FAILURES_DIR = ROOT / ".data" / "e2e-failures"
SERVER_START_SECONDS = 90.0
DEFAULT_TIMEOUT_MS = 15_000
VIEWPORT = {"width": 1280, "height": 900}
_SCREENSHOT_NAME = re.compile(r"[a-z0-9][a-z0-9-]*")


@dataclass(frozen=True)
class E2EServer:
    url: str  # base URL, no trailing slash
    log_path: Path
    process: subprocess.Popen[bytes]

    def log_tail(self, characters: int = 4000) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return text[-characters:]


def _wait_until_serving(server: E2EServer) -> None:
    def serving() -> bool:
        if server.process.poll() is not None:
            pytest.fail(
                f"the e2e server exited with {server.process.returncode}:\n{server.log_tail()}"
            )
        try:
            with urllib.request.urlopen(f"{server.url}/docs/", timeout=5) as response:
                return response.status == 200
        except urllib.error.HTTPError as error:
            pytest.fail(f"the e2e server answered {error.code} at start:\n{server.log_tail()}")
        except OSError:
            return False  # not listening yet

    until(
        serving,
        seconds=SERVER_START_SECONDS,
        why=lambda: (
            f"the e2e server did not answer within {SERVER_START_SECONDS:.0f}s:\n"
            f"{server.log_tail()}"
        ),
        interval=0.2,
    )


@pytest.fixture
def e2e_server_env() -> dict[str, str]:
    """Extra environment for the server process; override in a module to use stubs."""
    return {}


@contextmanager
def running_server(
    arguments: list[str], *, env: dict[str, str], log_dir: Path
) -> Iterator[E2EServer]:
    """``gunicorn`` with ``arguments`` (which must bind ``127.0.0.1:PORT`` for a free ``PORT``,
    passed in ``env["E2E_PORT"]``), on the test database and this run's Redis; stopped after."""
    port = env["E2E_PORT"]
    log_path = log_dir / "server.log"
    server_env = {
        **os.environ,
        "GROUNDWORK_ENV": "test",
        "GROUNDWORK_DATA_DIR": str(settings.DATA_DIR),
        "DATABASE_URL": database_url(),
        "PYTHONUNBUFFERED": "1",
        **env,
    }
    server_env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)  # the test process needs it, not the server
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", *arguments],
            cwd=ROOT,
            env=server_env,
            stdout=log,
            stderr=log,
        )
    server = E2EServer(url=f"http://127.0.0.1:{port}", log_path=log_path, process=process)
    try:
        _wait_until_serving(server)
        yield server
    finally:
        stop_process(process, timeout=15)


@pytest.fixture
def e2e_server(
    transactional_db: None, e2e_server_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[E2EServer]:
    """The app in its own gunicorn process, on the test database, started for this test.

    One process per test, not per module: the database is flushed between tests and a running
    process keeps ids it has read (Django's ContentType cache, the active embedding model), so
    a server that outlived a flush would write rows pointing at ids that no longer exist.
    """
    port = str(free_port())
    arguments = [
        "config.wsgi:application",
        "--bind", f"127.0.0.1:{port}",
        "--worker-class", "config.gunicorn_workers.RequestBufferingWorker",
        "--workers", "1", "--threads", "4",
        "--timeout", "120", "--graceful-timeout", "5",
        "--access-logfile", "-", "--error-logfile", "-",
    ]  # fmt: skip
    with running_server(
        arguments,
        env={"E2E_PORT": port, **e2e_server_env},
        log_dir=tmp_path_factory.mktemp("e2e-server"),
    ) as server:
        yield server


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.skip(
            f"{CHROMIUM} is missing: install Debian's chromium (`make browser`, or "
            "apt-get install chromium) to run the end-to-end tests"
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
