"""Running a connector against a local stub the way the command does, with quick retries."""

from __future__ import annotations

from kb.actors import SYSTEM
from kb.connectors.http import RetryPolicy, UpstreamClient
from kb.connectors.intercom import IntercomConnector
from kb.connectors.zendesk import ZendeskConnector
from kb.embedders import Embedder
from kb.models import Document
from kb.services.sync.connector import ConnectorReport, connector_sync
from tests.support import intercom_stub, zendesk_stub

# Three attempts, short backoffs: a test of an outage should not wait out production's.
QUICK_RETRIES = RetryPolicy(max_attempts=3, backoff_seconds=0.01, max_retry_wait=5, timeout=5)


def zendesk(stub: zendesk_stub.ZendeskStub) -> ZendeskConnector:
    client = UpstreamClient(
        base_url=stub.origin,
        headers={"Authorization": stub.authorization},
        policy=QUICK_RETRIES,
    )
    return ZendeskConnector(client=client)


def intercom(stub: intercom_stub.IntercomStub, *, per_page: int = 250) -> IntercomConnector:
    client = UpstreamClient(
        base_url=stub.origin,
        headers={"Authorization": stub.authorization, "Intercom-Version": intercom_stub.VERSION},
        policy=QUICK_RETRIES,
    )
    return IntercomConnector(client=client, per_page=per_page)


def run(connector: ZendeskConnector | IntercomConnector, embedder: Embedder) -> ConnectorReport:
    return connector_sync(connector=connector, embedder=embedder, actor=SYSTEM)


def bodies(prefix: str) -> dict[str, str]:
    """Every document under ``prefix/`` by path: its body."""
    return dict(Document.objects.filter(path__startswith=f"{prefix}/").values_list("path", "body"))
