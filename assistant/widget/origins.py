"""What an allowed origin is, and whether a page's origin matches one.

The list goes verbatim into a response header (``frame-ancestors``), so it is parsed strictly:
a value that is not exactly ``scheme://host[:port]`` is refused with the reason, never passed
on, because a stray ``;`` or space would add a directive or a source of someone else's choosing.
"""

from __future__ import annotations

import re

# scheme://host[:port]; the host a DNS name (optionally under "*." as CSP allows), an IPv4
# address or a bracketed IPv6 address. Lower-case ASCII only: an IDN is entered as punycode.
_ORIGIN = re.compile(
    r"(?P<scheme>https?)://"
    r"(?P<host>(?:\*\.)?[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*"
    r"|\[[0-9a-f:.]+\])"
    r"(?::(?P<port>[0-9]{1,5}))?"
)
_DEFAULT_PORTS = {"http": "80", "https": "443"}


class OriginInvalid(ValueError):
    """A line of the allowed-origins list that is not an origin; the message says which and why."""


def origin_parse(value: str) -> str:
    """``value`` as the origin a browser sends (``https://shop.example.com``), or
    ``OriginInvalid``. A trailing ``/`` is dropped and a default port (``:443`` on https) too,
    as browsers do, so the list holds each origin in one spelling."""
    text = value.strip()
    if text.endswith("/"):
        text = text[:-1]
    lowered = text.lower()
    match = _ORIGIN.fullmatch(lowered)
    if not match:
        raise OriginInvalid(
            f"{value.strip()!r} is not an origin: write scheme://host or scheme://host:port "
            "(for example https://www.example.com), with no path, spaces or quotes; "
            "a name in another alphabet as its punycode (xn--...)"
        )
    port = match.group("port")
    if port is not None and not 0 < int(port) < 65536:
        raise OriginInvalid(f"{value.strip()!r} has a port outside 1-65535")
    if port == _DEFAULT_PORTS[match.group("scheme")]:
        return f"{match.group('scheme')}://{match.group('host')}"
    return lowered


def origins_parse(text: str) -> list[str]:
    """The allowed-origins field (one origin per line, blank lines ignored) as a list without
    repeats, in the order written; ``OriginInvalid`` names every line that is not an origin."""
    origins: list[str] = []
    problems: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            origin = origin_parse(line)
        except OriginInvalid as exc:
            problems.append(str(exc))
            continue
        if origin not in origins:
            origins.append(origin)
    if problems:
        raise OriginInvalid("; ".join(problems))
    return origins


def origin_matches(origin: str, *, allowed: list[str]) -> bool:
    """Whether a page at ``origin`` is covered by ``allowed`` as ``frame-ancestors`` would
    cover it: the same scheme, host and port, or a subdomain of a ``*.`` entry."""
    try:
        candidate = origin_parse(origin)
    except OriginInvalid:
        return False
    for entry in allowed:
        if candidate == entry:
            return True
        scheme, _, rest = entry.partition("://")
        if rest.startswith("*."):
            suffix = rest[1:]  # ".example.com" or ".example.com:8443"
            c_scheme, _, c_rest = candidate.partition("://")
            c_host, _, c_port = c_rest.partition(":")
            e_host, _, e_port = suffix.partition(":")
            if c_scheme == scheme and c_host.endswith(e_host) and c_port == e_port:
                return True
    return False
