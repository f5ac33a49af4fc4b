"""The database router: reads inside replica_reads() go to a configured replica; writes,
migrations and every other read stay on the primary."""

from __future__ import annotations

import pytest
from django.db import DEFAULT_DB_ALIAS, connections

from kb.models import Document
from kb.runtime.db_router import REPLICA_DB_ALIAS, PrimaryReplicaRouter, read_alias, replica_reads

router = PrimaryReplicaRouter()


@pytest.fixture
def with_replica(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(
        connections.settings, REPLICA_DB_ALIAS, dict(connections.settings[DEFAULT_DB_ALIAS])
    )


def test_without_a_replica_every_read_is_on_the_primary() -> None:
    with replica_reads():
        assert read_alias() == DEFAULT_DB_ALIAS
        assert router.db_for_read(Document) == DEFAULT_DB_ALIAS


def test_reads_inside_replica_reads_go_to_the_replica_and_writes_never(with_replica) -> None:
    assert router.db_for_read(Document) == DEFAULT_DB_ALIAS
    with replica_reads():
        assert router.db_for_read(Document) == REPLICA_DB_ALIAS
        assert router.db_for_write(Document) == DEFAULT_DB_ALIAS
    assert read_alias() == DEFAULT_DB_ALIAS


def test_a_decorated_function_reads_the_replica_only_while_it_runs(with_replica) -> None:
    @replica_reads()
    def failing_read() -> None:
        assert read_alias() == REPLICA_DB_ALIAS
        raise LookupError("the read failed")

    with pytest.raises(LookupError):
        failing_read()
    assert read_alias() == DEFAULT_DB_ALIAS


def test_only_the_primary_is_migrated() -> None:
    assert router.allow_migrate(DEFAULT_DB_ALIAS, "kb")
    assert not router.allow_migrate(REPLICA_DB_ALIAS, "kb")
