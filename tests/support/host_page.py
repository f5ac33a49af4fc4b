"""A customer's website for the widget's e2e tests: a plain ``http.server`` on 127.0.0.1 at its
own port (another origin than the app's; the same site unless named ``localhost``), serving one
page that holds nothing of ours but the widget's ``<script>`` tag, under its own strict
Content-Security-Policy, and a stylesheet of hostile rules aimed at anything the widget adds."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from config.processes import free_port

# Rules a careless (or hostile) site might have, aimed at the widget: its element, buttons,
# iframes, every element's font. The widget must look and work the same under them.
HOST_CSS = """
* { font-family: "Times New Roman", serif !important; }
button { display: none !important; background: lime !important; }
iframe { display: none !important; }
groundwork-widget, groundwork-widget * { display: none !important; opacity: 0 !important; }
.shop-button { display: inline-block !important; }
.catalogue { height: 3000px; }  /* a long page: it must not scroll while the chat does */
"""


@dataclass(frozen=True)
class HostPage:
    url: str  # the page, http://127.0.0.1:PORT/shop.html
    origin: str


@contextmanager
def host_page_served(
    *, app_url: str, site_key: str, hostname: str = "127.0.0.1"
) -> Iterator[HostPage]:
    """The page at a free port; its CSP lets in the app's origin for script-src and frame-src
    only: no style, image or connect source, no inline anything. ``hostname="localhost"`` makes
    it another site than the app at 127.0.0.1 (a port alone makes only another origin)."""
    port = free_port()
    origin = f"http://{hostname}:{port}"
    policy = "; ".join(
        [
            "default-src 'self'",
            f"script-src 'self' {app_url}",
            f"frame-src {app_url}",
            "style-src 'self'",
            "object-src 'none'",
        ]
    )
    page = (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        "<title>Acme shop</title>"
        "<link rel='stylesheet' href='/shop.css'></head><body>"
        "<h1>Acme shop</h1><p>Our products.</p><div class='catalogue'></div>"
        "<button type='button' class='shop-button' id='shop-button'>Add to cart</button>"
        f'<script src="{app_url}/static/assistant/widget.js" data-site-key="{site_key}" async>'
        "</script></body></html>"
    )

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.startswith("/shop.css"):
                self._send(HOST_CSS, "text/css")
            elif self.path.startswith("/shop.html"):
                self._send(page, "text/html; charset=utf-8", policy=policy)
            else:
                self.send_error(404)

        def _send(self, body: str, content_type: str, *, policy: str = "") -> None:
            data = body.encode()
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            if policy:
                self.send_header("Content-Security-Policy", policy)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            pass  # quiet: the test says what failed

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield HostPage(url=f"{origin}/shop.html", origin=origin)
    finally:
        server.shutdown()
        server.server_close()
