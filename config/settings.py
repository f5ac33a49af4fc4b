"""Settings, read from the environment in this one place.

Defaults run on a laptop with nothing installed: when ``DATABASE_URL`` / ``CELERY_BROKER_URL``
are not set, an embedded PostgreSQL + pgvector and an embedded Redis start by themselves at the
first database and broker (or cache) connection of a process (``kb.runtime.embedded``); reading
these settings starts nothing. Production (``GROUNDWORK_ENV=production``) refuses the unsafe
defaults instead of running with them.
"""

from __future__ import annotations

import os
import re
import warnings
from pathlib import Path
from urllib.parse import unquote, urlsplit

import environ
from django.core.exceptions import ImproperlyConfigured
from kombu import Queue

from kb.runtime import embedded

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()  # strings, lists and URLs; numbers and flags go through the helpers below

_TRUE_WORDS = ("true", "on", "yes", "y", "ok", "1")
_FALSE_WORDS = ("false", "off", "no", "n", "0", "")


def env_int(name: str, *, default: int, minimum: int | None = None) -> int:
    """``name`` as an integer. A value that is not one stops the start with a line naming the
    variable (``int()``'s own error names only the value, under a traceback)."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer (got {raw!r})") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be an integer of at least {minimum} (got {raw!r})")
    return value


def env_float(name: str, *, default: float) -> float:
    """``name`` as a number; anything else stops the start with a line naming the variable."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        return float(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number (got {raw!r})") from None


