"""Embed sites in the admin: the site key, the origins allowed to show the widget, and the tag
to paste into those pages, with a button that copies it."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.templatetags.static import static
from django.utils.html import escape, format_html

from assistant.widget.models import EmbedSite


def widget_tag(*, site: EmbedSite, base_url: str) -> str:
    """The one line a site's pages need. ``base_url`` is this server's public address (the
    admin page's own): the script and the frame it opens are served from there."""
    script = escape(base_url.rstrip("/") + static("assistant/widget.js"))
    # Text (HTML to paste), not markup for this page: the template escapes it once more.
    return f'<script src="{script}" data-site-key="{escape(site.site_key)}" async></script>'


@admin.register(EmbedSite)
class EmbedSiteAdmin(admin.ModelAdmin):
    """Which websites may show the widget. Saving an origin list takes effect on the next
    page view of those sites; switching a site off refuses its widget everywhere."""

    list_display = ["name", "site_key", "origin_list", "active", "updated_at"]
    list_filter = ["active"]
    search_fields = ["name", "site_key", "allowed_origins"]
    fields = ["name", "allowed_origins", "active", "site_key", "created_at", "updated_at"]
    readonly_fields = ["site_key", "created_at", "updated_at"]
    change_form_template = "admin/assistant/embedsite/change_form.html"

    class Media:
        js = ["assistant/embed_site_admin.js"]

    @admin.display(description="Allowed origins")
    def origin_list(self, obj: EmbedSite) -> str:
        return format_html("{}", ", ".join(obj.origins))

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        site = self.get_object(request, object_id)
        context = dict(extra_context or {})
        if site is not None:
            context["widget_tag"] = widget_tag(site=site, base_url=request.build_absolute_uri("/"))
        return super().change_view(request, object_id, form_url, extra_context=context)
