"""Reads on a replica: retrieval and the /docs pages read a streaming replica of the embedded
primary; writes and the index state stay on the primary; and a replica that lags never gets a
chunk cited that the primary has already replaced."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection, connections
from django.test import Client
from django.test.utils import CaptureQueriesContext

from kb.actors import SYSTEM
from kb.models import Document
from kb.runtime.db_router import REPLICA_DB_ALIAS
from kb.services import document_index, document_save
from search.services import retrieve
from tests.support.chat import REFUND_QUESTION, index_help_center
from tests.support.polling import until
from tests.support.replica import Replica, streaming_replica

pytestmark = pytest.mark.replica


@pytest.fixture
def replica(transactional_db) -> Iterator[Replica]:
    """A streaming replica of the test database's server, configured as the replica alias."""
    with streaming_replica(data_dir=settings.DATA_DIR) as replica:
        connections.settings[REPLICA_DB_ALIAS] = {
            **connection.settings_dict,
            "HOST": str(replica.socket_dir),
            "PORT": str(replica.port),
            "CONN_HEALTH_CHECKS": False,
        }
        # Connected here: a test may only open connections to the aliases it was set up with,
        # and this one did not exist then.
        connections[REPLICA_DB_ALIAS].connect()
        try:
            yield replica
        finally:
            connections[REPLICA_DB_ALIAS].close()
            with contextlib.suppress(AttributeError):
                del connections[REPLICA_DB_ALIAS]
            del connections.settings[REPLICA_DB_ALIAS]


def _statements(queries: CaptureQueriesContext) -> list[str]:
    # The hybrid statement runs prepared, logged without its text; its term lookup is not.
    return [query["sql"] or "" for query in queries.captured_queries]


def test_reads_go_to_the_replica_and_a_lagging_one_never_gets_a_replaced_chunk_cited(
    replica: Replica, tmp_path: Path, cached_embedder
) -> None:
    # given the tiny help center indexed on the primary and replayed on the replica
    index_help_center(tmp_path, embedder=cached_embedder)
    until(replica.caught_up, seconds=30, why="the replica did not catch up with the primary")

    # when a question is retrieved and a docs page is read
    with (
        CaptureQueriesContext(connections[REPLICA_DB_ALIAS]) as on_replica,
        CaptureQueriesContext(connection) as on_primary,
    ):
        before = retrieve(question=REFUND_QUESTION, embedder=cached_embedder)
        page = Client().get("/docs/policies/refunds.md")

    # then the search and the page ran on the replica; the primary only confirmed the hits
    assert any("kb_term_stat" in sql for sql in _statements(on_replica))
    assert any("kb_document" in sql for sql in _statements(on_replica))
    assert [sql for sql in _statements(on_primary) if "kb_chunk" in sql] == [
        sql for sql in _statements(on_primary) if "c.id = ANY" in sql
    ]
    assert len(_statements(on_primary)) == 1, _statements(on_primary)
    assert page.status_code == 200 and b"30 days" in page.content
    replaced = {hit.chunk_id for hit in before.hits if hit.path == "policies/refunds.md"}
    assert replaced, [hit.path for hit in before.hits]

    # given replay paused (the replica lags), and the page edited and re-indexed on the primary
    replica.sql("SELECT pg_wal_replay_pause()")
    try:
        refunds = Document.objects.get(path="policies/refunds.md")
        refunds.body = refunds.body.replace("30 days", "14 days")
        document_save(document=refunds, actor=SYSTEM)
        assert document_index(document_id=refunds.pk, embedder=cached_embedder) == "indexed"
        ids = ",".join(str(pk) for pk in replaced)
        still_there = replica.sql(f"SELECT count(*) FROM kb_chunk WHERE id IN ({ids})")
        assert still_there == len(replaced), "the replica should still serve the old chunks"

        # when the same question is asked while the replica lags
        lagging = retrieve(question=REFUND_QUESTION, embedder=cached_embedder)
    finally:
        replica.sql("SELECT pg_wal_replay_resume()")

    # then no replaced chunk is offered for citing (the primary no longer holds them)
    assert not replaced & {hit.chunk_id for hit in lagging.hits}

    # when the replica catches up, the page's new text is retrieved from it
    until(replica.caught_up, seconds=30, why="the replica did not catch up after resuming")
    after = retrieve(question=REFUND_QUESTION, embedder=cached_embedder)
    assert any("14 days" in hit.text for hit in after.hits if hit.path == "policies/refunds.md")
