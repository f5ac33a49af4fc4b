"""A Jekyll site's folder as Jekyll builds it: which of its files are pages, and the values its
pages print from the site's configuration and data.

A folder with a ``_config.yml`` at its top is a Jekyll site. Jekyll reads no page from a file
or folder whose name starts with an underscore (``_layouts``, ``_includes``, ``_data``,
``_sass``, ``_site``, ``_drafts``), a dot or ``#``, except ``_posts`` and the collections the
configuration outputs (``collections: {docs: {output: true}}`` is ``_docs``, under
``collections_dir`` when it is set), nor what ``exclude`` names; ``include`` takes a name back.
Jekyll's own documentation keeps 22 HTML includes and 8 layouts beside its pages, which were
read as pages ("{{ include.version }}").

A page prints values with Liquid: ``{{ site.repository }}/issues/42``, Ruby ``{{
site.data.ruby.min_version }}`` or higher (``_data/ruby.yml``), ``{{ page.title }}``, a link to
``{{ '/docs/sass/' | relative_url }}``. Jekyll renders them everywhere in a page, in code too,
except between ``{% raw %}`` and ``{% endraw %}``; each one that names a value the configuration,
the data files or the page's front matter holds is that value when the page is read
(``liquid_filled``). Any other expression (a loop's variable, a filter we do not run) stays as
written, where the markup check (``kb_sync --dry-run``) reports it.

The configuration and data are YAML or JSON and are only read (``yaml.safe_load``); a
configuration that does not read is reported and the folder read as any other.
"""

from __future__ import annotations

import fnmatch
import functools
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from posixpath import splitext
from typing import Any

import yaml

from kb.parsing import DocumentParseError, document_text, split_front_matter

CONFIG_FILES = ("_config.yml", "_config.yaml")
DATA_FOLDER = "_data"
DATA_SUFFIXES = (".yml", ".yaml", ".json")
_POSTS = "_posts"
# `{{ site.a.b }}`, `{{ page.title }}`, `{{ '/docs/x/' | relative_url }}` (group "variable" or
# "literal", then an optional URL filter)
_OUTPUT = re.compile(
    r"""\{\{-?[ \t]*(?:(?P<variable>(?:site|page)(?:\.[\w-]+)+)"""
    r"""|(?P<quote>["'])(?P<literal>[^"'\n]*)(?P=quote))"""
    r"""[ \t]*(?:\|[ \t]*(?P<filter>relative_url|absolute_url)[ \t]*)?-?\}\}"""
)
_RAW = re.compile(r"\{%-?[ \t]*raw[ \t]*-?%\}.*?\{%-?[ \t]*endraw[ \t]*-?%\}", re.DOTALL)


