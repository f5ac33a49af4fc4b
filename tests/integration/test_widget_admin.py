"""Embed sites in the admin: a steward adds one, its origins stored as browsers send them, and
gets the tag to paste; a bad origin is refused with the reason; doc writers have no access."""

from __future__ import annotations

import html

import pytest
from django.test import Client

from assistant.widget.models import EmbedSite

pytestmark = pytest.mark.django_db

ADD_URL = "/admin/assistant/embedsite/add/"


def test_a_steward_adds_a_site_and_gets_its_tag(steward_client: Client) -> None:
    response = steward_client.post(
        ADD_URL,
        {
            "name": "Shop",
            "allowed_origins": "HTTPS://Shop.Example.com/\n\nhttps://shop.example.com:443",
            "active": "on",
        },
    )

    assert response.status_code == 302, response.content.decode()[:2000]
    site = EmbedSite.objects.get()
    assert site.allowed_origins == "https://shop.example.com"
    assert site.site_key.startswith("site_") and len(site.site_key) > 12

    page = steward_client.get(f"/admin/assistant/embedsite/{site.pk}/change/").content.decode()
    tag = (
        f'<script src="http://testserver/static/assistant/widget.js" '
        f'data-site-key="{site.site_key}" async></script>'
    )
    assert html.escape(tag, quote=False) in page or html.escape(tag) in page
    assert 'class="button widget-tag-copy"' in page
    assert "/static/assistant/embed_site_admin.js" in page


def test_a_bad_origin_is_refused_with_the_reason(steward_client: Client) -> None:
    response = steward_client.post(
        ADD_URL,
        {"name": "Shop", "allowed_origins": "https://shop.example.com/help; script-src *"},
    )

    assert response.status_code == 200  # the form again, with the error
    assert "is not an origin" in response.content.decode()
    assert not EmbedSite.objects.exists()


def test_doc_writers_cannot_see_or_add_embed_sites(writer_client: Client) -> None:
    assert writer_client.get("/admin/assistant/embedsite/").status_code == 403
    assert writer_client.get(ADD_URL).status_code == 403
