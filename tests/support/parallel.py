"""Each parallel test worker (``pytest -n``) gets its own embedded servers.

Loaded with ``-p tests.support.parallel`` (pyproject's addopts), before pytest-django reads the
settings: a worker's ``GROUNDWORK_DATA_DIR`` becomes ``<GROUNDWORK_DATA_DIR>/<worker id>``, so two
workers never share a PostgreSQL cluster, a Redis server or a test database. Processes the tests
start (gunicorn, Celery workers, the demo) inherit the worker's directory with the environment.
"""

from __future__ import annotations

import os
from pathlib import Path

_worker = os.environ.get("PYTEST_XDIST_WORKER")
if _worker:
    _base = Path(os.environ.get("GROUNDWORK_DATA_DIR") or Path(__file__).parents[2] / ".data")
    os.environ["GROUNDWORK_DATA_DIR"] = str(_base / _worker)
