"""The values a document's audience and status take, for the model and the front-matter parser.

Model-free choices (no app registry, no database), so ``kb.parsing``, which imports no model,
accepts exactly what ``Document`` stores: one list, not two that could drift apart.
"""

from __future__ import annotations

from django.db import models


class Audience(models.TextChoices):
    PUBLIC = "public", "Public"
    INTERNAL = "internal", "Internal"


class Status(models.TextChoices):
    DRAFT = "draft", "Draft"
    PUBLISHED = "published", "Published"
    RETIRED = "retired", "Retired"
