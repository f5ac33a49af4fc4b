"""SameSite=None cookies leave as ``Partitioned`` too (a browser blocking third-party cookies
keeps only those in the widget's frame on another site); Lax cookies are left as they were."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from assistant.widget.cookies import PartitionedCookieMiddleware


def _set_cookie_lines(response: HttpResponse) -> dict[str, str]:
    return {key: morsel.OutputString() for key, morsel in response.cookies.items()}


def test_a_samesite_none_cookie_is_partitioned_and_keeps_its_attributes() -> None:
    def view(request: HttpRequest) -> HttpResponse:
        response = HttpResponse("ok")
        response.set_cookie(
            "sessionid", "abc", max_age=60, secure=True, httponly=True, samesite="None"
        )
        response.set_cookie("csrftoken", "xyz", samesite="Lax")
        return response

    lines = _set_cookie_lines(PartitionedCookieMiddleware(view)(HttpRequest()))

    session = lines["sessionid"]
    assert session.startswith("sessionid=abc; ")
    assert session.endswith("; Partitioned")
    for attribute in ["HttpOnly", "Max-Age=60", "Path=/", "SameSite=None", "Secure", "expires="]:
        assert attribute in session, session
    assert lines["csrftoken"] == view(HttpRequest()).cookies["csrftoken"].OutputString()
    assert "Partitioned" not in lines["csrftoken"]
