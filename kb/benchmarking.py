"""What every benchmark command needs: a database of its own, created and dropped around it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection


@contextmanager
def throwaway_database(name: str, *, keep: bool = False) -> Iterator[str]:
    """Switch the default connection to a fresh, migrated database called ``name`` and drop it
    afterwards (unless ``keep``), so a benchmark never touches real data. Each benchmark uses
    its own name, so two run at once never clobber each other."""
    creation = connection.creation
    old_name = connection.settings_dict["NAME"]
    old_test_name = connection.settings_dict["TEST"].get("NAME")
    connection.settings_dict["TEST"]["NAME"] = name
    creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        yield name
    finally:
        if keep:
            connection.close()
            connection.settings_dict["NAME"] = old_name
        else:
            creation.destroy_test_db(old_name, verbosity=0)
        connection.settings_dict["TEST"]["NAME"] = old_test_name
