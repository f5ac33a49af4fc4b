"""Django's PostgreSQL backend, starting the embedded server at the first connection.

``config.settings`` names this engine when ``DATABASE_URL`` is not set. HOST and PORT are left
empty there because the server's socket directory and port are known only once it runs; the
entry says where it lives instead (``EMBEDDED_DATA_DIR``, ``EMBEDDED_SHARED_BUFFERS``). The first
connection of the process starts it (``embedded.postgres_start_once``) and fills HOST and PORT
into the entry, which every thread's connection shares, so later connections go straight to it.
A HOST already set (a test pointing the entry elsewhere) is used as it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from django.db.backends.postgresql import base, client

from kb.runtime import embedded


class DatabaseClient(client.DatabaseClient):
    connection: DatabaseWrapper

    def runshell(self, parameters: Iterable[str]) -> None:
        # `manage.py dbshell` runs psql from the entry without connecting first.
        self.connection.embedded_server_start()
        super().runshell(parameters)


class DatabaseWrapper(base.DatabaseWrapper):
    client_class = DatabaseClient

    def get_connection_params(self) -> dict[str, Any]:
        self.embedded_server_start()
        return super().get_connection_params()

    def embedded_server_start(self) -> None:
        """Start the embedded server if this process has not yet, and point the entry at it."""
        if self.settings_dict["HOST"]:
            return
        endpoint = embedded.postgres_start_once(
            data_dir=Path(self.settings_dict["EMBEDDED_DATA_DIR"]),
            shared_buffers=self.settings_dict["EMBEDDED_SHARED_BUFFERS"],
        )
        self.settings_dict["HOST"] = str(endpoint.socket_dir)
        self.settings_dict["PORT"] = str(endpoint.port)
