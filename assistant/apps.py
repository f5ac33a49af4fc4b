from __future__ import annotations

from django.apps import AppConfig


class AssistantConfig(AppConfig):
    name = "assistant"
    verbose_name = "Assistant"

    def ready(self) -> None:
        from assistant import receivers  # noqa: F401  (answers test questions after indexing)
