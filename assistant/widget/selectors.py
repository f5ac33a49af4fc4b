"""Reads for the widget."""

from __future__ import annotations

from assistant.widget.models import SITE_KEY_MAX_LENGTH, EmbedSite


def embed_site_for_key(*, site_key: str) -> EmbedSite | None:
    """The site a widget tag names, switched on or off (the caller says which refusal to give);
    None when no site has that key."""
    if len(site_key) > SITE_KEY_MAX_LENGTH:  # cannot be one; no query
        return None
    return EmbedSite.objects.filter(site_key=site_key).first()
