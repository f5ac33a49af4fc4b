"""A website's listing and its pages' identities: sitemaps (an index followed, gzip read) and
the canonical URL and document id of a page (``kb.connectors.website``)."""

from __future__ import annotations

import gzip
import io
import posixpath
import re
import urllib.parse

from lxml import etree

from kb.connectors.base import ConnectorError
from kb.connectors.http import UpstreamClient

# Sitemap indexes nest; deeper than this is a loop, not a site.
MAX_SITEMAP_DEPTH = 3
MAX_SITEMAP_BYTES = 50_000_000  # the sitemap protocol's own limit, uncompressed


def sitemap_page_urls(
    client: UpstreamClient, url: str, *, required: bool, depth: int = 0
) -> list[str] | None:
    """The page URLs of the sitemap at ``url`` (an index followed), canonical, on the client's
    origin only (an entry elsewhere is never fetched); None for a sitemap that is not there
    and was not asked for by name (``/sitemap.xml`` tried on a site without one)."""
    if not client.on_origin(url):
        return []
    answer = client.get_page(url)
    if answer.status != 200:
        if required:
            raise ConnectorError(f"the sitemap {url} answered HTTP {answer.status}")
        return None
    body = answer.body
    if body[:2] == b"\x1f\x8b":  # read no more than the limit of a gzip bomb
        with gzip.GzipFile(fileobj=io.BytesIO(body)) as unpacked:
            try:
                body = unpacked.read(MAX_SITEMAP_BYTES + 1)
            except (OSError, EOFError) as exc:
                raise ConnectorError(f"the sitemap {url} is not valid gzip ({exc})") from exc
    if len(body) > MAX_SITEMAP_BYTES:
        raise ConnectorError(f"the sitemap {url} is over {MAX_SITEMAP_BYTES:,} bytes")
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
    try:
        root = etree.fromstring(body, parser)
    except etree.XMLSyntaxError as exc:
        if not required and depth == 0:
            return None  # a site answering its HTML 404 page for /sitemap.xml
        raise ConnectorError(f"the sitemap {url} is not XML ({exc})") from exc
    kind = etree.QName(root).localname
    locations = [
        (element.text or "").strip()
        for element in root.iter()
        if isinstance(element.tag, str) and etree.QName(element).localname == "loc"
    ]
    if kind == "sitemapindex":
        if depth >= MAX_SITEMAP_DEPTH:
            raise ConnectorError(f"sitemap indexes nested deeper than {MAX_SITEMAP_DEPTH}")
        pages: list[str] = []
        for location in locations:
            pages += sitemap_page_urls(client, location, required=True, depth=depth + 1) or []
        return pages
    if kind != "urlset":
        if not required and depth == 0:
            return None  # an XHTML page answered for /sitemap.xml
        raise ConnectorError(f"{url} is not a sitemap (its root is <{kind}>)")
    return [canonical_url(loc) for loc in locations if loc and client.on_origin(loc)]


def canonical_url(url: str) -> str:
    """``url`` as a page's identity: no fragment, no query, the path's ``.``/``..`` resolved."""
    parts = urllib.parse.urlsplit(url.strip())
    path = parts.path or "/"
    resolved = posixpath.normpath(path)
    if path.endswith("/") and resolved != "/":
        resolved += "/"
    resolved = re.sub(r"/{2,}", "/", resolved)
    return urllib.parse.urlunsplit((parts.scheme.lower(), parts.netloc.lower(), resolved, "", ""))


def page_id(url: str) -> str:
    """A page's id, the part of its document path after ``web/<host>/``: its URL path,
    unquoted, with ``index`` for a folder's page (``/``, ``/docs/``)."""
    path = urllib.parse.unquote(urllib.parse.urlsplit(url).path)
    segments = [segment for segment in path.split("/") if segment not in ("", ".", "..")]
    if path.endswith("/") or not segments:
        segments.append("index")
    return "/".join(segments)
