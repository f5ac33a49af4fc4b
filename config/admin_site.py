"""The project's admin site: Django's, plus the admin pages that belong to no model.

``config.apps.GroundworkAdminConfig`` makes it the default site, so ``admin.site`` (where every
app registers its models) is this class, and its URLs are fixed here in one list instead of by
each app reassigning ``admin.site.get_urls`` in whatever order the apps were imported.
"""

from __future__ import annotations

from django.contrib import admin
from django.urls import URLPattern, URLResolver, path


class GroundworkAdminSite(admin.AdminSite):
    def get_urls(self) -> list[URLPattern | URLResolver]:
        """The search lab, content gaps, policies needing attention and analytics ahead of the
        admin's catch-all patterns, behind its login, staff check and ``never_cache``
        (``admin_view``)."""
        # Imported here, not at the top: the apps' admin modules register on this site while
        # it is being built, so importing them first would build it from inside itself.
        from assistant.admin import content_gaps_admin_view
        from assistant.analytics.views import analytics_view
        from assistant.attention_admin import policies_attention_view
        from assistant.attention_retire_admin import (
            attention_retire_undo_view,
            attention_retire_view,
        )
        from assistant.test_questions_admin import test_questions_draft_view
        from search.admin import search_lab

        return [
            path("search-lab/", self.admin_view(search_lab), name="search-lab"),
            path("content-gaps/", self.admin_view(content_gaps_admin_view), name="content-gaps"),
            path("attention/", self.admin_view(policies_attention_view), name="attention"),
            path("analytics/", self.admin_view(analytics_view), name="analytics"),
            path(
                "attention/retire/",
                self.admin_view(attention_retire_view),
                name="attention-retire",
            ),
            path(
                "attention/undo/",
                self.admin_view(attention_retire_undo_view),
                name="attention-retire-undo",
            ),
            path(
                "test-questions/<int:document_id>/draft/",
                self.admin_view(test_questions_draft_view),
                name="test-questions-draft",
            ),
            *super().get_urls(),
        ]
