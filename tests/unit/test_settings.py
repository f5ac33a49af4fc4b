"""Settings come from the environment and production refuses unsafe defaults.

Each case runs in a fresh interpreter, because settings are read once per process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAFE_KEY = "k" * 50
EXTERNAL = {
    "DATABASE_URL": "postgres://nobody@127.0.0.1:1/none",
    "CELERY_BROKER_URL": "redis://127.0.0.1:1/0",
}


def _load_settings(**environ: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "GROUNDWORK_"))}
    env.pop("DATABASE_URL", None)
    env.pop("CELERY_BROKER_URL", None)
    env.update(environ)
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup(); print('ok')"],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "config.settings"},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        ({"DJANGO_SECRET_KEY": SAFE_KEY, "DJANGO_DEBUG": "true"}, "DJANGO_DEBUG must be off"),
        ({}, "DJANGO_SECRET_KEY must be set"),
        ({"DJANGO_SECRET_KEY": "short"}, "DJANGO_SECRET_KEY must be set"),
        (
            {"DJANGO_SECRET_KEY": SAFE_KEY, "CELERY_TASK_ALWAYS_EAGER": "true"},
            "CELERY_TASK_ALWAYS_EAGER is for tests",
        ),
    ],
)
def test_production_refuses_unsafe_settings(environ: dict[str, str], message: str) -> None:
    result = _load_settings(GROUNDWORK_ENV="production", **EXTERNAL, **environ)
    assert result.returncode != 0
    assert message in result.stderr


def test_production_requires_external_servers() -> None:
    result = _load_settings(GROUNDWORK_ENV="production", DJANGO_SECRET_KEY=SAFE_KEY)
    assert result.returncode != 0
    assert "DATABASE_URL is required in production" in result.stderr


def test_production_starts_with_safe_settings() -> None:
    result = _load_settings(GROUNDWORK_ENV="production", DJANGO_SECRET_KEY=SAFE_KEY, **EXTERNAL)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("GROUNDWORK_ENV", "staging"),
        ("EMBEDDING_MODEL", "openai/text-embedding-3-small"),
        ("EMBEDDING_MODEL", "voyage/voyage-3.5"),  # without VOYAGE_API_KEY
        ("GENERATOR", "anthropic"),  # without ANTHROPIC_API_KEY
        ("EMBEDDING_BATCH_SIZE", "0"),
        ("EMBEDDING_BATCH_TOKENS", "0"),
        ("DATABASE_URL", "mysql://root@localhost/db"),
        ("WEBSITE_URL", "help.acme.test"),  # no scheme: not a URL to read
    ],
)
def test_bad_value_fails_at_start_naming_the_variable(name: str, value: str) -> None:
    result = _load_settings(**{**EXTERNAL, name: value})
    assert result.returncode != 0
    assert name in result.stderr


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("EMBEDDING_BATCH_SIZE", "abc", "EMBEDDING_BATCH_SIZE must be an integer (got 'abc')"),
        ("VOYAGE_TIMEOUT", "soon", "VOYAGE_TIMEOUT must be a number (got 'soon')"),
        ("DJANGO_DEBUG", "flase", "DJANGO_DEBUG must be true or false (got 'flase')"),
    ],
)
def test_a_value_of_the_wrong_type_is_one_line_naming_the_variable(
    name: str, value: str, message: str
) -> None:
    env = {**os.environ, **EXTERNAL, name: value}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"error: {message}"]


def test_manage_py_reports_a_settings_error_in_one_line() -> None:
    env = {**os.environ, **EXTERNAL, "GROUNDWORK_ENV": "staging"}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: GROUNDWORK_ENV must be one of development, test, production (got 'staging')"
    ]


def test_production_behind_a_tls_proxy_passes_the_deploy_check() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "GROUNDWORK_"))}
    env.update(
        EXTERNAL,
        GROUNDWORK_ENV="production",
        DJANGO_SECRET_KEY="Zq8-" + "x7Lp2Vn9" * 7,
        TRUST_X_FORWARDED_PROTO="true",
        SECURE_SSL_REDIRECT="true",
        SECURE_HSTS_SECONDS="31536000",
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "System check identified" in result.stderr, result.stderr[-2000:]
    # Only the two HSTS choices that depend on the customer's domain may remain.
    warnings = [line for line in result.stderr.splitlines() if line.startswith("?: (security")]
    assert {w.split(")")[0] for w in warnings} <= {"?: (security.W005", "?: (security.W021"}
    assert "security.W004" not in result.stderr and "security.W008" not in result.stderr


def test_a_configured_website_is_synced_on_the_bulk_queue_by_beat() -> None:
    # given / when
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "GROUNDWORK_"))}
    program = (
        "import django; django.setup(); from django.conf import settings as s; "
        "e = s.CELERY_BEAT_SCHEDULE['connector-sync-website']; "
        "print(e['task'], e['args'], s.CELERY_TASK_ROUTES[e['task']]['queue'] == s.BULK_QUEUE)"
    )
    result = subprocess.run(
        [sys.executable, "-c", program],
        cwd=ROOT,
        env={
            **env,
            **EXTERNAL,
            "WEBSITE_URL": "https://help.acme.test/",
            "DJANGO_SETTINGS_MODULE": "config.settings",
        },
        capture_output=True,
        text=True,
        timeout=60,
    )

    # then
    assert result.stdout.strip() == "kb.tasks.connector_sync_task ['website'] True", result.stderr
