"""The frame's Content-Security-Policy: the site's policy with ``frame-ancestors`` opened to
exactly one site key's origins. Every other response keeps the site's ``frame-ancestors 'none'``
(``ContentSecurityPolicyMiddleware`` only sets the header when a view has not)."""

from __future__ import annotations

from django.conf import settings


def frame_policy(*, origins: list[str]) -> str:
    """``settings.CONTENT_SECURITY_POLICY`` with its ``frame-ancestors`` replaced by ``origins``
    ('none' when empty). The origins come from ``origins_parse``, which admits no ``;``, space or
    quote, so they cannot add a directive or a source."""
    ancestors = " ".join(origins) if origins else "'none'"
    directives = [part.strip() for part in settings.CONTENT_SECURITY_POLICY.split(";")]
    kept = [part for part in directives if part and not part.startswith("frame-ancestors")]
    return "; ".join([*kept, f"frame-ancestors {ancestors}"])
