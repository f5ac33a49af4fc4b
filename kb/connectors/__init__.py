"""Connectors: upstream help centers (Zendesk Guide, Intercom) read into the index.

Each connector is one module reading one API (``zendesk``, ``intercom``) behind the
``Connector`` protocol (``base``); ``http`` is the retrying client they share, ``pagination``
walks their pages, ``documents`` turns an article into the file a folder sync would read. The
writing is the sync's (``kb.services.sync.connector``); the choice of connector is made here,
from settings, once.
"""

from __future__ import annotations

from django.conf import settings

from kb.connectors.base import Connector, ConnectorError, ConnectorNotConfigured
from kb.connectors.http import RetryPolicy

CONNECTOR_NAMES = ("zendesk", "intercom")


def retry_policy_from_settings() -> RetryPolicy:
    return RetryPolicy(
        max_attempts=settings.CONNECTOR_MAX_ATTEMPTS,
        backoff_seconds=settings.CONNECTOR_BACKOFF_SECONDS,
        max_retry_wait=settings.CONNECTOR_MAX_RETRY_WAIT,
        timeout=settings.CONNECTOR_TIMEOUT,
    )


def connector_from_settings(name: str) -> Connector:
    """The connector called ``name``, configured from settings; ``ConnectorNotConfigured``
    naming the variables to set when its credentials are missing."""
    if name == "zendesk":
        from kb.connectors.zendesk import zendesk_from_settings

        return zendesk_from_settings()
    if name == "intercom":
        from kb.connectors.intercom import intercom_from_settings

        return intercom_from_settings()
    raise ConnectorNotConfigured(
        f"no connector called {name!r}; there are {', '.join(CONNECTOR_NAMES)}"
    )


__all__ = [
    "CONNECTOR_NAMES",
    "Connector",
    "ConnectorError",
    "ConnectorNotConfigured",
    "connector_from_settings",
    "retry_policy_from_settings",
]
