"""A folder's reStructuredText pages read together, as Sphinx reads a project.

A page alone cannot be read: ``:ref:`install``` names a label that another page defines, and its
text is that section's title; ``:doc:`` names a page by its Sphinx name. So every page is parsed
first (docutils, with Sphinx's directives and roles registered: `kb.rst.sphinx`), the labels and
titles of all of them are collected, and only then is each page written as Markdown
(`kb.rst.markdown`), its references pointing at ``/docs/<page>.rst#<section id>``. The Markdown
goes through the same checks as any Markdown page (`kb.parsing.document_from_fields`): a file-
wide field list at the top (``:audience: internal``) is its front matter.

A page another page includes is part of that page, not a page of its own (Sphinx would publish
it twice, once out of context); it is reported.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from docutils import nodes
from docutils.core import publish_doctree

from kb.parsing import (
    DOCUMENT_SUFFIXES,
    MAX_DOCUMENT_BYTES,
    DocumentParseError,
    ParsedDocument,
    document_from_fields,
    document_text,
)
from kb.rst import sphinx
from kb.rst.conf import CONF_FILE, SphinxConf, sphinx_conf_read
from kb.rst.context import FileReader, RstContext, context_settings
from kb.rst.markdown import MarkdownWriter, section_anchor

sphinx.register()

_SETTINGS = {
    # Messages go into the tree, never to stderr; the writer reports them with their line.
    "report_level": 5,
    "halt_level": 5,
    "warning_stream": False,
    # Sections stay sections: the first one's title is the page's (written as its `#` heading).
    "doctitle_xform": False,
    "docinfo_xform": False,
    "sectsubtitle_xform": False,
    # Docutils' own file reading (csv-table :file:, raw :url:) is off; includes are ours.
    "file_insertion_enabled": False,
    "raw_enabled": False,
    "smart_quotes": False,
    "syntax_highlight": "none",
    "input_encoding": "unicode",
    # docutils reads no page that has a line over 10,000 characters (a table row or a paragraph
    # written on one line): it leaves only an error, and the page's text would be lost. A page
    # is bounded by MAX_DOCUMENT_BYTES already (a 860 kB line reads in about 5 s).
    "line_length_limit": MAX_DOCUMENT_BYTES,
}


@dataclass(frozen=True)
class _Label:
    path: str
    anchor: str  # "" for the page's title
    title: str  # "" when the label is not on a section (Sphinx needs an explicit text then)


@dataclass
class RstPages:
    """What a folder's pages became: a document or an error per page, and the pages that are
    part of another (by the path of the page that includes them)."""

    documents: dict[str, ParsedDocument] = field(default_factory=dict)
    fingerprints: dict[str, bytes] = field(default_factory=dict)  # what a sync hashes
    failures: dict[str, DocumentParseError] = field(default_factory=dict)
    part_of: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # of the folder, not of one page


@dataclass
class _Read:
    raw: bytes
    tree: nodes.document
    context: RstContext
    fields: dict[str, Any]
    key_lines: dict[str, int]
    title_section: nodes.section | None


def rst_pages_read(pages: Mapping[str, bytes], *, read_file: FileReader | None) -> RstPages:
    """Read every page of ``pages`` (path -> bytes); includes are read with ``read_file``."""
    result = RstPages()
    conf = _conf_read(read_file)
    result.warnings += conf.warnings
    local_roles: dict[str, Any] = {
        name: sphinx.extlink_role(url, caption) for name, (url, caption) in conf.extlinks.items()
    }
    if "sphinx_issues" in conf.extensions:
        local_roles = {**sphinx.issue_roles(conf.issues), **local_roles}
    if conf.default_role:
        default = sphinx.role_named(conf.default_role)
        if default is None:
            result.warnings.append(
                f"{CONF_FILE}: default_role {conf.default_role!r} is not a role known here: "
                "single backticks read as emphasis"
            )
        else:
            local_roles[""] = default
    targets = sphinx.crossref_types(raw.decode("utf-8", "replace") for raw in pages.values())
    read: dict[str, _Read] = {}
    for path, raw in pages.items():
        # Per page: docutils drops the default role at the end of every document it parses.
        with sphinx.project_roles(local_roles, targets=targets):
            try:
                read[path] = _parse(path, raw, read_file, conf=conf)
            except DocumentParseError as exc:
                result.failures[path] = exc
    for path, page in read.items():
        for included in page.context.included:
            if included in read and included != path:
                result.part_of.setdefault(included, path)
    pages_kept = {path: page for path, page in read.items() if path not in result.part_of}
    titles = {path: _section_title(page.title_section) for path, page in pages_kept.items()}
    labels = _labels(pages_kept)

    def resolve(kind: str, target: str, from_path: str) -> tuple[str, str] | None:
        if kind in ("ref", "numref", "any"):
            label = labels.get(nodes.fully_normalize_name(target))
            if label is not None:
                fragment = f"#{label.anchor}" if label.anchor else ""
                return f"/docs/{label.path}{fragment}", label.title
            if kind != "any":
                return None
        page = _doc_path(target, from_path)
        if page in titles:
            return f"/docs/{page}", titles[page]
        return None

    for path, page in pages_kept.items():
        writer = MarkdownWriter(path=path, resolver=resolve, title_section=page.title_section)
        written = writer.write(page.tree)
        fields = dict(page.fields)
        if titles.get(path) and "title" not in fields:
            fields["title"] = titles[path]  # as the reader sees it: `code` without its backticks
        if written.description and "description" not in fields:
            fields["description"] = written.description
        navigation = [
            entry for entry in (_doc_path(e, path) for e in written.navigation) if entry in titles
        ]
        if navigation:
            fields["toctree"] = navigation
        warnings = list(written.warnings)
        warnings += [
            f"{included} is included by this page: read as part of it, not as a page"
            for included, by in result.part_of.items()
            if by == path
        ]
        try:
            document = document_from_fields(
                path=path,
                fields=fields,
                key_lines=page.key_lines,
                body=written.markdown,
                warnings=warnings,
            )
        except DocumentParseError as exc:
            result.failures[path] = exc
            continue
        result.documents[path] = document
        result.fingerprints[path] = page.raw + b"\0" + written.markdown.encode()
    return result


def _conf_read(read_file: FileReader | None) -> SphinxConf:
    """The folder's ``conf.py``, if it has one (read, never run: ``kb.rst.conf``)."""
    if read_file is None:
        return SphinxConf()
    try:
        return sphinx_conf_read(read_file(CONF_FILE))
    except ValueError:
        return SphinxConf()


