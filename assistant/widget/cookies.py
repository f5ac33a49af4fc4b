"""Cookies the widget's frame can keep on another site: ``SameSite=None; Secure; Partitioned``.

A browser that blocks third-party cookies (Chromium as tested here; Safari and Firefox by
default) drops a frame's ``SameSite=None`` cookies unless they are also ``Partitioned`` (CHIPS):
kept apart per top-level site, so the widget on shop.example has its own session there, which is
all the chat needs. Django 5.2 and Python 3.11's ``http.cookies`` have no ``partitioned``
attribute; this middleware adds it to every ``SameSite=None`` cookie a response sets.
"""

from __future__ import annotations

from collections.abc import Callable
from http.cookies import Morsel

from django.http import HttpRequest, HttpResponse


class PartitionedMorsel(Morsel[str]):
    """A cookie whose ``Set-Cookie`` line ends with ``; Partitioned``."""

    def OutputString(self, attrs: list[str] | None = None) -> str:
        return super().OutputString(attrs) + "; Partitioned"


def cookie_partitioned(morsel: Morsel[str]) -> PartitionedMorsel:
    partitioned = PartitionedMorsel()
    partitioned.set(morsel.key, morsel.value, morsel.coded_value)
    partitioned.update({key: value for key, value in morsel.items() if value})
    return partitioned


class PartitionedCookieMiddleware:
    """Marks ``Partitioned`` every cookie of a response that is ``SameSite=None`` (the setting
    for a widget on another site, docs/widget.md); with Lax cookies it changes nothing."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        for key, morsel in list(response.cookies.items()):
            if str(morsel["samesite"]).lower() == "none" and not isinstance(
                morsel, PartitionedMorsel
            ):
                dict.__setitem__(response.cookies, key, cookie_partitioned(morsel))
        return response
