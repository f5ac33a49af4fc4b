from __future__ import annotations

from django.apps import AppConfig


class KbConfig(AppConfig):
    name = "kb"
    verbose_name = "Knowledge base"

    def ready(self) -> None:
        from kb import signals  # noqa: F401  (connects the post-save indexing request)
