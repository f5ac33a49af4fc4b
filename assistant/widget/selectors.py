"""Reads for the widget."""

from __future__ import annotations

from assistant.widget.models import EmbedSite


def embed_site_for_key(*, site_key: str) -> EmbedSite | None:
    """The site a widget tag names, switched on or off (the caller says which refusal to give);
    None when no site has that key."""
    if len(site_key) > EmbedSite._meta.get_field("site_key").max_length:  # type: ignore[operator]
        return None
    return EmbedSite.objects.filter(site_key=site_key).first()
