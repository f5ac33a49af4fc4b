"""gunicorn settings for production: ``gunicorn -c config/gunicorn.conf.py config.wsgi``.

Threaded workers (gthread), because a streamed answer holds its connection for the seconds the
generator takes; a sync worker would serve one customer at a time. The worker class is gthread
with each request read by the worker's event loop before a thread runs it
(``config/gunicorn_workers.py``): slow clients then cost sockets, not threads. Everything is
tunable from the environment, as the rest of the settings are.
"""

from __future__ import annotations

import os


def _int(name: str, default: int) -> int:
    """An integer setting; a bad value stops the start with the variable's name."""
    value = os.environ.get(name, str(default))
    try:
        return int(value)
    except ValueError:
        raise SystemExit(f"{name} must be an integer (got {value!r})") from None


bind = os.environ.get("GUNICORN_BIND", f"0.0.0.0:{os.environ.get('PORT', '8000')}")
workers = _int("WEB_CONCURRENCY", 2)
worker_class = "config.gunicorn_workers.RequestBufferingWorker"
threads = _int("GUNICORN_THREADS", 8)
# Open connections per worker, slow ones still sending their request included (the worker's
# own read timeout, GUNICORN_REQUEST_READ_TIMEOUT, closes those after 20 s).
worker_connections = _int("GUNICORN_WORKER_CONNECTIONS", 1000)
# A streamed answer may take as long as the generator's timeout plus retrieval.
timeout = _int("GUNICORN_TIMEOUT", 90)
graceful_timeout = 30
keepalive = 5
# Import the app once before forking, so workers share those pages. The embedder is not part of
# it: each worker loads its own on first use (onnxruntime's threads would not survive a fork).
preload_app = os.environ.get("GUNICORN_PRELOAD", "false").lower() == "true"
# Recycle workers now and then so a slow leak cannot grow for ever.
max_requests = _int("GUNICORN_MAX_REQUESTS", 2000)
max_requests_jitter = 200
# Request lines come from Groundwork's own middleware (with request ids), not gunicorn's log.
accesslog = None
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOG_LEVEL", "info")
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")


def post_worker_init(worker: object) -> None:
    """Load the local embedding model, the reranker (the local ranking model: LightGBM's import
    is ~0.4 s) and, in the background, the question-language detector as the worker starts,
    not in the first customer's request: that customer waited seconds for it, and a worker's
    idle memory is then its memory with the model. A failure here is left for /readyz to
    report."""
    try:
        from kb.embedders import get_embedder

        embedder = get_embedder()
        if embedder.provider == "local":
            embedder.embed_query("warm up")
        from search.rerankers import get_reranker

        get_reranker()
        from assistant.languages import detector_warm_up

        detector_warm_up()  # its models take 3-4 s to load: in the background
    except Exception as exc:  # the worker must still boot and serve /readyz's reason
        import structlog

        structlog.get_logger("groundwork.web").warning("embedder_warm_up_failed", error=str(exc))