def _parse(path: str, raw: bytes, read_file: FileReader | None, *, conf: SphinxConf) -> _Read:
    text = document_text(path=path, raw=raw)
    added = conf.added_to(text)
    if added:
        text = f"{text.rstrip()}\n\n{added}\n"
    context = RstContext(path=path, read_file=read_file)
    try:
        tree = publish_doctree(
            text, source_path=path, settings_overrides={**_SETTINGS, **context_settings(context)}
        )
    except Exception as exc:
        raise DocumentParseError(
            path=path, message=f"reStructuredText that docutils cannot read ({exc})"
        ) from exc
    sphinx.literal_languages(tree, default=conf.highlight_language)
    fields, key_lines = _file_fields(path, tree)
    title_section = next((c for c in tree.children if isinstance(c, nodes.section)), None)
    return _Read(raw, tree, context, fields, key_lines, title_section)


def _file_fields(path: str, tree: nodes.document) -> tuple[dict[str, Any], dict[str, int]]:
    """The field list at the top of the page (before its title or right under it), taken out of
    the page: Sphinx reads it as the file's metadata, ours as front matter."""
    found: nodes.field_list | None = None
    content = [c for c in tree.children if not isinstance(c, (nodes.comment, nodes.target))]
    if content and isinstance(content[0], nodes.field_list):
        found = content[0]
    elif content and isinstance(content[0], nodes.section):
        inner = [c for c in content[0].children[1:] if not isinstance(c, nodes.comment)]
        if inner and isinstance(inner[0], nodes.field_list):
            found = inner[0]
    if found is None:
        return {}, {}
    found.parent.remove(found)
    fields: dict[str, Any] = {}
    key_lines: dict[str, int] = {}
    for item in found.children:
        name_node = item.next_node(nodes.field_name)
        body = item.next_node(nodes.field_body)
        if name_node is None:
            continue
        name = name_node.astext().strip()
        line = name_node.line or item.line or found.line
        if name in fields:
            raise DocumentParseError(
                path=path, message=f"front matter: '{name}' is given twice", line=line
            )
        fields[name] = " ".join(body.astext().split()) if body is not None else ""
        if line:
            key_lines[name] = line
    return fields, key_lines


def _section_title(section: nodes.section | None) -> str:
    title = section.next_node(nodes.title) if section is not None else None
    return " ".join(title.astext().split()) if title is not None else ""


def _labels(pages: Mapping[str, _Read]) -> dict[str, _Label]:
    """Every explicit target (``.. _label:``) of the pages, by its normalised name."""
    labels: dict[str, _Label] = {}
    for path, page in pages.items():
        tree = page.tree
        for name, explicit in tree.nametypes.items():
            identifier = tree.nameids.get(name)
            element = tree.ids.get(identifier) if identifier else None
            if not explicit or element is None or element.get("refuri"):
                continue  # an implicit (title) name, or a link to another site
            section = element if isinstance(element, nodes.section) else _enclosing(element)
            on_title = section is None or section is page.title_section
            anchor = "" if on_title or section is None else section_anchor(section)
            title = _section_title(element) if isinstance(element, nodes.section) else ""
            labels.setdefault(name, _Label(path, anchor, title))
    return labels


def _enclosing(element: nodes.Element) -> nodes.section | None:
    parent = element.parent
    while parent is not None and not isinstance(parent, nodes.section):
        parent = parent.parent
    return parent


def _doc_path(target: str, from_path: str) -> str:
    """The page a ``:doc:`` or toctree entry names: ``/x`` from the folder's root, anything
    else from the naming page's folder; Sphinx names pages without their suffix."""
    target = target.strip()
    base = "" if target.startswith("/") else posixpath.dirname(from_path)
    joined = posixpath.normpath(posixpath.join(base, target.lstrip("/")))
    return joined if joined.lower().endswith(DOCUMENT_SUFFIXES) else joined + ".rst"
