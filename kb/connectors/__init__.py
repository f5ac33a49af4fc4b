"""Connectors: upstream help centers (Zendesk Guide, Intercom, a website) read into the index.

Each connector is one module reading one API (``zendesk``, ``intercom``) behind the
``Connector`` protocol (``base``); ``http`` is the retrying client they share, ``pagination``
walks their pages, ``documents`` turns an article into the file a folder sync would read. The
writing is the sync's (``kb.services.sync.connector``); the choice of connector is made here,
from settings, once.
"""

from __future__ import annotations

from collections.abc import Callable

from kb.connectors.base import Connector, ConnectorError, ConnectorNotConfigured
from kb.connectors.intercom import intercom_from_settings
from kb.connectors.website import website_from_settings
from kb.connectors.zendesk import zendesk_from_settings

_FACTORIES: dict[str, Callable[[], Connector]] = {
    "zendesk": zendesk_from_settings,
    "intercom": intercom_from_settings,
    "website": website_from_settings,
}
CONNECTOR_NAMES = tuple(_FACTORIES)


def connector_from_settings(name: str) -> Connector:
    """The connector called ``name``, configured from settings; ``ConnectorNotConfigured``
    naming the variables to set when its credentials are missing."""
    factory = _FACTORIES.get(name)
    if factory is None:
        raise ConnectorNotConfigured(
            f"no connector called {name!r}; there are {', '.join(CONNECTOR_NAMES)}"
        )
    return factory()


__all__ = [
    "CONNECTOR_NAMES",
    "Connector",
    "ConnectorError",
    "ConnectorNotConfigured",
    "connector_from_settings",
]
