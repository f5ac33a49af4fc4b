"""What the server and worker processes the tests start share: the test database's address,
and how they are stopped."""

from __future__ import annotations

import subprocess
from urllib.parse import quote

from django.db import connection


def database_url() -> str:
    """``DATABASE_URL`` for a child process: the database this test run uses (the test one)."""
    database = connection.settings_dict
    host = quote(str(database["HOST"] or ""), safe="")
    password = f":{quote(database['PASSWORD'], safe='')}" if database.get("PASSWORD") else ""
    user = quote(str(database["USER"] or ""), safe="")
    return f"postgres://{user}{password}@{host}:{database['PORT']}/{database['NAME']}"


def stop_process(process: subprocess.Popen, *, timeout: float) -> None:
    """SIGTERM (a graceful shutdown), then SIGKILL if it is still running after ``timeout``."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
