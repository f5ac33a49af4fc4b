from __future__ import annotations

from django.urls import path

from search import views

app_name = "search"

urlpatterns = [
    path("debug/search", views.debug_search, name="debug-search"),
]
