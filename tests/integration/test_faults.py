"""Faults: the database restarted in the middle of a sync, a worker killed in the middle of a
task. Real processes, real servers; nothing half-written, nothing lost."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest

from kb.runtime import embedded
from tests.support.polling import until

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = 12


@pytest.fixture
def own_database() -> Iterator[tuple[Path, dict[str, str]]]:
    """A PostgreSQL server of this test's own, so restarting it disturbs no other test."""
    data_dir = Path(tempfile.mkdtemp(prefix="gw-fault-"))
    endpoint = embedded.postgres_ensure_running(data_dir=data_dir)
    host = quote(str(endpoint.socket_dir), safe="")
    env = {
        **os.environ,
        "GROUNDWORK_ENV": "test",
        "GROUNDWORK_DATA_DIR": str(data_dir),
        "DATABASE_URL": f"postgres://{endpoint.user}@{host}:{endpoint.port}/{endpoint.name}",
    }
    try:
        yield data_dir, env
    finally:
        embedded.postgres_stop(data_dir=data_dir)
        embedded.redis_stop(data_dir=data_dir)


def _manage(env: dict[str, str], *args: str, **popen) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **popen,
    )


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    process = _manage(env, *args)
    stdout, stderr = process.communicate(timeout=180)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def _write_corpus(directory: Path, version: str) -> None:
    for number in range(DOCUMENTS):
        (directory / f"page-{number:02}.md").write_text(
            f"# Page {number}\n\nPolicy {number}, version {version}: refunds take {number} days.\n"
        )


def _restart_postgres(data_dir: Path) -> None:
    """Stop the server (fast shutdown: every connection is cut) and start it again, from
    another process, as an operator or a crash-restarting supervisor would."""
    script = (
        "import sys; from pathlib import Path; from kb.runtime import embedded; "
        "d = Path(sys.argv[1]); assert embedded.postgres_stop(data_dir=d); "
        "embedded.postgres_ensure_running(data_dir=d)"
    )
    subprocess.run([sys.executable, "-c", script, str(data_dir)], cwd=ROOT, check=True)


def _connect(data_dir: Path) -> psycopg.Connection:
    return psycopg.connect(
        host=str(data_dir / "postgres"), user="postgres", dbname="groundwork", autocommit=True
    )


def _index_consistency(data_dir: Path) -> dict[str, str]:
    """Each document's version as the index holds it; fails if any is half-written."""
    with _connect(data_dir) as connection:
        rows = connection.execute(
            """
            SELECT d.path, d.body, d.content_hash, s.indexed_hash, s.chunk_count,
                   (SELECT count(*) FROM kb_chunk c WHERE c.document_id = d.id),
                   (SELECT string_agg(c.text, ' ') FROM kb_chunk c WHERE c.document_id = d.id)
            FROM kb_document d JOIN kb_documentindexstate s ON s.document_id = d.id
            ORDER BY d.path
            """
        ).fetchall()
    versions = {}
    for path, body, content_hash, indexed_hash, chunk_count, chunks, text in rows:
        assert indexed_hash == content_hash, f"{path}: index state is for another version"
        assert chunks == chunk_count >= 1, f"{path}: {chunks} chunks, state says {chunk_count}"
        version = body.split("version ")[1].split(":")[0]
        assert f"version {version}:" in text, f"{path}: chunks hold another version's text"
        versions[path] = version
    assert len(versions) == DOCUMENTS
    return versions