@dataclass(frozen=True)
class JekyllSite:
    collections_dir: str  # "" when the collections are at the top of the site
    outputs: frozenset[str]  # the folders of the collections Jekyll writes pages for
    excluded: tuple[str, ...]
    included: tuple[str, ...]
    config: Mapping[str, Any] = field(default_factory=dict)  # `site.*`
    data_files: Sequence[str] = ()  # under `_data/`, read when a page first asks
    read_file: Callable[[str], bytes] | None = None  # a file of the folder, by the folder's rule

    @functools.cached_property
    def data(self) -> dict[str, Any]:
        """``site.data``: each data file's content under its path (``_data/a/b.yml`` is
        ``site.data.a.b``); a file that cannot be read is left out."""
        data: dict[str, Any] = {}
        if self.read_file is None:
            return data
        for path in self.data_files:
            try:
                raw = self.read_file(path)
                text = raw.decode("utf-8")
                value = json.loads(text) if path.endswith(".json") else yaml.safe_load(text)
            except (OSError, ValueError, DocumentParseError, yaml.YAMLError):
                continue
            *folders, name = splitext(path[len(DATA_FOLDER) + 1 :])[0].split("/")
            level = data
            for folder in folders:
                level = level.setdefault(folder, {})
            level[name] = value
        return data

    def liquid_filled(self, path: str, raw: bytes) -> bytes:
        """``raw`` (a page's file) with each Liquid output its site or front matter resolves
        replaced by the value, outside ``{% raw %}``; the file as it is when there is none.
        ``page.X`` is the front matter as written, as Jekyll reads it (`kb.parsing`)."""
        if b"{{" not in raw:
            return raw
        try:
            text = document_text(path=path, raw=raw)
            page, body, _lines = split_front_matter(path, text)
        except DocumentParseError:
            return raw  # the sync reports why it cannot be read
        kept = [match.span() for match in _RAW.finditer(body)]

        def value(match: re.Match[str]) -> str:
            if any(begin <= match.start() < end for begin, end in kept):
                return match.group()
            found = _printed(self._value(match.group("variable"), page), match.group("literal"))
            if found is None:
                return match.group()
            return self._url(found, match.group("filter"))

        filled = _OUTPUT.sub(value, body)
        return raw if filled == body else (text[: len(text) - len(body)] + filled).encode()

    def _value(self, variable: str | None, page: Mapping[str, Any]) -> Any:
        if variable is None:
            return None
        scope, *keys = variable.split(".")
        found: Any = page if scope == "page" else {**self.config, "data": self.data}
        for key in keys:
            if not isinstance(found, Mapping):
                return None
            found = found.get(key)
        return found

    def _url(self, value: str, url_filter: str | None) -> str:
        """A path as ``relative_url`` and ``absolute_url`` print it: under the site's
        ``baseurl``, and its ``url`` in front for the latter."""
        if url_filter is None:
            return value
        base = str(self.config.get("baseurl") or "").rstrip("/")
        if value.startswith("/"):
            value = base + value
        if url_filter == "absolute_url":
            value = str(self.config.get("url") or "").rstrip("/") + value
        return value

    def is_page(self, path: str) -> bool:
        """Whether Jekyll builds a page from ``path`` (relative to the site, forward slashes)."""
        parts = path.split("/")
        if self._matches(self.included, parts):
            return True
        if self._matches(self.excluded, parts):
            return False
        if self.collections_dir:
            if parts[0] != self.collections_dir:
                return not any(_hidden(part) for part in parts)
            parts = parts[1:]
        if parts and parts[0] in self.outputs:
            parts = parts[1:]
        return not any(_hidden(part) for part in parts)

    @staticmethod
    def _matches(patterns: tuple[str, ...], parts: list[str]) -> bool:
        prefixes = ["/".join(parts[:depth]) for depth in range(1, len(parts) + 1)]
        return any(
            fnmatch.fnmatchcase(prefix, pattern.strip("/"))
            for pattern in patterns
            for prefix in prefixes
        )


def _hidden(name: str) -> bool:
    return name.startswith(("_", ".", "#")) or name.endswith("~")


def _printed(value: Any, literal: str | None) -> str | None:
    """A value as Liquid prints it, or None when it is not one value we can print."""
    if literal is not None:
        return literal
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    return None


def jekyll_site(
    config_file: str,
    raw: bytes,
    *,
    data_files: Sequence[str] = (),
    read_file: Callable[[str], bytes] | None = None,
) -> tuple[JekyllSite | None, str | None]:
    """The site ``raw`` (its ``_config.yml``) configures, or None and why it cannot be read;
    ``read_file`` reads its ``data_files`` when a page first prints one of their values."""
    try:
        config = yaml.safe_load(raw.decode("utf-8")) or {}
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        reason = " ".join(str(exc).split())
        return None, f"{config_file}: not YAML that can be read ({reason}): every file is read"
    if not isinstance(config, Mapping):
        return None, f"{config_file}: not a map of settings: every file is read"
    collections = config.get("collections")
    outputs = {_POSTS}
    if isinstance(collections, Mapping):
        outputs |= {
            f"_{name}"
            for name, settings in collections.items()
            if isinstance(settings, Mapping) and settings.get("output") is True
        }
    collections_dir = config.get("collections_dir")
    return (
        JekyllSite(
            collections_dir=collections_dir.strip("/") if isinstance(collections_dir, str) else "",
            outputs=frozenset(outputs),
            excluded=_names(config.get("exclude")),
            included=_names(config.get("include")),
            config=config,
            data_files=tuple(data_files),
            read_file=read_file,
        ),
        None,
    )


def _names(value: Any) -> tuple[str, ...]:
    return tuple(item for item in value if isinstance(item, str)) if isinstance(value, list) else ()
