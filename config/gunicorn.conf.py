"""gunicorn settings for production: ``gunicorn -c config/gunicorn.conf.py config.wsgi``.

Threaded workers (gthread), because a streamed answer holds its connection for the seconds the
generator takes; a sync worker would serve one customer at a time. Everything is tunable from
the environment, as the rest of the settings are.
"""

from __future__ import annotations

import os

bind = os.environ.get("GUNICORN_BIND", f"0.0.0.0:{os.environ.get('PORT', '8000')}")
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
worker_class = "gthread"
threads = int(os.environ.get("GUNICORN_THREADS", "8"))
# A streamed answer may take as long as the generator's timeout plus retrieval.
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "90"))
graceful_timeout = 30
keepalive = 5
# Load the app (and the local embedder) once before forking; workers share its pages.
preload_app = os.environ.get("GUNICORN_PRELOAD", "false").lower() == "true"
# Recycle workers now and then so a slow leak cannot grow for ever.
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "2000"))
max_requests_jitter = 200
# Request lines come from Groundwork's own middleware (with request ids), not gunicorn's log.
accesslog = None
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOG_LEVEL", "info")
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
