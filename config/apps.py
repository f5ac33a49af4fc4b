from __future__ import annotations

from django.apps import AppConfig


class ConfigConfig(AppConfig):
    """Wiring only: hosts the commands that run the embedded servers and the demo."""

    name = "config"
    label = "groundwork_config"
    verbose_name = "Groundwork configuration"

    def ready(self) -> None:
        from config.logging import configure_structlog

        configure_structlog()
