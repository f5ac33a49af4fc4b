from __future__ import annotations

from django.urls import path

from assistant.api.views import api

urlpatterns = [path("", api.urls)]
