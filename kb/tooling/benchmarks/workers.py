"""Many workers, one truth: N Celery worker processes, each pointed at the same database and
broker URLs as separate machines would be, index a bulk import and a burst of edits; then the
index is audited: nothing lost, nothing written twice at one version, no mixed chunk sets.

``workers_run`` runs against the database this process is connected to (the test database, or
the throwaway one of ``kb_workers_bench``) with an active embedding model; the worker
processes see only committed rows, so it must not run inside a transaction.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import connection, transaction

from config.celery_app import app
from config.processes import BASE_DIR, database_url
from kb.actors import SYSTEM
from kb.models import Document, DocumentIndexState, EmbeddingModel
from kb.services import document_save, index_requests_in_bulk
from kb.tooling.benchmarking import BenchmarkError

PATH_PREFIX = "workers-bench/"
_WORDS = [
    "invoice",
    "refund",
    "billing",
    "account",
    "plan",
    "seat",
    "upgrade",
    "downgrade",
    "export",
    "import",
    "webhook",
    "token",
    "password",
    "login",
    "session",
    "audit",
    "report",
    "schedule",
    "retention",
    "archive",
    "workspace",
    "member",
    "role",
]


@dataclass(frozen=True)
class WorkersRun:
    workers: int
    documents: int
    edits: int
    seconds: float  # from the import's commit until every document is current
    writes: int  # chunk sets written (the workers' document_indexed events)
    lost: int  # documents not current in the model when the run ended
    indexed_twice: int  # (document, version) whose chunks were written more than once
    mixed: int  # documents whose chunks are not one whole set of the model's current version

    @property
    def documents_per_second(self) -> float:
        return (self.documents + self.edits) / self.seconds if self.seconds else 0.0


def workers_run(
    *,
    workers: int,
    documents: int,
    edits: int,
    embedding_model: EmbeddingModel,
    log_dir: Path,
    timeout: float = 600.0,
    worker_env: dict[str, str] | None = None,
    progress: Callable[[str], None] = lambda line: None,
) -> WorkersRun:
    """Start ``workers`` worker processes on both queues, import ``documents`` synthetic pages
    (one transaction; their indexing goes to the bulk queue in batches), then save ``edits``
    edits to random pages one by one (each on the interactive queue), wait until every page
    is current in ``embedding_model`` (at most ``timeout`` seconds) and audit the index."""
    if connection.in_atomic_block:
        raise BenchmarkError("workers_run needs committed rows: call it outside a transaction")
    rng = random.Random(20261201 + workers)
    log_dir.mkdir(parents=True, exist_ok=True)
    with _worker_processes(workers, log_dir=log_dir, extra_env=worker_env or {}) as logs:
        _wait_for_workers(workers, progress=progress)
        progress(f"  {workers} worker(s) ready; importing {documents} documents")
        with index_requests_in_bulk(), transaction.atomic():
            pages = [
                Document.objects.create(
                    path=f"{PATH_PREFIX}page-{number:05d}.md",
                    title=f"Synthetic page {number}",
                    body=_body(rng),
                )
                for number in range(documents)
            ]
        started = time.perf_counter()
        progress(f"  imported; saving {edits} edits while the import is indexed")
        for number in range(edits):
            page = rng.choice(pages)
            page.body += f"\n\nEdit {number}: {' '.join(rng.choices(_WORDS, k=12))}."
            document_save(document=page, actor=SYSTEM)
        seconds = _wait_until_current(embedding_model, started, timeout, progress=progress)
    writes = Counter(_indexed_events(logs, embedding_model.key))
    return WorkersRun(
        workers=workers,
        documents=documents,
        edits=edits,
        seconds=seconds,
        writes=sum(writes.values()),
        lost=_not_current(embedding_model),
        indexed_twice=sum(1 for count in writes.values() if count > 1),
        mixed=_mixed_documents(embedding_model),
    )


def _body(rng: random.Random) -> str:
    sections = []
    for heading in range(rng.randint(1, 3)):
        sentences = [" ".join(rng.choices(_WORDS, k=rng.randint(8, 16))) + "." for _ in range(6)]
        sections.append(f"## Section {heading}\n\n" + " ".join(sentences).capitalize())
    return "\n\n".join(sections)


@contextlib.contextmanager
def _worker_processes(
    count: int, *, log_dir: Path, extra_env: dict[str, str]
) -> Iterator[list[Path]]:
    """``count`` Celery workers (solo pool, both queues) given the database and broker by URL,
    as on separate machines; each logs JSON lines to its own file. Stopped on exit."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "LOG_FORMAT": "json",
        "LOG_LEVEL": "INFO",
        **extra_env,
    }
    logs = [log_dir / f"worker-{number}.log" for number in range(count)]
    processes = []
    try:
        for number, log in enumerate(logs):
            with log.open("w") as output:
                processes.append(
                    subprocess.Popen(
                        [sys.executable, "-m", "celery", "-A", "config", "worker",
                         "--pool", "solo", "--hostname", f"bench{number}@%h",
                         "--queues", f"{settings.INTERACTIVE_QUEUE},{settings.BULK_QUEUE}",
                         "--loglevel", "WARNING", "--without-mingle", "--without-gossip"],
                        cwd=BASE_DIR,
                        env=env,
                        stdout=output,
                        stderr=subprocess.STDOUT,
                    )
                )  # fmt: skip
        yield logs
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_for_workers(count: int, *, progress: Callable[[str], None]) -> None:
    deadline = time.monotonic() + 120
    while True:
        replies = app.control.ping(timeout=0.5) or []
        names = {name for reply in replies for name in reply if name.startswith("bench")}
        if len(names) >= count:
            return
        if time.monotonic() > deadline:
            raise BenchmarkError(
                f"only {len(names)} of {count} workers answered within 120 s (see their logs)"
            )


