from __future__ import annotations

import os
from typing import Any

from celery import Celery

from kb.runtime import embedded

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


class GroundworkCelery(Celery):
    """Celery whose first broker connection in a process starts the embedded Redis, when that is
    the broker (``EMBEDDED_REDIS_DATA_DIR`` set): every connection to the broker, a worker's, a
    publisher's, ``inspect``'s or the readiness probe's, is made by one of these two methods."""

    def connection_for_read(self, url: str | None = None, **kwargs: Any) -> Any:
        _embedded_broker_start()
        return super().connection_for_read(url, **kwargs)

    def connection_for_write(self, url: str | None = None, **kwargs: Any) -> Any:
        _embedded_broker_start()
        return super().connection_for_write(url, **kwargs)


def _embedded_broker_start() -> None:
    from django.conf import settings

    if settings.EMBEDDED_REDIS_DATA_DIR is not None:
        embedded.redis_start_once(data_dir=settings.EMBEDDED_REDIS_DATA_DIR)


app = GroundworkCelery("groundwork")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
