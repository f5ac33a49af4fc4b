from __future__ import annotations

from django.urls import path

from kb import views

app_name = "kb"

urlpatterns = [
    path("", views.document_index, name="index"),
    path("<path:path>", views.document_detail, name="document"),
]