def _not_current(model: EmbeddingModel) -> int:
    current = DocumentIndexState.objects.current_in(model).values("document_id")
    return Document.objects.filter(path__startswith=PATH_PREFIX).exclude(pk__in=current).count()


def _wait_until_current(
    model: EmbeddingModel, started: float, timeout: float, *, progress: Callable[[str], None]
) -> float:
    reported = time.perf_counter()
    while (left := _not_current(model)) and time.perf_counter() - started < timeout:
        if time.perf_counter() - reported >= 5:
            progress(f"  {left} documents not yet current ({time.perf_counter() - started:.0f} s)")
            reported = time.perf_counter()
        time.sleep(0.05)
    return time.perf_counter() - started


def _indexed_events(logs: list[Path], model_key: str) -> Iterator[tuple[str, str]]:
    """(path, content hash) of every chunk set the workers wrote into ``model_key``."""
    for log in logs:
        for line in log.read_text(errors="replace").splitlines():
            start = line.find("{")
            if start < 0 or '"document_indexed"' not in line:
                continue
            try:
                event = json.loads(line[start:])
            except json.JSONDecodeError:
                continue
            if event.get("event") == "document_indexed" and event.get("model") == model_key:
                yield event["path"], event["content_hash"]


def _mixed_documents(model: EmbeddingModel) -> int:
    """Documents whose chunks are not exactly one whole set for the model's current version:
    a chunk of another model or dimension, ordinals repeated, or a count its state disowns."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT count(*) FROM kb_document d
            LEFT JOIN kb_documentindexstate s
                ON s.document_id = d.id AND s.embedding_model_id = %s
            LEFT JOIN LATERAL (
                SELECT count(*) FILTER (WHERE c.embedding_model_id = %s) AS own,
                       count(DISTINCT c.ordinal) FILTER (WHERE c.embedding_model_id = %s)
                           AS ordinals,
                       count(*) FILTER (WHERE c.embedding_model_id <> %s
                                        OR vector_dims(c.embedding) <> %s) AS foreign
                FROM kb_chunk c WHERE c.document_id = d.id
            ) chunks ON true
            WHERE d.path LIKE %s
              AND (chunks.foreign > 0 OR chunks.own <> chunks.ordinals
                   OR chunks.own <> coalesce(s.chunk_count, 0))
            """,
            [model.pk, model.pk, model.pk, model.pk, model.dimensions, PATH_PREFIX + "%"],
        )
        return cursor.fetchone()[0]
