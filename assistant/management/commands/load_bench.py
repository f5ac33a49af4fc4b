"""Load benchmark: 50 customers at once, each asking 3 questions over the streaming page, against
the web server the demo runs (gunicorn with ``config/gunicorn.conf.py``).

Runs in a throwaway database holding the sample help center. Reports completed and failed
asks, p50/p95 time to the first event and to the final one, the server's memory (RSS of its
process tree) before, at the peak and after, and its database connections. Fails (exit 1)
when an ask failed or memory after the load exceeds 1.5 x the idle figure.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from assistant.tooling.benchmarks import load_problems, load_report_lines, load_run
from kb.actors import SYSTEM
from kb.embedders import get_embedder
from kb.runtime.processes import Supervisor, database_url, free_port, web_server
from kb.services.sync import corpus_sync
from kb.tooling.benchmarking import throwaway_database

DATABASE_NAME = "test_groundwork_load_bench"
START_SECONDS = 120.0


class Command(BaseCommand):
    help = "Many concurrent askers against the demo's web server: failures, latency, memory."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--askers", type=int, default=50)
        parser.add_argument("--questions-per-asker", type=int, default=3)
        parser.add_argument("--corpus", type=Path, default=settings.BASE_DIR / "corpus")
        parser.add_argument("--port", type=int, default=0, help="default: a free port")

    def handle(
        self,
        *args: object,
        askers: int,
        questions_per_asker: int,
        corpus: Path,
        port: int,
        **options: object,
    ) -> None:
        cases_path = corpus / "eval.jsonl"
        if not cases_path.is_file():
            raise CommandError(f"no eval cases at {cases_path}")
        cases = [json.loads(line) for line in cases_path.read_text().splitlines() if line.strip()]
        questions = [case["question"] for case in cases]
        self.stdout.write(f"creating the throwaway database {DATABASE_NAME} and indexing {corpus}")
        port = port or free_port()
        with throwaway_database(DATABASE_NAME):
            corpus_sync(directory=corpus, embedder=get_embedder(), actor=SYSTEM)
            # One machine asks for every customer here: the per-address limit would refuse it.
            server = Supervisor(
                [
                    web_server(
                        port=port,
                        env={
                            "DATABASE_URL": database_url(),
                            "ASK_RATE_LIMIT_PER_MINUTE": "1000000",
                            "LOG_LEVEL": "WARNING",
                        },
                    )
                ]
            )
            server.start()
            try:
                base_url = f"http://127.0.0.1:{port}"
                _wait_until_ready(base_url)
                self.stdout.write(
                    f"{askers} askers x {questions_per_asker} questions against {base_url}..."
                )
                report = load_run(
                    base_url=base_url,
                    server_pid=server.pids()["web"],
                    questions=questions,
                    askers=askers,
                    asks_per_asker=questions_per_asker,
                )
            finally:
                server.stop()
        for line in load_report_lines(report, name="load_bench"):
            self.stdout.write(line)
        problems = load_problems(report)
        if problems:
            raise CommandError("load_bench: " + "; ".join(problems))


def _wait_until_ready(base_url: str) -> None:
    """Poll ``/readyz`` (which also loads the model in the worker that answers it)."""
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{base_url}/readyz", timeout=30) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass  # not listening, or not ready yet
        time.sleep(0.5)
    raise CommandError(f"the web server at {base_url} was not ready within {START_SECONDS:.0f}s")
