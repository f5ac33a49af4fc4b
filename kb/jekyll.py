"""A Jekyll site's folder as Jekyll builds it: which of its files are pages.

A folder with a ``_config.yml`` at its top is a Jekyll site. Jekyll reads no page from a file
or folder whose name starts with an underscore (``_layouts``, ``_includes``, ``_data``,
``_sass``, ``_site``, ``_drafts``), a dot or ``#``, except ``_posts`` and the collections the
configuration outputs (``collections: {docs: {output: true}}`` is ``_docs``, under
``collections_dir`` when it is set), nor what ``exclude`` names; ``include`` takes a name back.
Jekyll's own documentation keeps 22 HTML includes and 8 layouts beside its pages, which were
read as pages ("{{ include.version }}").

The configuration is YAML and is only read (``yaml.safe_load``); one that does not read is
reported and the folder read as any other.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

CONFIG_FILES = ("_config.yml", "_config.yaml")
_POSTS = "_posts"


@dataclass(frozen=True)
class JekyllSite:
    config_file: str
    collections_dir: str  # "" when the collections are at the top of the site
    outputs: frozenset[str]  # the folders of the collections Jekyll writes pages for
    excluded: tuple[str, ...]
    included: tuple[str, ...]

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


def jekyll_site(config_file: str, raw: bytes) -> tuple[JekyllSite | None, str | None]:
    """The site ``raw`` (its ``_config.yml``) configures, or None and why it cannot be read."""
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
            config_file=config_file,
            collections_dir=collections_dir.strip("/") if isinstance(collections_dir, str) else "",
            outputs=frozenset(outputs),
            excluded=_names(config.get("exclude")),
            included=_names(config.get("include")),
        ),
        None,
    )


def _names(value: Any) -> tuple[str, ...]:
    return tuple(item for item in value if isinstance(item, str)) if isinstance(value, list) else ()
