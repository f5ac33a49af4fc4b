"""API keys: created, found, used and revoked here, and what a key may read.

Services (``api_key_create``, ``api_key_revoke``, ``api_key_mark_used``) take the acting user
where a permission applies; the admin and the API views only call them.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import re
import secrets
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass

import structlog
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Q
from django.utils import timezone

from assistant.api.models import ApiKey
from assistant.services import client_key_hash
from kb.actors import Actor
from kb.models import Document
from kb.selectors.access import ALL_AUDIENCES, PUBLIC_AUDIENCES, audiences_for

log = structlog.get_logger("groundwork.api")

KEY_FORMAT = re.compile(r"gw_(?P<prefix>[0-9a-f]{8})_(?P<secret>[A-Za-z0-9_-]{43})")
# last_used_at is a hint for "is this key still in use", not an audit log: one write a minute
# per key at most, so a busy key does not turn every request into an UPDATE.
LAST_USED_RESOLUTION = datetime.timedelta(minutes=1)
MAX_ORIGINS = 50


@dataclass(frozen=True)
class NewApiKey:
    """A key just created: ``key`` is the only copy of the full key there will ever be."""

    api_key: ApiKey
    key: str


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def origin_normalise(origin: str) -> str:
    """``https://Shop.example.com/`` → ``https://shop.example.com``: the form a browser sends in
    its Origin header. Raises ``ValidationError`` for anything that is not an origin."""
    text = origin.strip()
    parts = urllib.parse.urlsplit(text)
    try:
        port = parts.port
    except ValueError:
        port = -1
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.username is not None
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
        or port == -1
    ):
        raise ValidationError(
            f"{text[:100]!r} is not an origin: write scheme and host, e.g. "
            "https://shop.example.com (a port may follow; no path)."
        )
    host = parts.hostname.lower()
    if ":" in host:  # an IPv6 address keeps its brackets
        host = f"[{host}]"
    default_port = {"http": 80, "https": 443}[parts.scheme]
    suffix = f":{port}" if port is not None and port != default_port else ""
    return f"{parts.scheme}://{host}{suffix}"


def origins_clean(origins: Iterable[str]) -> list[str]:
    """The allowed origins as stored: normalised, without duplicates, in the order given."""
    cleaned = list(dict.fromkeys(origin_normalise(o) for o in origins if o.strip()))
    if len(cleaned) > MAX_ORIGINS:
        raise ValidationError(f"At most {MAX_ORIGINS} origins per key.")
    return cleaned


def api_key_scope_check(*, actor: Actor, audience: str) -> None:
    # A key reads what its audience allows; only someone who may read internal pages may hand
    # out a key that reads them (audiences_for is the one rule for who reads what).
    if audience not in ApiKey.Audience.values:
        raise ValidationError(f"Unknown audience {audience!r}: choose public or internal.")
    if audience == ApiKey.Audience.INTERNAL and Document.Audience.INTERNAL not in audiences_for(
        actor
    ):
        raise PermissionDenied(
            "Only staff who may read internal pages can create a key scoped to them."
        )


def api_key_create(
    *,
    actor: Actor,
    name: str,
    audience: str = ApiKey.Audience.PUBLIC,
    rate_limit_per_minute: int = 60,
    allowed_origins: Iterable[str] = (),
) -> NewApiKey:
    api_key_scope_check(actor=actor, audience=audience)
    if rate_limit_per_minute < 1:
        raise ValidationError("The rate limit must be at least 1 request per minute.")
    origins = origins_clean(allowed_origins)
    while True:  # 2^32 prefixes: a clash is rare, and the unique index would catch it anyway
        prefix = secrets.token_hex(4)
        if not ApiKey.objects.filter(prefix=prefix).exists():
            break
    key = f"gw_{prefix}_{secrets.token_urlsafe(32)}"
    api_key = ApiKey.objects.create(
        name=name.strip() or "API key",
        prefix=prefix,
        key_hash=_hash(key),
        audience=audience,
        rate_limit_per_minute=rate_limit_per_minute,
        allowed_origins=origins,
        created_by=actor if isinstance(actor, User) else None,
    )
    log.info("api_key_created", prefix=prefix, audience=audience, origins=len(origins))
    return NewApiKey(api_key=api_key, key=key)


def api_key_revoke(*, api_key: ApiKey, actor: Actor) -> bool:
    """Revoke the key from now on; False when it was revoked already (the first time stays)."""
    revoked = ApiKey.objects.filter(pk=api_key.pk, revoked_at__isnull=True).update(
        revoked_at=timezone.now()
    )
    api_key.refresh_from_db(fields=["revoked_at"])
    if revoked:
        log.info("api_key_revoked", prefix=api_key.prefix, by=getattr(actor, "pk", "system"))
    return bool(revoked)


def api_key_for_token(*, token: str) -> ApiKey | None:
    """The key this token is, revoked or not (the caller says which), or None. The hash is
    compared in constant time, so timing does not tell how much of a guess was right."""
    match = KEY_FORMAT.fullmatch(token)
    if match is None:
        return None
    api_key = ApiKey.objects.filter(prefix=match["prefix"]).first()
    if api_key is None or not hmac.compare_digest(api_key.key_hash, _hash(token)):
        return None
    return api_key


def api_key_mark_used(*, api_key: ApiKey) -> None:
    now = timezone.now()
    if api_key.last_used_at and now - api_key.last_used_at < LAST_USED_RESOLUTION:
        return
    ApiKey.objects.filter(pk=api_key.pk).filter(
        Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - LAST_USED_RESOLUTION)
    ).update(last_used_at=now)
    api_key.last_used_at = now


def api_key_audiences(api_key: ApiKey) -> tuple[str, ...]:
    """The audiences whose pages this key's answers, searches and streams may draw on."""
    return ALL_AUDIENCES if api_key.audience == ApiKey.Audience.INTERNAL else PUBLIC_AUDIENCES


def api_key_client_hash(api_key: ApiKey) -> str:
    """The client a key's conversations belong to: one key never continues another's thread,
    nor a browser's (the page's clients hash a session token the same way)."""
    return client_key_hash(f"api-key:{api_key.pk}")


def origin_allowed_by_any_key(origin: str) -> bool:
    """For a preflight, which carries no key: may any active key be used from ``origin``? The
    real request then checks its own key's origins."""
    try:
        origin = origin_normalise(origin)
    except ValidationError:
        return False
    return ApiKey.objects.active().filter(allowed_origins__contains=[origin]).exists()


def origin_allowed_for_key(api_key: ApiKey, origin: str) -> bool:
    try:
        return origin_normalise(origin) in api_key.allowed_origins
    except ValidationError:
        return False
