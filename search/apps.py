from __future__ import annotations

from django.apps import AppConfig
from django.conf import settings
from django.db.backends.signals import connection_created


def _configure_vector_search(sender: object, connection, **kwargs: object) -> None:
    """Per-connection pgvector settings for the filtered vector leg.

    ``iterative_scan`` makes an HNSW scan continue past candidates the audience/status filters
    reject, so the leg still returns its full depth; ``ef_search`` sets the search breadth.
    ``plan_cache_mode`` gives the prepared hybrid statement (``search.hybrid``) its generic
    plan from the first run; Django's own queries are never prepared (client-side binding).
    """
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT set_config('hnsw.ef_search', %s, false), "
            "set_config('hnsw.iterative_scan', 'relaxed_order', false), "
            "set_config('plan_cache_mode', 'force_generic_plan', false)",
            [str(int(settings.HNSW_EF_SEARCH))],
        )


class SearchConfig(AppConfig):
    name = "search"
    verbose_name = "Search"

    def ready(self) -> None:
        connection_created.connect(_configure_vector_search, dispatch_uid="search_vector_settings")
