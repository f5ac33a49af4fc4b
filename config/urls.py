from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

from config import health

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("admin/", admin.site.urls),
    path("docs/", include("kb.urls")),
    path("api/v1/", include("assistant.api.urls")),
    path("", include("search.urls")),
    path("", include("assistant.urls")),
]
