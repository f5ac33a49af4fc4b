"""Hugo's page parameters where a page asks for one: ``{{< param "version" >}}`` (Hugo's own
shortcode) is what the page's front matter, or the nearest section above it, gives that name.

Hugo renders the shortcode with the page's parameter, falling back to the site's. A page's
parameters are its own front matter (its ``params`` map, and the keys at the top level older
sites write) and what its sections *cascade*: the ``cascade`` of an ``_index`` page applies to
every page below it that does not set the value itself, the nearest section first. A docs site
that keeps several versions sets ``git_version_tag: v3.6.0`` in each version's ``_index.md`` and
writes ``ETCD_VERSION={{< param git_version_tag >}}`` in its install pages (etcd: 159 times);
the chunker drops a shortcode it cannot render, and these read "Run the latest version of etcd
(`` at the time of writing)".

The site's own parameters live in its configuration, outside the synced folder: a name found in
no front matter is reported and the shortcode left as written (the chunker drops it, as before).
A cascade limited to some pages (``target``) is not applied: which pages it matches is the
site's to say. Hugo fills in a shortcode wherever it stands, in a code block too; an escaped one
(``{{</* param "x" */>}}``, how a page shows the shortcode itself) is not a shortcode.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from posixpath import basename, dirname
from typing import Any

from kb.parsing import ParsedDocument

# `{{< param "color" >}}`, `{{% param my.nested.key %}}`, `{{< param 'x' >}}`
PARAM_SHORTCODE = re.compile(
    r"""\{\{([<%])-?[ \t]*param[ \t]+(?:"([^"\n]*)"|'([^'\n]*)'|([^\s"'<>%{}]+))[ \t]*-?[>%]\}\}"""
)
# A section's own page: `_index.md`, `_index.en.md`, `_index.html`
_SECTION_PAGE = re.compile(r"_index(?:\.[\w-]+)?\.\w+")
_TARGETS = ("target", "_target")


def params_filled(documents: Sequence[ParsedDocument]) -> list[ParsedDocument]:
    """``documents`` with each ``param`` shortcode that a page's front matter or a cascade
    resolves replaced by its value, and a warning for each name resolved by neither."""
    cascades = {
        dirname(document.path): cascade
        for document in documents
        if _SECTION_PAGE.fullmatch(basename(document.path))
        and (cascade := _cascaded(document.metadata.get("cascade")))
    }
    return [
        _filled(document, cascades) if PARAM_SHORTCODE.search(document.body) else document
        for document in documents
    ]


def _filled(document: ParsedDocument, cascades: Mapping[str, dict[str, Any]]) -> ParsedDocument:
    layers = [_own_params(document.metadata)]
    layers += [cascades[folder] for folder in _sections_above(document.path) if folder in cascades]
    missing: list[str] = []

    def value(match: re.Match[str]) -> str:
        name = next(group for group in match.groups()[1:] if group is not None)
        for layer in layers:
            found = _looked_up(layer, name)
            if found is not None:
                return found
        if name not in missing:
            missing.append(name)
        return match.group()

    body = PARAM_SHORTCODE.sub(value, document.body)
    warnings = tuple(
        f"{{{{< param {name} >}}}}: no parameter of that name in the page's front matter or a "
        "cascade above it (the site's own parameters are in its configuration, outside the "
        "folder): left out"
        for name in missing
    )
    return replace(document, body=body, warnings=document.warnings + warnings)


def _sections_above(path: str) -> list[str]:
    """The folders whose sections' cascades reach ``path``, the nearest first ("" is the
    site's home page): a section's own page is below the sections above it, not its own."""
    folder = dirname(path)
    if _SECTION_PAGE.fullmatch(basename(path)):
        if not folder:
            return []
        folder = dirname(folder)
    folders = [folder]
    while folder:
        folder = dirname(folder)
        folders.append(folder)
    return folders


def _own_params(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """A page's parameters: the keys its front matter sets (top level, as older sites write
    them), its ``params`` map over them."""
    params = {key.lower(): value for key, value in metadata.items() if key != "cascade"}
    if isinstance(metadata.get("params"), Mapping):
        params |= {key.lower(): value for key, value in metadata["params"].items()}
    return params


def _cascaded(cascade: Any) -> dict[str, Any]:
    """What a section's ``cascade`` sets for every page below it: a map, or the maps of a list
    that name no ``target``, the earlier first."""
    entries = cascade if isinstance(cascade, list) else [cascade]
    params: dict[str, Any] = {}
    for entry in entries:
        if not isinstance(entry, Mapping) or any(key in entry for key in _TARGETS):
            continue
        for key, value in _own_params(entry).items():
            params.setdefault(key, value)
    return params


def _looked_up(params: Mapping[str, Any], name: str) -> str | None:
    """The value of ``name`` (``a.b`` reads into maps, letter case ignored) as Hugo prints
    it, or None when it is not set or is not one value."""
    found: Any = params
    for part in name.lower().split("."):
        if not isinstance(found, Mapping):
            return None
        found = {str(key).lower(): value for key, value in found.items()}.get(part)
    if isinstance(found, bool):
        return "true" if found else "false"
    if isinstance(found, str | int | float | datetime.date):
        return str(found)
    return None
