from __future__ import annotations

from django.apps import AppConfig
from django.contrib.admin.apps import AdminConfig


class ConfigConfig(AppConfig):
    """Wiring only: hosts the commands that run the embedded servers and the demo."""

    name = "config"
    label = "groundwork_config"
    verbose_name = "Groundwork configuration"

    def ready(self) -> None:
        from config.logging import configure_structlog

        configure_structlog()


class GroundworkAdminConfig(AdminConfig):
    """``django.contrib.admin`` with ``config.admin_site.GroundworkAdminSite`` as ``admin.site``."""

    default_site = "config.admin_site.GroundworkAdminSite"
