"""The answer API (``/api/v1/``): the chat page's pipeline for programs, authenticated by API
keys managed in admin. See docs/api.md."""
