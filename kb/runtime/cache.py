"""Django's Redis cache on the embedded Redis, which it starts at first use.

``config.settings`` names this backend when the cache shares the embedded broker's server (no
``CACHE_URL``, no ``CELERY_BROKER_URL``); ``EMBEDDED_DATA_DIR`` in the entry says where it lives.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from django.utils.functional import cached_property

from kb.runtime import embedded


class EmbeddedRedisCache(RedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._embedded_data_dir = Path(params["EMBEDDED_DATA_DIR"])

    @cached_property
    def _cache(self) -> RedisCacheClient:
        # Made at the first cache call of each thread, before it connects. Django's RedisCache
        # makes it so from these attributes, which django-stubs does not declare.
        embedded.redis_start_once(data_dir=self._embedded_data_dir)
        return self._class(self._servers, **self._options)  # type: ignore[attr-defined]
