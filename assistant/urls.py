from __future__ import annotations

from django.urls import path

from assistant import views
from assistant.widget import views as widget_views

app_name = "assistant"

urlpatterns = [
    path("", views.chat_page, name="chat"),
    path("ask", views.ask, name="ask"),
    path("answers/<uuid:public_id>/events", views.answer_events, name="answer-events"),
    path("answers/<uuid:public_id>/feedback", views.feedback, name="feedback"),
    path("conversations/new", views.conversation_new, name="new-conversation"),
    path("support", views.support, name="support"),
    path("embed/<str:site_key>/", widget_views.embed_frame, name="widget-frame"),
    path(
        "embed/<str:site_key>/new-conversation",
        widget_views.embed_conversation_new,
        name="widget-new-conversation",
    ),
]
