"""The widget's allowed-origins list: only exact origins get into the frame-ancestors header, in
one spelling, and a page matches the list as the browser's frame-ancestors check would."""

from __future__ import annotations

import pytest

from assistant.widget.origins import OriginInvalid, origin_matches, origin_parse, origins_parse


@pytest.mark.parametrize(
    ("written", "stored"),
    [
        ("https://www.example.com", "https://www.example.com"),
        ("  HTTPS://Shop.Example.COM/ ", "https://shop.example.com"),
        ("https://shop.example.com:443", "https://shop.example.com"),
        ("http://127.0.0.1:8001", "http://127.0.0.1:8001"),
        ("http://[::1]:8001", "http://[::1]:8001"),
        ("https://*.example.com", "https://*.example.com"),
        ("https://xn--bcher-kva.example", "https://xn--bcher-kva.example"),
    ],
)
def test_an_origin_is_stored_as_the_browser_sends_it(written: str, stored: str) -> None:
    assert origin_parse(written) == stored


@pytest.mark.parametrize(
    "written",
    [
        "www.example.com",  # no scheme
        "ftp://example.com",
        "https://example.com/help",  # a path
        "https://example.com?x=1",
        "https://example.com 'unsafe-inline'",  # would add a source to the header
        "https://example.com; script-src *",  # would add a directive
        "*",
        "'self'",
        "https://exa mple.com",
        "https://bücher.example",  # an IDN is entered as punycode
        "https://example.com:99999",
        "https://user@example.com",
        "https://*",
    ],
)
def test_anything_but_an_origin_is_refused_with_the_reason(written: str) -> None:
    with pytest.raises(OriginInvalid, match=r"not an origin|port outside"):
        origin_parse(written)


def test_the_list_drops_blank_lines_and_repeats_and_names_every_bad_line() -> None:
    assert origins_parse("https://a.example\n\nhttps://A.example/\nhttp://b.example:8080\n") == [
        "https://a.example",
        "http://b.example:8080",
    ]
    with pytest.raises(OriginInvalid) as refused:
        origins_parse("https://a.example\na.example\nhttps://b.example/path")
    assert "'a.example'" in str(refused.value)
    assert "'https://b.example/path'" in str(refused.value)


def test_a_page_matches_its_exact_origin_or_a_wildcard_above_it() -> None:
    allowed = ["https://www.example.com", "http://127.0.0.1:8001", "https://*.shop.example"]

    assert origin_matches("https://www.example.com", allowed=allowed)
    assert origin_matches("https://www.example.com:443", allowed=allowed)
    assert origin_matches("http://127.0.0.1:8001", allowed=allowed)
    assert origin_matches("https://eu.shop.example", allowed=allowed)

    assert not origin_matches("http://www.example.com", allowed=allowed)  # another scheme
    assert not origin_matches("http://127.0.0.1:8002", allowed=allowed)  # another port
    assert not origin_matches("http://localhost:8001", allowed=allowed)  # another host
    assert not origin_matches("https://shop.example", allowed=allowed)  # * needs a subdomain
    assert not origin_matches("https://evilshop.example", allowed=allowed)
    assert not origin_matches("https://eu.shop.example:8443", allowed=allowed)
    assert not origin_matches("null", allowed=allowed)  # a sandboxed or file: page
