"""A site key: one website allowed to show the widget, and the origins its pages are served from."""

from __future__ import annotations

import secrets

from django.core.exceptions import ValidationError
from django.db import models

from assistant.widget.origins import OriginInvalid, origins_parse

SITE_KEY_MAX_LENGTH = 40


def site_key_new() -> str:
    # Public (it is in the host page's HTML); random so that one site's key cannot be guessed
    # from another's and a key switched off is not reused by a new site.
    return f"site_{secrets.token_urlsafe(12)}"


def validate_allowed_origins(value: str) -> None:
    try:
        origins_parse(value)
    except OriginInvalid as exc:
        raise ValidationError(str(exc), code="invalid_origin") from None


class EmbedSiteQuerySet(models.QuerySet["EmbedSite"]):
    def serving(self) -> EmbedSiteQuerySet:
        """Sites whose widget is shown: switched on. (One with no origins is served to none.)"""
        return self.filter(active=True)


class EmbedSite(models.Model):
    """Which pages may embed the chat: the widget's ``<script>`` tag names ``site_key``, and the
    chat it opens may be framed only by ``allowed_origins`` (one per line, as the browser sends
    them: ``https://www.example.com``). Switching a site off refuses its widget everywhere at once.
    """

    name = models.CharField(max_length=100, help_text="Which website this is, for staff.")
    site_key = models.CharField(
        max_length=SITE_KEY_MAX_LENGTH, unique=True, default=site_key_new, editable=False
    )
    allowed_origins = models.TextField(
        validators=[validate_allowed_origins],
        help_text=(
            "One origin per line, as scheme://host[:port] with no path, for example "
            "https://www.example.com (https://*.example.com covers its subdomains). Only pages "
            "served from these may show the widget; every other site is refused."
        ),
    )
    active = models.BooleanField(default=True, help_text="Off: the widget is refused everywhere.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = EmbedSiteQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        verbose_name = "embed site"

    def __str__(self) -> str:
        return self.name

    def save(self, *args: object, **kwargs: object) -> None:
        # Stored in one spelling (lower case, no trailing slash or default port, no repeats):
        # what the admin shows is exactly what goes into the header.
        self.allowed_origins = "\n".join(origins_parse(self.allowed_origins))
        super().save(*args, **kwargs)  # type: ignore[arg-type]

    @property
    def origins(self) -> list[str]:
        return origins_parse(self.allowed_origins)
