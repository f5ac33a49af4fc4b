"""Each parallel test worker (``pytest -n``) gets its own embedded servers, and the end-to-end
tests run one after another on one worker.

Loaded with ``-p tests.support.parallel`` (pyproject's addopts), before pytest-django reads the
settings: a worker's ``GROUNDWORK_DATA_DIR`` becomes ``<GROUNDWORK_DATA_DIR>/<worker id>``, so two
workers never share a PostgreSQL cluster, a Redis server or a test database. Processes the tests
start (gunicorn, Celery workers, the demo) inherit the worker's directory with the environment.

``--dist loadfile`` hands out whole files, largest first, so the e2e files were spread over both
workers between other files. Each time a worker came back to ``tests/e2e`` it started the shared
gunicorn server and Chromium again (~2.5-3 s a file, both stopped before any other test: see
``tests/support/live_server.py``), ~30 s of the suite's time. Here ``tests/e2e`` is one unit of
work, so a worker starts them once (again only for a module asking for another environment).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from xdist.scheduler import LoadFileScheduling

_worker = os.environ.get("PYTEST_XDIST_WORKER")
if _worker:
    _base = Path(os.environ.get("GROUNDWORK_DATA_DIR") or Path(__file__).parents[2] / ".data")
    os.environ["GROUNDWORK_DATA_DIR"] = str(_base / _worker)

E2E_SCOPE = "tests/e2e/"


class FilesWithE2ETogether(LoadFileScheduling):
    """``--dist loadfile``, but every test under ``tests/e2e/`` is one unit of work."""

    def _split_scope(self, nodeid: str) -> str:
        if nodeid.startswith(E2E_SCOPE):
            return E2E_SCOPE
        return super()._split_scope(nodeid)


# optional: a run without pytest-xdist's plugin (``-p no:xdist``) has no such hook to implement
@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    if config.getvalue("dist") != "loadfile":
        return None
    return FilesWithE2ETogether(config, log)