def test_a_sync_cut_off_by_a_database_restart_leaves_whole_documents_and_resumes(
    own_database, tmp_path: Path
) -> None:
    data_dir, env = own_database
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    assert _run(env, "migrate", "-v0").returncode == 0
    _write_corpus(corpus, "one")
    assert _run(env, "kb_sync", str(corpus), "--no-progress").returncode == 0

    # given every page edited, and one page's row locked so the sync stops mid-write on it
    _write_corpus(corpus, "two")
    locker = _connect(data_dir)
    locker.autocommit = False
    locker.execute("SELECT 1 FROM kb_document WHERE path = 'page-07.md' FOR UPDATE")
    sync = _manage(env, "kb_sync", str(corpus), "--no-progress")
    try:

        def sync_blocked_or_done() -> bool:
            with _connect(data_dir) as watcher:
                blocked = watcher.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                ).fetchone()[0]
            return bool(blocked) or sync.poll() is not None

        until(sync_blocked_or_done, seconds=120, why="the sync never reached the locked page")
        written_before = _versions_written(data_dir)
        held_by_the_sync = _pages_the_waiting_sync_has_written(data_dir)

        # when the database restarts under it
        _restart_postgres(data_dir)
        _, stderr = sync.communicate(timeout=60)
    finally:
        if sync.poll() is None:
            sync.kill()
        locker.close()

    # then the sync fails in one line, and every page is wholly one version or the other
    assert sync.returncode == 1
    assert "the database failed during the sync" in stderr, stderr[-2000:]
    assert "Traceback" not in stderr, stderr[-2000:]
    versions = _index_consistency(data_dir)
    assert versions["page-07.md"] == "one"
    # (the twelve pages are one window of texts, written in one transaction: the seven before
    # the locked page were saved in it, uncommitted, when the server went down)
    assert sum(1 for v in versions.values() if v == "two") == written_before == 0
    assert held_by_the_sync == 7  # the cut came mid-sync, not before its first write

    # and a re-run finishes the job, re-embedding only what was left
    rerun = _run(env, "kb_sync", str(corpus), "--no-progress")
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert set(_index_consistency(data_dir).values()) == {"two"}
    unchanged = DOCUMENTS - sum(1 for v in versions.values() if v == "one")
    assert f"{unchanged} unchanged" in rerun.stdout


def _pages_the_waiting_sync_has_written(data_dir: Path) -> int:
    """Pages the sync blocked on a lock has saved in its open transaction: their committed
    versions, which other sessions still read, carry as ``xmax`` the id of the savepoint that
    saved them, a subtransaction the sync began after its own id (nothing else writes here)."""
    with _connect(data_dir) as connection:
        return connection.execute(
            """SELECT count(*) FROM kb_document d, pg_stat_activity a
               WHERE a.wait_event_type = 'Lock'
                 AND d.xmax::text::bigint > a.backend_xid::text::bigint"""
        ).fetchone()[0]


def _versions_written(data_dir: Path) -> int:
    with _connect(data_dir) as connection:
        return connection.execute(
            "SELECT count(*) FROM kb_document WHERE body LIKE '%%version two:%%'"
        ).fetchone()[0]


def test_a_worker_killed_mid_task_has_its_document_redone_by_the_sweep(
    transactional_db, local_embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datetime import timedelta

    from kb.models import Chunk, Document, DocumentIndexState
    from kb.services import embedding_model_register, index_sweep
    from kb.services import index_queue as indexing
    from tests.support.celery_worker import worker_process

    embedding_model_register(embedder=local_embedder)
    sections = "\n\n".join(
        f"## Clause {n}\n\nRefunds for plan {n} are prorated over {n} days of the term."
        for n in range(150)
    )  # long enough that embedding it keeps the worker busy for seconds

    # given a worker busy indexing a document
    with worker_process() as worker:
        document = Document.objects.create(path="terms.md", title="Terms", body=sections)
        state = DocumentIndexState.objects.filter(document=document)
        until(
            lambda: state.filter(status="indexing").exists(),
            seconds=60,
            why=lambda: worker.stdout and worker.stdout.read(2000),
        )

        # when it is killed outright
        worker.kill()
        worker.wait(timeout=10)

    # then the document is left "indexing" with nothing half-written
    assert state.get().status == "indexing"
    assert not Chunk.objects.filter(document=document).exists()

    # and once it counts as stale, the sweep sends it again and a new worker indexes it
    monkeypatch.setattr(indexing, "STALE_INDEXING_AFTER", timedelta(0))
    assert index_sweep(older_than=timedelta(0)) == 1
    with worker_process() as worker:
        until(
            lambda: state.get().status == "indexed",
            seconds=90,
            why=lambda: worker.stdout and worker.stdout.read(2000),
        )
    assert Chunk.objects.filter(document=document).count() == state.get().chunk_count >= 30
