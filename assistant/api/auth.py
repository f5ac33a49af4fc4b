"""Who is calling: ``Authorization: Bearer gw_…`` names an active key, the request comes from
an origin the key allows (or from no browser at all), and the key is within its rate limit."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja.security import HttpBearer

from assistant.api.keys import (
    api_key_for_token,
    api_key_mark_used,
    origin_allowed_for_key,
)
from assistant.api.models import ApiKey
from assistant.ratelimit import api_key_rate_check


class ApiError(Exception):
    """A request the API refuses: ``status`` and a message for the person writing the client."""

    def __init__(self, status: int, message: str, *, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after = retry_after


class ApiKeyAuth(HttpBearer):
    """Sets ``request.api_key`` as soon as the key is known, before its origin and rate checks:
    the API middleware (``assistant.api.middleware``) answers a refused request for the key's own
    origins, so a browser client can read why it was refused."""

    def __call__(self, request: HttpRequest) -> ApiKey:
        header = request.headers.get("Authorization", "")
        if not header.strip():
            raise ApiError(401, "Send your API key in the header 'Authorization: Bearer <key>'.")
        scheme, _, token = header.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise ApiError(401, "The Authorization header must read 'Bearer <key>'.")
        return self.authenticate(request, token.strip())

    def authenticate(self, request: HttpRequest, token: str) -> ApiKey:
        api_key = api_key_for_token(token=token)
        if api_key is None:
            raise ApiError(401, "Unknown API key: check it was copied whole (gw_…).")
        if not api_key.is_active:
            raise ApiError(401, "This API key was revoked: ask for a new one.")
        request_any: Any = request
        request_any.api_key = api_key
        origin = request.headers.get("Origin")
        if origin and not origin_allowed_for_key(api_key, origin):
            raise ApiError(
                403,
                f"This API key may not be used from {origin[:200]}: add the origin to the key's "
                "allowed origins in admin.",
            )
        decision = api_key_rate_check(
            key_prefix=api_key.prefix, limit=api_key.rate_limit_per_minute
        )
        if not decision.allowed:
            raise ApiError(
                429,
                f"This key's limit of {api_key.rate_limit_per_minute} requests a minute is used "
                f"up: wait {decision.retry_after} seconds.",
                retry_after=decision.retry_after,
            )
        api_key_mark_used(api_key=api_key)
        return api_key