def env_bool(name: str, *, default: bool) -> bool:
    """``name`` as true/false (also on/off, yes/no, 1/0). A word that is neither stops the start:
    django-environ would read a typo such as ``DJANGO_DEBUG=flase`` as false without a word."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    word = raw.strip().lower()
    if word in _TRUE_WORDS:
        return True
    if word in _FALSE_WORDS:
        return False
    raise ImproperlyConfigured(f"{name} must be true or false (got {raw!r})")


ENVIRONMENTS = ("development", "test", "production")
GROUNDWORK_ENV = env.str("GROUNDWORK_ENV", default="development")
if GROUNDWORK_ENV not in ENVIRONMENTS:
    raise ImproperlyConfigured(
        f"GROUNDWORK_ENV must be one of {', '.join(ENVIRONMENTS)} (got {GROUNDWORK_ENV!r})"
    )
PRODUCTION = GROUNDWORK_ENV == "production"

_INSECURE_SECRET_KEY = "insecure-development-key-do-not-use-in-production"
SECRET_KEY = env.str("DJANGO_SECRET_KEY", default=_INSECURE_SECRET_KEY)
DEBUG = env_bool("DJANGO_DEBUG", default=not PRODUCTION)
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])
# The website widget's frame on another site (not a subdomain of ours) gets its session and CSRF
# cookies only when they are SameSite=None, which browsers accept only with Secure (HTTPS):
# docs/widget.md. Lax (Django's default) serves the chat page and same-site embeds.
_SAME_SITE_VALUES = ("Lax", "Strict", "None")
SESSION_COOKIE_SAMESITE = env.str("SESSION_COOKIE_SAMESITE", default="Lax")
CSRF_COOKIE_SAMESITE = env.str("CSRF_COOKIE_SAMESITE", default="Lax")
# Off outside production unless set (a plain-HTTP laptop); production turns them on (below).
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", default=False)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", default=False)
for _name, _value in (
    ("SESSION_COOKIE_SAMESITE", SESSION_COOKIE_SAMESITE),
    ("CSRF_COOKIE_SAMESITE", CSRF_COOKIE_SAMESITE),
):
    if _value not in _SAME_SITE_VALUES:
        raise ImproperlyConfigured(f"{_name} must be Lax, Strict or None (got {_value!r})")

# The embedded servers' data (PostgreSQL cluster, Redis append-only file).
DATA_DIR = Path(env.str("GROUNDWORK_DATA_DIR", default=str(BASE_DIR / ".data"))).resolve()

INSTALLED_APPS = [
    "config.apps.GroundworkAdminConfig",  # django.contrib.admin with the project's admin site
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "simple_history",
    "django_htmx",
    "axes",  # admin sign-in throttling and lockout (AXES_* below)
    "ninja",  # the answer API's schema page, from its bundled static files (no CDN)
    "config.apps.ConfigConfig",
    "kb",
    "search",
    "assistant",
]

MIDDLEWARE = [
    "config.middleware.RequestIdMiddleware",
    "assistant.api.middleware.ApiMiddleware",  # /api/ only: CORS for keys' origins, JSON errors
    # Outside the session and CSRF middleware, so it sees the cookies they set.
    "assistant.widget.cookies.PartitionedCookieMiddleware",
    "config.middleware.ContentSecurityPolicyMiddleware",
    "config.middleware.RequestCharsetMiddleware",
    "config.middleware.NulCharacterMiddleware",
    "config.middleware.DatabaseUnavailableMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as django-axes asks: it answers a locked-out sign-in
]

# --- Sign-in throttling (django-axes) ---------------------------------------------------------
# Failed admin sign-ins are counted per account and, separately, per address (REMOTE_ADDR, as
# the ask rate limit: a header a client sets is not an address); at AXES_FAILURE_LIMIT either
# is locked out for AXES_COOLOFF_TIME, the right password included. Each failure and lockout is
# logged (logger "axes") and recorded as an access attempt, which a policy steward can delete in
# admin to unlock at once (permissions granted by kb migration 0012).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("AXES_FAILURE_LIMIT", default=5, minimum=1)
AXES_COOLOFF_TIME = env_int("AXES_COOLOFF_MINUTES", default=15, minimum=1) / 60  # hours
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_RESET_ON_SUCCESS = True
AXES_USERNAME_CALLABLE = "kb.actors.sign_in_username"
AXES_COOLOFF_MESSAGE = (
    "Too many failed sign-ins for this account or from this address. Try again later, or ask "
    "a policy steward to unlock it (admin, Axes, Access attempts)."
)

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------------
if "DATABASE_URL" in env:
    DATABASES = {"default": env.db_url("DATABASE_URL")}
    # django-environ leaves a percent-encoded unix socket path (postgres://%2Frun%2Fpg/db) as is.
    DATABASES["default"]["HOST"] = unquote(DATABASES["default"].get("HOST") or "")
    if DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        raise ImproperlyConfigured("DATABASE_URL must point to PostgreSQL (with pgvector)")
elif PRODUCTION:
    raise ImproperlyConfigured(
        "DATABASE_URL is required in production (PostgreSQL with the pgvector extension)"
    )
else:
    # The embedded server starts at the first connection and fills in HOST and PORT then.
    DATABASES = {
        "default": {
            "ENGINE": "kb.runtime.postgres",
            "NAME": embedded.DATABASE_NAME,
            "USER": embedded.DATABASE_USER,
            "HOST": "",
            "PORT": "",
            "EMBEDDED_DATA_DIR": DATA_DIR,
            "EMBEDDED_SHARED_BUFFERS": env.str(
                "EMBEDDED_POSTGRES_SHARED_BUFFERS", default=embedded.DEFAULT_SHARED_BUFFERS
            ),
        }
    }
# A streaming replica of the primary for reads that may lag (retrieval, the /docs pages):
# ``kb.runtime.db_router`` sends them there; writes and read-after-write stay on the primary.
if "DATABASE_REPLICA_URL" in env:
    DATABASES["replica"] = env.db_url("DATABASE_REPLICA_URL")
    DATABASES["replica"]["HOST"] = unquote(DATABASES["replica"].get("HOST") or "")
    if DATABASES["replica"]["ENGINE"] != "django.db.backends.postgresql":
        raise ImproperlyConfigured("DATABASE_REPLICA_URL must point to PostgreSQL (with pgvector)")
    # Tests run against one test database: the replica alias reads it too.
    DATABASES["replica"]["TEST"] = {"MIRROR": "default"}
for _database in DATABASES.values():
    _database.setdefault("CONN_MAX_AGE", env_int("DATABASE_CONN_MAX_AGE", default=60))
    _database.setdefault("CONN_HEALTH_CHECKS", True)
DATABASE_ROUTERS = ["kb.runtime.db_router.PrimaryReplicaRouter"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Celery ---------------------------------------------------------------------------------------
# Set when the embedded Redis is the broker: the Celery app (config.celery_app) starts it at its
# first broker connection, the cache below at its first use.
EMBEDDED_REDIS_DATA_DIR: Path | None = None
_embedded_redis_socket = None
if "CELERY_BROKER_URL" in env:
    CELERY_BROKER_URL = env.str("CELERY_BROKER_URL")
elif PRODUCTION:
    raise ImproperlyConfigured("CELERY_BROKER_URL is required in production (Redis or RabbitMQ)")
else:
    EMBEDDED_REDIS_DATA_DIR = DATA_DIR
    _embedded_redis_socket = embedded.redis_socket_path(data_dir=DATA_DIR)
    CELERY_BROKER_URL = f"redis+socket://{_embedded_redis_socket}?virtual_host=0"

# --- Cache: answers and rate limits; the broker's Redis unless CACHE_URL says otherwise ----------
if "CACHE_URL" in env:
    CACHES = {"default": env.cache_url("CACHE_URL")}
elif _embedded_redis_socket is not None:
    CACHES = {
        "default": {
            "BACKEND": "kb.runtime.cache.EmbeddedRedisCache",
            "LOCATION": f"unix://{_embedded_redis_socket}?db=1",
            "EMBEDDED_DATA_DIR": DATA_DIR,
        }
    }
elif CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": CELERY_BROKER_URL,
        }
    }
else:  # a RabbitMQ broker and no CACHE_URL: each process keeps its own cache
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
CACHES["default"].setdefault("KEY_PREFIX", env.str("CACHE_KEY_PREFIX", default="groundwork"))

# Two queues by urgency: a writer's save is indexed on ``interactive``; model builds, reindexing
# everything and the requests of imports and syncs go to ``bulk``, in batches, so a rebuild never
# delays an edit. A worker started without -Q consumes both (the demo's one worker); production
# runs ``celery -A config worker -Q interactive`` and ``-Q bulk`` on separate machines.
INTERACTIVE_QUEUE = "interactive"
BULK_QUEUE = "bulk"
# Test questions that guard an edit are answered after the page is indexed, on a queue of their
# own: no indexing worker takes them, so they never delay an edit (docs/answers.md).
CHECKS_QUEUE = "checks"
CELERY_TASK_QUEUES = (Queue(INTERACTIVE_QUEUE), Queue(BULK_QUEUE), Queue(CHECKS_QUEUE))
CELERY_TASK_DEFAULT_QUEUE = INTERACTIVE_QUEUE
CELERY_TASK_ROUTES = {
    "kb.tasks.embedding_model_build_task": {"queue": BULK_QUEUE},
    "kb.tasks.documents_index_batch_task": {"queue": BULK_QUEUE},
    "kb.tasks.connector_sync_task": {"queue": BULK_QUEUE},
    "assistant.tasks.test_questions_run_task": {"queue": CHECKS_QUEUE},
}

CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", default=False)
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_SERIALIZER = "json"
# The durable index state is the to-do list; the sweep re-sends what a lost message left behind.
# Answers whose stream was never opened are ended by a sweep too, instead of staying pending.
CELERY_BEAT_SCHEDULE = {
    "index-sweep": {"task": "kb.tasks.index_sweep_task", "schedule": 60.0},
    "pending-answers-sweep": {
        "task": "assistant.tasks.pending_answers_sweep_task",
        "schedule": 60.0,
    },
    # The most asked answered questions, proposed for a steward to approve as suggestions.
    # The analytics page's daily rollup, recounted where something changed (the page also does).
    "analytics-rollup": {
        "task": "assistant.tasks.analytics_rollup_refresh_task",
        "schedule": 60.0,
    },
    "suggestions-propose": {
        "task": "assistant.tasks.suggestions_propose_task",
        "schedule": 600.0,
    },
}
CELERY_ACCEPT_CONTENT = ["json"]

# --- Embeddings -----------------------------------------------------------------------------------
# The model a fresh database starts with; later models are added with `manage.py kb_models`.
EMBEDDING_MODEL = env.str("EMBEDDING_MODEL", default="local/all-MiniLM-L6-v2")
if EMBEDDING_MODEL != "local/all-MiniLM-L6-v2" and not EMBEDDING_MODEL.startswith("voyage/"):
    raise ImproperlyConfigured(
        "EMBEDDING_MODEL must be local/all-MiniLM-L6-v2 or voyage/<model> "
        f"(got {EMBEDDING_MODEL!r})"
    )
# The local model runs at most this many texts, and this many word pieces padding included, at
# once (kb.embedders.local.length_batches says why the second bound).
EMBEDDING_BATCH_SIZE = env_int("EMBEDDING_BATCH_SIZE", default=32, minimum=1)
EMBEDDING_BATCH_TOKENS = env_int("EMBEDDING_BATCH_TOKENS", default=512, minimum=1)
# onnxruntime threads for the local embedder; 0 lets it pick (all cores).
LOCAL_EMBEDDER_THREADS = env_int("LOCAL_EMBEDDER_THREADS", default=0)

# --- Voyage (embeddings and rerank in production) -------------------------------------------------
VOYAGE_API_KEY = env.str("VOYAGE_API_KEY", default="")
VOYAGE_BASE_URL = env.str("VOYAGE_BASE_URL", default="") or None
if EMBEDDING_MODEL.startswith("voyage/") and not VOYAGE_API_KEY:
    raise ImproperlyConfigured(f"EMBEDDING_MODEL={EMBEDDING_MODEL} needs VOYAGE_API_KEY")
VOYAGE_RERANK_MODEL = env.str("VOYAGE_RERANK_MODEL", default="rerank-2.5")
VOYAGE_TIMEOUT = env_float("VOYAGE_TIMEOUT", default=10.0)
VOYAGE_MAX_RETRIES = env_int("VOYAGE_MAX_RETRIES", default=3)
# Upper bound on one call including retries: a customer is waiting on the answer.
VOYAGE_TOTAL_TIMEOUT = env_float("VOYAGE_TOTAL_TIMEOUT", default=8.0)

# --- Connectors: Zendesk Guide and Intercom articles into the index (docs/operations.md) --------
# A connector is configured when its credentials are set; a half-configured one fails here.
ZENDESK_SUBDOMAIN = env.str("ZENDESK_SUBDOMAIN", default="")  # acme for acme.zendesk.com
ZENDESK_BASE_URL = env.str("ZENDESK_BASE_URL", default="") or (
    f"https://{ZENDESK_SUBDOMAIN}.zendesk.com" if ZENDESK_SUBDOMAIN else ""
)
ZENDESK_EMAIL = env.str("ZENDESK_EMAIL", default="")  # with ZENDESK_API_TOKEN: basic auth
ZENDESK_API_TOKEN = env.str("ZENDESK_API_TOKEN", default="")
ZENDESK_OAUTH_TOKEN = env.str("ZENDESK_OAUTH_TOKEN", default="")  # or a bearer token
if bool(ZENDESK_EMAIL) != bool(ZENDESK_API_TOKEN):
    raise ImproperlyConfigured("ZENDESK_EMAIL and ZENDESK_API_TOKEN go together (basic auth)")
if (ZENDESK_API_TOKEN or ZENDESK_OAUTH_TOKEN) and not ZENDESK_BASE_URL:
    raise ImproperlyConfigured("a Zendesk token needs ZENDESK_SUBDOMAIN (or ZENDESK_BASE_URL)")
INTERCOM_ACCESS_TOKEN = env.str("INTERCOM_ACCESS_TOKEN", default="")
INTERCOM_BASE_URL = env.str("INTERCOM_BASE_URL", default="https://api.intercom.io")
INTERCOM_VERSION = env.str("INTERCOM_VERSION", default="2.11")
# A website (its sitemap, else a crawl from WEBSITE_URL): docs/operations.md, Connectors.
WEBSITE_URL = env.str("WEBSITE_URL", default="")
WEBSITE_SITEMAP_URL = env.str("WEBSITE_SITEMAP_URL", default="")
WEBSITE_MAX_PAGES = env_int("WEBSITE_MAX_PAGES", default=500, minimum=1)
WEBSITE_DELAY_SECONDS = env_float("WEBSITE_DELAY_SECONDS", default=1.0)
WEBSITE_USER_AGENT = env.str("WEBSITE_USER_AGENT", default="GroundworkBot/1.0 (help-center sync)")
for _name, _url in (("WEBSITE_URL", WEBSITE_URL), ("WEBSITE_SITEMAP_URL", WEBSITE_SITEMAP_URL)):
    _parts = urlsplit(_url)
    if _url and (_parts.scheme not in ("http", "https") or not _parts.netloc):
        raise ImproperlyConfigured(f"{_name} must be an http(s) URL (got {_url!r})")
if WEBSITE_SITEMAP_URL and not WEBSITE_URL:
    raise ImproperlyConfigured("WEBSITE_SITEMAP_URL needs WEBSITE_URL (the site's start page)")
if WEBSITE_DELAY_SECONDS < 0:
    raise ImproperlyConfigured("WEBSITE_DELAY_SECONDS must be 0 or more seconds")
CONNECTOR_TIMEOUT = env_float("CONNECTOR_TIMEOUT", default=30.0)
CONNECTOR_MAX_ATTEMPTS = env_int("CONNECTOR_MAX_ATTEMPTS", default=5, minimum=1)
CONNECTOR_BACKOFF_SECONDS = env_float("CONNECTOR_BACKOFF_SECONDS", default=1.0)
CONNECTOR_MAX_RETRY_WAIT = env_float("CONNECTOR_MAX_RETRY_WAIT", default=120.0)
# Seconds between scheduled runs of each configured connector (0: only on demand).
CONNECTOR_SYNC_SECONDS = env_int("CONNECTOR_SYNC_SECONDS", default=900, minimum=0)
CONNECTORS_CONFIGURED = [
    name
    for name, configured in (
        ("zendesk", bool(ZENDESK_BASE_URL and (ZENDESK_API_TOKEN or ZENDESK_OAUTH_TOKEN))),
        ("intercom", bool(INTERCOM_ACCESS_TOKEN)),
        ("website", bool(WEBSITE_URL)),
    )
    if configured
]
for _connector in CONNECTORS_CONFIGURED if CONNECTOR_SYNC_SECONDS else []:
    CELERY_BEAT_SCHEDULE[f"connector-sync-{_connector}"] = {
        "task": "kb.tasks.connector_sync_task",
        "schedule": float(CONNECTOR_SYNC_SECONDS),
        "args": [_connector],
    }

# --- Retrieval ------------------------------------------------------------------------------------
RERANKERS = ("voyage", "local", "none")
# Voyage rerank-2.5 when a key is set; otherwise the fused order ("none"). "local" is the local
# ranking stage, a LightGBM model over the legs' evidence (search/rerankers/models/): held out,
# it ranks pages at or above each leg on every eval set and its answers state as many facts or
# more on every external set, but on the sample help center it reorders pages the newcomer
# questions need (the follow-up "and for annual plans?" loses its 60-day rule), so it is not the
# default (docs/retrieval.md, "The local ranking stage").
RERANKER = env.str("RERANKER", default="voyage" if VOYAGE_API_KEY else "none")
if RERANKER not in RERANKERS:
    raise ImproperlyConfigured(f"RERANKER must be one of {', '.join(RERANKERS)} (got {RERANKER!r})")
if RERANKER == "voyage" and not VOYAGE_API_KEY:
    raise ImproperlyConfigured("RERANKER=voyage needs VOYAGE_API_KEY")
# Below this retrieval confidence the answer is "not in our docs"; below the second, so is a best
# passage sharing no content word with the question (assistant.no_answer). Both calibrated on
# the calibration half of corpus/answer-eval.jsonl (`manage.py answer_eval`).
NO_ANSWER_THRESHOLD = env_float("NO_ANSWER_THRESHOLD", default=0.40)
NO_ANSWER_UNSUPPORTED_THRESHOLD = env_float("NO_ANSWER_UNSUPPORTED_THRESHOLD", default=0.56)
# pgvector HNSW search breadth; iterative scans keep going when filters reject candidates.
# Wider finds more of the nearest chunks (recall@10 at 100k synthetic chunks 0.92 at 100,
# 0.95-0.96 at 200) and moves the planner's switch to an exact whole read up (between 4k
# and 6k chunks at 200, now that vectors are kept in the row): docs/operations.md.
HNSW_EF_SEARCH = env_int("HNSW_EF_SEARCH", default=200, minimum=1)
# The graph a new model's HNSW index is built with (a change applies to indexes built later):
# links per node and build breadth. Chosen by `search_bench` recall and latency at 100k-1M chunks.
HNSW_M = env_int("HNSW_M", default=16, minimum=2)
HNSW_EF_CONSTRUCTION = env_int("HNSW_EF_CONSTRUCTION", default=64, minimum=4)
# The hybrid statement runs prepared, with a generic plan; turn off for a connection pooler that
# cannot keep prepared statements (PgBouncer before 1.21 in transaction mode).
SEARCH_PREPARED_STATEMENTS = env_bool("SEARCH_PREPARED_STATEMENTS", default=True)

# --- Answering ------------------------------------------------------------------------------------
GENERATORS = ("anthropic", "extractive")
ANTHROPIC_API_KEY = env.str("ANTHROPIC_API_KEY", default="")
# Claude when a key is set; otherwise the offline extractive answerer (quotes, clearly labelled).
GENERATOR = env.str("GENERATOR", default="anthropic" if ANTHROPIC_API_KEY else "extractive")
if GENERATOR not in GENERATORS:
    raise ImproperlyConfigured(
        f"GENERATOR must be one of {', '.join(GENERATORS)} (got {GENERATOR!r})"
    )
if GENERATOR == "anthropic" and not ANTHROPIC_API_KEY:
    raise ImproperlyConfigured("GENERATOR=anthropic needs ANTHROPIC_API_KEY")
# The SDK also reads ANTHROPIC_BASE_URL itself; read here so tests and deploys see one value.
ANTHROPIC_BASE_URL = env.str("ANTHROPIC_BASE_URL", default="") or None
# claude-sonnet-4-5 reaches end of life on 2026-11-30 (anthropic SDK 2.14.0).
ANTHROPIC_MODEL = env.str("ANTHROPIC_MODEL", default="claude-sonnet-4-6")
ANTHROPIC_MAX_TOKENS = env_int("ANTHROPIC_MAX_TOKENS", default=1024)
ANTHROPIC_TIMEOUT = env_float("ANTHROPIC_TIMEOUT", default=30.0)
ANTHROPIC_MAX_RETRIES = env_int("ANTHROPIC_MAX_RETRIES", default=2)
# Sources go into the prompt whole, best first, until this many characters: the ten passages
# and the six page sections read beside them fit for 90% of the questions of four of the five
# answer eval sets (p90 9.8k-11.6k characters; Argo CD's longer chunks 13.7k). At 7,000 the
# ten passages alone did not fit for 10-50% of them (docs/answers.md).
PROMPT_CHARACTER_BUDGET = env_int("PROMPT_CHARACTER_BUDGET", default=12000)
# Longest question accepted on the chat page, and asks per client per minute.
QUESTION_MAX_CHARS = env_int("QUESTION_MAX_CHARS", default=1000)
ASK_RATE_LIMIT_PER_MINUTE = env_int("ASK_RATE_LIMIT_PER_MINUTE", default=20)
# Cached answers live this long; the index version in the key retires them on any change first.
ANSWER_CACHE_SECONDS = env_int("ANSWER_CACHE_SECONDS", default=3600)
# Where "contact support" points. Empty (the default): the chat's own support form, whose
# requests staff read in the admin; set it to send customers to a help desk instead.
SUPPORT_CONTACT_URL = env.str("SUPPORT_CONTACT_URL", default="")
# Support requests per client per minute (per IP address: five times that).
SUPPORT_RATE_LIMIT_PER_MINUTE = env_int("SUPPORT_RATE_LIMIT_PER_MINUTE", default=3, minimum=1)

# --- Content trust: whose addresses a page may send readers to ----------------------------------
# A line pointing readers to an address or link outside these domains (or asking for credentials)
# is flagged in the editor; the assistant never quotes the address (kb.content_checks).
# Subdomains count. The defaults are the sample help center's domain and example.com, the domain
# its examples use (RFC 2606).
COMPANY_DOMAINS = [
    domain.strip().lower().rstrip(".")
    for domain in env.list("COMPANY_DOMAINS", default=["acmebilling.com", "example.com"])
]
for _domain in COMPANY_DOMAINS:
    if not re.fullmatch(r"(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,}", _domain):
        raise ImproperlyConfigured(
            f"COMPANY_DOMAINS must be bare domain names such as acme.com (got {_domain!r})"
        )

# --- Content-Security-Policy: scripts, styles and images from this site only ----------------------
# No inline script anywhere (htmx is told not to inject its indicator style); images also as
# data: URIs (the admin's icons). The one inline style attribute left, simple_history's
# paginator ("border-top: 0"), is allowed by its hash only.
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-hashes' 'sha256-XMXSevYjgSjXgRafBFDvtjwX+yyWLrxfso9DcNZ9UXM='",
        "img-src 'self' data:",
        "connect-src 'self'",
        "font-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)

# --- Auth, i18n, static ---------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
if GROUNDWORK_ENV == "test":
    # PBKDF2's million rounds cost ~0.4 s of CPU a password on a 2-core machine, and the suite
    # creates and signs in users by the hundred: the tests hash with MD5 (Django's advice for
    # test runs). Every other environment keeps Django's hashers.
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
LANGUAGE_CODE = "en-us"
TIME_ZONE = env.str("TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
# Outside production WhiteNoise serves straight from the app folders (no collectstatic needed,
# DEBUG on or off); in production only the collected, hashed and compressed files.
WHITENOISE_USE_FINDERS = not PRODUCTION
# Django's test client loads the middleware again for every client, and WhiteNoise would list and
# stat every static file of every app each time (23 s of the suite's CPU): under test it looks a
# file up when it is asked for, as it does with DEBUG on.
WHITENOISE_AUTOREFRESH = DEBUG or GROUNDWORK_ENV == "test"
if not PRODUCTION:
    # With DEBUG off (the demo) WhiteNoise looks for the collected folder at start and warns
    # that it is missing; outside production nothing is collected, the finders serve instead.
    warnings.filterwarnings("ignore", message=r"No directory at: .*staticfiles")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if PRODUCTION
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}

# --- Logging: one event name plus key/values ------------------------------------------------------
LOG_LEVEL = env.str("LOG_LEVEL", default="INFO").upper()
LOG_FORMAT = env.str("LOG_FORMAT", default="json" if PRODUCTION else "console")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
    "loggers": {
        "groundwork": {"handlers": ["console"], "level": LOG_LEVEL, "propagate": False},
        "django": {"handlers": ["console"], "level": "INFO", "propagate": False},
        "embedded_postgres": {"handlers": ["console"], "level": "WARNING", "propagate": False},
    },
}

# --- Production refuses unsafe defaults -----------------------------------------------------------
if PRODUCTION:
    if DEBUG:
        raise ImproperlyConfigured("DJANGO_DEBUG must be off in production")
    if SECRET_KEY == _INSECURE_SECRET_KEY or len(SECRET_KEY) < 32:
        raise ImproperlyConfigured(
            "DJANGO_SECRET_KEY must be set to a random value of at least 32 characters"
        )
    if CELERY_TASK_ALWAYS_EAGER:
        raise ImproperlyConfigured("CELERY_TASK_ALWAYS_EAGER is for tests; turn it off")
    SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", default=True)
    # Behind a TLS-terminating proxy: trust its X-Forwarded-Proto, redirect plain HTTP, and
    # (once the whole site is on HTTPS) send HSTS. Off by default; the proxy may do these.
    if env_bool("TRUST_X_FORWARDED_PROTO", default=False):
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", default=False)
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", default=0)
    CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", default=True)
# Browsers drop a SameSite=None cookie that is not also Secure: refuse the pair that cannot work.
if SESSION_COOKIE_SAMESITE == "None" and not SESSION_COOKIE_SECURE:
    raise ImproperlyConfigured(
        "SESSION_COOKIE_SAMESITE=None needs SESSION_COOKIE_SECURE on (HTTPS, production)"
    )
if CSRF_COOKIE_SAMESITE == "None" and not CSRF_COOKIE_SECURE:
    raise ImproperlyConfigured(
        "CSRF_COOKIE_SAMESITE=None needs CSRF_COOKIE_SECURE on (HTTPS, production)"
    )
