"""What the server and worker processes the tests start share: the test database's address,
and how they are stopped."""

from __future__ import annotations

import subprocess

from kb.runtime.processes import database_url

__all__ = ["database_url", "stop_process"]


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
