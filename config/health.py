"""Liveness and readiness for load balancers and orchestrators.

``/healthz`` answers as long as the process serves requests. ``/readyz`` answers 200 only when
this instance can answer a customer: the database and pgvector are there, the active embedding
model's embedder loads and produces vectors of the indexed dimension, the index holds chunks,
and the broker (which carries every indexing job) is reachable. Each failed check says why.

The checks name the PostgreSQL, pgvector and model versions, which tell an attacker what to look
up, so anyone gets the status (and the status code, all a load balancer needs), and only staff
or a probe on this machine get the checks. A request relayed by a proxy on this machine comes
from loopback too; the forwarding headers such a proxy adds mark it as someone else's.
"""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Callable

import structlog
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from kb.errors import one_line, shortened

log = structlog.get_logger("groundwork.health")

BROKER_TIMEOUT_SECONDS = 2.0
FORWARDING_HEADERS = ("HTTP_X_FORWARDED_FOR", "HTTP_FORWARDED", "HTTP_X_REAL_IP")


class NotReady(RuntimeError):
    """A readiness check failed; the message is the reason shown to operators."""


@require_GET
@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


@require_GET
@never_cache
def readyz(request: HttpRequest) -> JsonResponse:
    checks: dict[str, dict[str, object]] = {}
    for name, check in READINESS_CHECKS:
        started = time.perf_counter()
        try:
            detail = check()
            ok = True
        except Exception as exc:  # every failure is a reason, never a 500
            detail, ok = _reason(exc), False
        checks[name] = {
            "ok": ok,
            "detail": detail,
            "ms": round((time.perf_counter() - started) * 1000, 1),
        }
    ready = all(check["ok"] for check in checks.values())
    if not ready:
        failed = {name: check["detail"] for name, check in checks.items() if not check["ok"]}
        log.warning("not_ready", **failed)
    body: dict[str, object] = {"status": "ok" if ready else "fail"}
    if _may_see_checks(request):
        body["checks"] = checks
    return JsonResponse(body, status=200 if ready else 503)


def _may_see_checks(request: HttpRequest) -> bool:
    user = getattr(request, "user", None)
    if user is not None and user.is_active and user.is_staff:
        return True
    if any(header in request.META for header in FORWARDING_HEADERS):
        return False
    try:
        return ipaddress.ip_address(request.META.get("REMOTE_ADDR", "")).is_loopback
    except ValueError:
        return False


def _reason(exc: BaseException) -> str:
    """A ``NotReady`` message is already the reason; any other failure says what it was."""
    if isinstance(exc, NotReady):
        return str(exc)
    return shortened(one_line(exc))


def check_database() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('server_version')")
        (version,) = cursor.fetchone()
    return f"PostgreSQL {version}"


def check_pgvector() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        row = cursor.fetchone()
    if row is None:
        raise NotReady("the pgvector extension is not installed in this database")
    return f"pgvector {row[0]}"


def check_embedding_model() -> str:
    from kb.embedders import embedder_for
    from kb.models import EmbeddingModel

    model = EmbeddingModel.objects.active().first()
    if model is None:
        raise NotReady("no active embedding model: run kb_sync (or kb_models) first")
    embedder = embedder_for(model.key)
    if embedder.dimensions != model.dimensions:
        raise NotReady(
            f"{model.key} produces {embedder.dimensions} dimensions, the index holds "
            f"{model.dimensions}"
        )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT vector_dims(embedding) FROM kb_chunk WHERE embedding_model_id = %s LIMIT 1",
            [model.pk],
        )
        row = cursor.fetchone()
    if row is None:
        raise NotReady(f"the index is empty: {model.key} has no chunks")
    if row[0] != model.dimensions:
        raise NotReady(
            f"indexed vectors have {row[0]} dimensions, {model.key} has {model.dimensions}"
        )
    if embedder.provider == "local":
        # A local model is loaded in this process: prove it runs (about 10 ms).
        vector = embedder.embed_query("readiness probe")
        if vector.shape != (model.dimensions,):
            raise NotReady(f"{model.key} returned a vector of shape {vector.shape}")
    return f"{model.key} ({model.dimensions} dimensions)"


def check_broker() -> str:
    from config.celery_app import app

    with app.connection_for_write() as broker:
        broker.ensure_connection(max_retries=1, timeout=BROKER_TIMEOUT_SECONDS)
        return f"{broker.transport_cls} reachable"


READINESS_CHECKS: list[tuple[str, Callable[[], str]]] = [
    ("database", check_database),
    ("pgvector", check_pgvector),
    ("embedding_model", check_embedding_model),
    ("broker", check_broker),
]
