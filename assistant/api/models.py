"""API keys: what a program presents to use the answer API (``/api/v1/``).

Only a hash of a key is stored. A key reads ``gw_<prefix>_<secret>``: the prefix (8 hex
characters, shown in admin and logs) finds the row, and the SHA-256 of the whole key must
match. The full key is shown once, when it is created. The secret is 32 random bytes, so a
fast hash is enough: there is nothing to guess, unlike a password.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models


class ApiKeyQuerySet(models.QuerySet["ApiKey"]):
    def active(self) -> ApiKeyQuerySet:
        return self.filter(revoked_at__isnull=True)


class ApiKey(models.Model):
    class Audience(models.TextChoices):
        PUBLIC = "public", "Public pages only"
        INTERNAL = "internal", "Public and internal pages"

    name = models.CharField(max_length=200, help_text="Who uses the key, e.g. 'Mobile app'.")
    prefix = models.CharField(max_length=8, unique=True, editable=False)
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    audience = models.CharField(
        max_length=10,
        choices=Audience.choices,
        default=Audience.PUBLIC,
        help_text="Internal pages are answered from only for a key scoped to them.",
    )
    rate_limit_per_minute = models.PositiveIntegerField(
        default=60, help_text="Requests per minute; more get HTTP 429 with Retry-After."
    )
    allowed_origins = ArrayField(
        models.CharField(max_length=255),
        default=list,
        blank=True,
        help_text="Browser origins (https://shop.example.com) that may call the API with this "
        "key; requests from other origins are refused. Programs that send no Origin header are "
        "not affected.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(
        null=True, blank=True, editable=False, help_text="Updated at most once a minute."
    )
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)

    objects = ApiKeyQuerySet.as_manager()

    class Meta:
        app_label = "assistant"
        ordering = ["-created_at"]
        verbose_name = "API key"
        indexes = [
            # A preflight asks "is this origin allowed by any active key": a containment match.
            GinIndex(fields=["allowed_origins"], name="assistant_apikey_origins"),
        ]

    def __str__(self) -> str:
        return f"{self.name} (gw_{self.prefix}_…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None
