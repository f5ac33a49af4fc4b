"""Django's PostgreSQL engine for the embedded server, which it starts on first connection
(``ENGINE = "kb.runtime.postgres"``; the backend is in ``base``, where Django looks for it)."""
