"""Load benchmark of the answer API: 200 programs at once, each asking over the streamed ask
with an API key, against the web server the demo runs (gunicorn with ``config/gunicorn.conf.py``).

Runs in a throwaway database holding the sample help center. Reports completed and failed
asks, p50/p95 time to the first event and to the final one, the server's memory before, at the
peak and after, and its database connections. Fails (exit 1) when an ask failed or memory
after the load exceeds 1.5 x the idle figure.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from assistant.api.keys import api_key_create
from assistant.management.commands.load_bench import _wait_until_ready
from assistant.tooling.api_benchmarks import api_load_run
from assistant.tooling.benchmarks import (
    LOAD_REQUEST_TIMEOUT_SECONDS,
    load_problems,
    load_report_lines,
)
from kb.actors import SYSTEM
from kb.embedders import get_embedder
from kb.runtime.processes import Supervisor, database_url, free_port, web_server
from kb.services.sync import corpus_sync
from kb.tooling.benchmarking import throwaway_database

DATABASE_NAME = "test_groundwork_api_load_bench"
PROGRESS_STEPS = 10


class Command(BaseCommand):
    help = "Many concurrent API askers against the demo's web server: failures, latency, memory."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--askers", type=int, default=200)
        parser.add_argument("--questions-per-asker", type=int, default=1)
        parser.add_argument("--corpus", type=Path, default=settings.BASE_DIR / "corpus")
        parser.add_argument("--port", type=int, default=0, help="default: a free port")
        parser.add_argument(
            "--timeout",
            type=float,
            default=LOAD_REQUEST_TIMEOUT_SECONDS,
            help="seconds a client waits for a byte before its ask counts as failed "
            "(default: the page load benchmark's)",
        )

    def handle(
        self,
        *args: object,
        askers: int,
        questions_per_asker: int,
        corpus: Path,
        port: int,
        timeout: float,
        **options: object,
    ) -> None:
        if askers < 1 or questions_per_asker < 1 or timeout <= 0:
            raise CommandError(
                "--askers and --questions-per-asker must be at least 1, --timeout above 0"
            )
        cases_path = corpus / "eval.jsonl"
        if not cases_path.is_file():
            raise CommandError(f"no eval cases at {cases_path}")
        cases = [json.loads(line) for line in cases_path.read_text().splitlines() if line.strip()]
        questions = [case["question"] for case in cases]
        self.stdout.write(f"creating the throwaway database {DATABASE_NAME} and indexing {corpus}")
        port = port or free_port()
        with throwaway_database(DATABASE_NAME):
            corpus_sync(directory=corpus, embedder=get_embedder(), actor=SYSTEM)
            # Every asker shares one key here: its limit must not be what is measured.
            key = api_key_create(
                actor=SYSTEM, name="api_load_bench", rate_limit_per_minute=10_000_000
            ).key
            server = Supervisor(
                [
                    web_server(
                        port=port, env={"DATABASE_URL": database_url(), "LOG_LEVEL": "WARNING"}
                    )
                ]
            )
            server.start()
            try:
                base_url = f"http://127.0.0.1:{port}"
                _wait_until_ready(base_url)
                total = askers * questions_per_asker
                self.stdout.write(
                    f"{askers} API askers x {questions_per_asker} questions against {base_url}..."
                )
                step = max(total // PROGRESS_STEPS, 1)

                def progress(done: int, total: int) -> None:
                    if done % step == 0 or done == total:
                        self.stdout.write(f"  {done}/{total} asks done")

                report = api_load_run(
                    base_url=base_url,
                    key=key,
                    server_pid=server.pids()["web"],
                    questions=questions,
                    askers=askers,
                    asks_per_asker=questions_per_asker,
                    progress=progress,
                    timeout_seconds=timeout,
                )
            finally:
                server.stop()
        for line in load_report_lines(report, name="api_load_bench"):
            self.stdout.write(line)
        problems = load_problems(report)
        if problems:
            raise CommandError("api_load_bench: " + "; ".join(problems))
