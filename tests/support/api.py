"""Shared pieces of the answer API's tests: keys, headers, and reading an event stream."""

from __future__ import annotations

import json
import re
from typing import Any

from django.http import StreamingHttpResponse

from assistant.api.keys import api_key_create
from assistant.api.models import ApiKey
from kb.actors import SYSTEM

SSE_EVENT = re.compile(r"event: (?P<name>\w+)\n(?P<data>(?:data: .*\n)+)\n")


def new_key(
    *,
    audience: str = ApiKey.Audience.PUBLIC,
    rate_limit_per_minute: int = 1000,
    allowed_origins: tuple[str, ...] = (),
    name: str = "test client",
) -> tuple[ApiKey, str]:
    created = api_key_create(
        actor=SYSTEM,
        name=name,
        audience=audience,
        rate_limit_per_minute=rate_limit_per_minute,
        allowed_origins=allowed_origins,
    )
    return created.api_key, created.key


def bearer(key: str, **extra: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {key}", **extra}


def post_json(client: Any, path: str, body: Any, key: str | None = None, **extra: str) -> Any:
    headers = bearer(key, **extra) if key is not None else extra
    return client.post(path, json.dumps(body), content_type="application/json", **headers)


def stream_events(response: StreamingHttpResponse) -> tuple[str, list[tuple[str, Any]]]:
    """The raw body and its events, each with its data parsed as JSON."""
    body = b"".join(response.streaming_content).decode()
    events = []
    for match in SSE_EVENT.finditer(body):
        lines = [line[len("data: ") :] for line in match.group("data").splitlines()]
        events.append((match.group("name"), json.loads("\n".join(lines))))
    return body, events
