"""Where "Contact support" leads: ``SUPPORT_CONTACT_URL`` when the deployment has a help desk of
its own, else the chat's support form (``/support``), whose requests staff read in the admin."""

from __future__ import annotations

from django.conf import settings
from django.urls import reverse


def support_contact_url() -> str:
    return settings.SUPPORT_CONTACT_URL or reverse("assistant:support")


def support_form_used() -> bool:
    """Whether "Contact support" opens the built-in form (which htmx can open in the page)."""
    return not settings.SUPPORT_CONTACT_URL
