"""The cookie settings a widget on another site needs: SameSite=None only with Secure, since
browsers drop a SameSite=None cookie that is not Secure (each case in a fresh interpreter)."""

from __future__ import annotations

import pytest

from tests.unit.test_settings import EXTERNAL, SAFE_KEY, _load_settings

PRODUCTION = {"GROUNDWORK_ENV": "production", "DJANGO_SECRET_KEY": SAFE_KEY, **EXTERNAL}


def test_production_serves_a_cross_site_widget_with_none_and_secure_cookies() -> None:
    result = _load_settings(
        **PRODUCTION, SESSION_COOKIE_SAMESITE="None", CSRF_COOKIE_SAMESITE="None"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        (
            {"SESSION_COOKIE_SAMESITE": "None", "SESSION_COOKIE_SECURE": "false"},
            "SESSION_COOKIE_SAMESITE=None needs SESSION_COOKIE_SECURE",
        ),
        (
            {"CSRF_COOKIE_SAMESITE": "None", "CSRF_COOKIE_SECURE": "false"},
            "CSRF_COOKIE_SAMESITE=None needs CSRF_COOKIE_SECURE",
        ),
        (
            {"SESSION_COOKIE_SAMESITE": "none"},
            "SESSION_COOKIE_SAMESITE must be Lax, Strict or None",
        ),
        ({"CSRF_COOKIE_SAMESITE": "Relaxed"}, "CSRF_COOKIE_SAMESITE must be Lax, Strict or None"),
    ],
)
def test_a_cookie_setting_browsers_would_drop_stops_the_start(
    environ: dict[str, str], message: str
) -> None:
    result = _load_settings(**PRODUCTION, **environ)
    assert result.returncode != 0
    assert message in result.stderr
