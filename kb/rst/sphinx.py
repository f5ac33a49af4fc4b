"""What Sphinx adds to reStructuredText, registered with docutils so it parses as Sphinx reads it.

Docutils alone knows neither ``:ref:`` nor ``.. code-block::``: left unregistered, each becomes an
error message in the tree. Here every Sphinx construct a help page uses is a directive or role
that builds plain docutils nodes (or one of the few nodes below, which ``kb.rst.markdown``
writes): prose boxes parse their content, code is a literal block, navigation and index entries
build nothing a reader sees, and references between pages become `page_reference` nodes that are
resolved once every page of the folder is known (`kb.rst.project`).

A role docutils does not know (a project's own, from ``extlinks`` in its ``conf.py``) is read as
its text and reported, as Sphinx would show it if the extension were missing; a directive no
one here knows is read as its content reads, as text or as code (``Unknown``), and reported.
"""

from __future__ import annotations

import ast
import contextlib
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, cast

from docutils import nodes
from docutils.parsers.rst import Directive, directives, roles
from docutils.parsers.rst.states import Inliner

from kb.chunking.markup import CODE_ROLES, EXPLICIT_TARGET, PICTURE_DIRECTIVES
from kb.chunking.prose import SENTENCE_STOP, reads_as_prose
from kb.rst.context import context_of

# ---------------------------------------------------------------------------------------------
# Nodes the writer knows


class page_reference(nodes.Inline, nodes.TextElement):
    """``:ref:`` or ``:doc:``: ``kind``, ``target`` as written, ``explicit`` when the text is
    the writer's own; resolved to a ``/docs`` address by the writer."""


class navigation(nodes.General, nodes.Element):
    """A toctree: the pages it lists (``entries``, targets as written), not text."""


class object_description(nodes.General, nodes.Element):
    """A described object (``.. py:function::``, ``.. data::``, ``.. envvar::``): its
    ``signature`` is a heading under the section it is in, its content the text under it."""


class tab(nodes.General, nodes.Element):
    """One tab of a tab set, or a card: its label (a bold paragraph) heads its content."""


class version_note(nodes.General, nodes.Element):
    """``versionadded`` and its kin: ``label`` ("Added in version 2.0") leads its content."""


class skipped(nodes.General, nodes.Element):
    """A directive whose content is not in the file (autodoc) or is for a builder: reported
    with ``reason``, written as nothing."""


# ---------------------------------------------------------------------------------------------
# Directives


class _Prose(Directive):
    """Content parsed as reStructuredText, inside ``node_class``."""

    has_content = True
    optional_arguments = 1
    final_argument_whitespace = True
    option_spec: ClassVar[dict[str, Callable[[str], Any]]] = {}
    node_class: ClassVar[type[nodes.Element]] = nodes.container

    def run(self) -> list[nodes.Node]:
        node = self.node_class()
        self._describe(node)
        self.state.nested_parse(self.content, self.content_offset, node)
        return [node]

    def _describe(self, node: nodes.Element) -> None:
        pass


class _AnyOptions(dict[str, Callable[[str], Any]]):
    """An option spec that takes every option as text: the options of Sphinx and its extensions'
    directives say how to show the content (``:maxdepth:``, ``:sync:``), never what it says."""

    def __contains__(self, key: object) -> bool:
        return True

    def __bool__(self) -> bool:  # docutils reads option lines only when a spec is "true"
        return True

    def __getitem__(self, key: str) -> Callable[[str], Any]:
        return directives.unchanged


class Container(_Prose):
    """Content that reads as prose in any builder (``only``, ``hlist``, ``glossary``, grids)."""

    option_spec = _AnyOptions()


class SeeAlso(_Prose):
    option_spec = _AnyOptions()

    def run(self) -> list[nodes.Node]:
        node = nodes.admonition(classes=["seealso"])
        node += nodes.title("", "See also")
        if self.arguments:
            text_nodes, _ = self.state.inline_text(self.arguments[0], self.lineno)
            node += nodes.paragraph("", "", *text_nodes)
        self.state.nested_parse(self.content, self.content_offset, node)
        return [node]


class Tab(_Prose):
    """A tab (sphinx-tabs, sphinx-design) or a card: its label, read as inline text (a
    substitution, a role), heads it in bold."""

    option_spec = _AnyOptions()
    node_class = tab

    def _describe(self, node: nodes.Element) -> None:
        if self.arguments:
            label = " ".join(self.arguments[0].split())
            text_nodes, messages = self.state.inline_text(label, self.lineno)
            node += [nodes.paragraph("", "", nodes.strong("", "", *text_nodes)), *messages]


class VersionNote(_Prose):
    required_arguments = 1
    optional_arguments = 1
    final_argument_whitespace = True
    node_class = version_note
    labels: ClassVar[dict[str, str]] = {
        "versionadded": "Added in version {}",
        "versionchanged": "Changed in version {}",
        "deprecated": "Deprecated since version {}",
        "versionremoved": "Removed in version {}",
        # Sphinx 8's names for the same directives
        "version-added": "Added in version {}",
        "version-changed": "Changed in version {}",
        "version-deprecated": "Deprecated since version {}",
        "version-removed": "Removed in version {}",
    }

    def run(self) -> list[nodes.Node]:
        node = version_note()
        node["label"] = self.labels[self.name].format(self.arguments[0])
        if len(self.arguments) > 1:
            text_nodes, _ = self.state.inline_text(self.arguments[1], self.lineno)
            node += nodes.paragraph("", "", *text_nodes)
        self.state.nested_parse(self.content, self.content_offset, node)
        return [node]


class Code(Directive):
    """``code-block``, ``sourcecode``, ``code``: the content is code, in its language."""

    has_content = True
    optional_arguments = 1
    final_argument_whitespace = True
    option_spec = _AnyOptions()

    def run(self) -> list[nodes.Node]:
        language = self.arguments[0] if self.arguments else ""
        text = "\n".join(self.content)
        node = nodes.literal_block(text, text, language=language)
        caption = self.options.get("caption")
        if caption:  # reStructuredText itself: ``/etc/hosts`` is code
            text_nodes, messages = self.state.inline_text(caption, self.lineno)
            return [nodes.paragraph("", "", nodes.strong("", "", *text_nodes)), *messages, node]
        return [node]


class DoctestCode(Code):
    """``sphinx.ext.doctest``'s ``testcode``, ``doctest`` and ``testoutput``: code (or its
    output) in the language the directive implies; its argument names a test group, not one."""

    def run(self) -> list[nodes.Node]:
        text = "\n".join(self.content)
        return [nodes.literal_block(text, text, language=DOCTEST_DIRECTIVES[self.name])]


class Highlight(Directive):
    """``.. highlight:: console``: the language of the page's literal blocks that name none, from
    here on (``literal_languages``). Leaves a marker, never text."""

    required_arguments = 1
    option_spec = _AnyOptions()

    def run(self) -> list[nodes.Node]:
        marker = nodes.comment()
        marker["highlight"] = self.arguments[0].strip()
        return [marker]


# Sphinx's names for Python; "default" is Python when the block reads as Python, else no language.
_PYTHON_LANGUAGES = frozenset({"default", "python", "python3", "py", "py3"})


def literal_languages(document: nodes.document, *, default: str | None = None) -> None:
    """Give each literal block that names no language the one Sphinx highlights it in: the last
    ``.. highlight::`` before it on the page, else ``conf.py``'s ``highlight_language``, else
    Sphinx's "default" (Python, a ``>>>`` session as one, when the block reads as Python; no
    language otherwise). "For example::" then an indented block is how Sphinx pages show code
    (Flask's docs: 178 of their 476 blocks), and a block without a language reads as an example
    or output, never as code to quote (``assistant.units``)."""
    current = default or "default"
    for node in document.findall(nodes.Element):
        if isinstance(node, nodes.comment):
            current = node.get("highlight", current)
            continue
        if not isinstance(node, nodes.literal_block):
            continue
        classes = [name for name in node["classes"] if name not in ("code", "literal-block")]
        if node.get("language") or classes:
            continue
        language = _highlighted_as(node.astext(), current)
        if language:
            node["language"] = language


def _highlighted_as(text: str, language: str) -> str:
    if language == "none":
        return ""
    if language not in _PYTHON_LANGUAGES:
        return language
    if text.lstrip().startswith(">>>"):
        return "pycon"
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        # not Python, or nested deeper than Python's parser goes ("-" * 9000 + "1")
        return "" if language == "default" else "python"
    return "python"


class ObjectDescription(Directive):
    """``.. py:function:: name(args)`` and the other object directives: the signature heads
    the description (Sphinx lists it in the page's contents), the content is its text."""

    has_content = True
    required_arguments = 1
    final_argument_whitespace = True
    option_spec = _AnyOptions()

    def run(self) -> list[nodes.Node]:
        node = object_description()
        # Several signatures may be given, one a line; the first names the entry.
        node["signature"] = self.arguments[0].split("\n")[0].strip().rstrip("\\").strip()
        self.state.nested_parse(self.content, self.content_offset, node)
        return [node]


class Navigation(Directive):
    """``toctree``: the pages listed are the site's navigation, recorded, never text."""

    has_content = True
    option_spec = _AnyOptions()

    def run(self) -> list[nodes.Node]:
        node = navigation()
        entries = []
        for line in self.content:
            entry = line.strip()
            if not entry:
                continue
            explicit = EXPLICIT_TARGET.fullmatch(entry)
            entries.append(explicit.group(2) if explicit else entry)
        node["entries"] = entries
        return [node]


class Nothing(Directive):
    """Directives that set up the build (``currentmodule``, ``index``, ...)."""

    has_content = True
    optional_arguments = 10
    final_argument_whitespace = True
    option_spec = _AnyOptions()

    def run(self) -> list[nodes.Node]:
        return []


class Skipped(Nothing):
    """API documentation built from code (autodoc): the text is not in the folder."""

    def run(self) -> list[nodes.Node]:
        node = skipped()
        target = self.arguments[0] if self.arguments else ""
        node["reason"] = (
            f"line {self.lineno}: .. {self.name}:: {target} is written from the code by Sphinx "
            "(autodoc); its text is not in the folder and is left out"
        )
        return [node]


class Unknown(Directive):
    """A directive neither docutils nor Sphinx knows: a project's own extension (a box of
    implementation notes, a changelog entry, a shell session) or another domain's objects
    (``.. http:get:: /api/v2/project/``). The site shows its content in a form we cannot know,
    so it is read as what it reads as, and reported with how it was read:

    - a domain's directive (``name:type``) with an argument describes an object, as Sphinx's
      own domains do: its argument heads its content; so does one whose argument is a call
      signature or a constant's name over content (a project's own object types: Python's
      ``.. coroutinefunction:: sleep(delay, result=None)``, ``.. opcode:: NOP``);
    - content that parses without a complaint and reads as prose (`kb.chunking.prose`: most of
      its paragraphs' text in paragraphs that end as sentences, read as titles or are runs of
      plain words) is text (an argument that is a sentence leads it, under the directive's
      name: "*Availability:* Unix, not WASI.");
    - any other content (commands, code) is code;
    - with no content, what it shows is built by the extension and is left out."""

    has_content = True
    optional_arguments = 1
    final_argument_whitespace = True
    option_spec = _AnyOptions()

    def run(self) -> list[nodes.Node]:
        text = "\n".join(self.content).strip("\n")
        signature = self.arguments[0].split("\n")[0].strip() if self.arguments else ""
        if signature and (":" in self.name or (text and _SIGNATURE.match(signature))):
            node = object_description()
            node["signature"] = signature
            self.state.nested_parse(self.content, self.content_offset, node)
            return [self._report("read as the description of its argument"), node]
        # an argument that is a sentence (``.. availability:: Unix, not WASI.``; content written
        # right under the directive's line joins its argument: ``.. deprecated-removed:: 3.4
        # 3.6`` then "Use X instead.")
        lead = self.arguments[0] if self.arguments else ""
        if not SENTENCE_STOP.search(lead.strip()):
            lead = ""
        if not (text or lead):
            return [self._report("it has no content in the page; what it shows is left out")]
        prose = nodes.container()
        if lead:  # under the directive's name, as a version note is under its label
            text_nodes, _ = self.state.inline_text(" ".join(lead.split()), self.lineno)
            label = nodes.emphasis("", self.name.replace("-", " ").capitalize() + ":")
            prose += nodes.paragraph("", "", label, nodes.Text(" "), *text_nodes)
        self.state.nested_parse(self.content, self.content_offset, prose)
        if _reads_as_text(prose):
            return [self._report("its content is read as text"), prose]
        return [self._report("its content is read as code"), nodes.literal_block(text, text)]

    def _report(self, how: str) -> nodes.system_message:
        report = self.reporter.warning(
            f'unknown directive ".. {self.name}::": {how}', line=self.lineno
        )
        report["read_as"] = how  # our own report, not a complaint about the content
        return report


def _reads_as_text(parsed: nodes.Element) -> bool:
    """Content parsed as reStructuredText reads as text: docutils did not complain, and its
    paragraphs (their text outside inline code) read as prose (`kb.chunking.prose`)."""
    if any(
        message["level"] >= 2 and "read_as" not in message
        for message in parsed.findall(nodes.system_message)
    ):
        return False
    return reads_as_prose(
        "".join(text.astext() for text in paragraph.findall(nodes.Text) if not _in_code(text))
        for paragraph in parsed.findall(nodes.paragraph)
        if not isinstance(paragraph.parent, nodes.system_message)  # a nested directive's report
    )


def _in_code(text: nodes.Text) -> bool:
    return isinstance(text.parent, nodes.literal)


class Include(Directive):
    """``include`` and ``literalinclude``, read from the synced folder and nowhere else
    (`kb.rst.context.RstContext.include_read`); a file outside it is refused and reported."""

    required_arguments = 1
    final_argument_whitespace = True
    has_content = False
    option_spec = _AnyOptions()

    def run(self) -> list[nodes.Node]:
        context = context_of(self.state.document)
        source = self.state_machine.get_source(self.lineno - 1) or context.path
        try:
            included, text = context.include_read(self.arguments[0], from_source=source)
        except ValueError as exc:
            return [self.state.document.reporter.warning(str(exc), line=self.lineno)]
        text = _clipped(text, self.options)
        if self.name == "literalinclude" or "literal" in self.options or "code" in self.options:
            language = self.options.get("language") or self.options.get("code") or ""
            node = nodes.literal_block(text, text, language=language)
            return [node]
        self.state_machine.insert_input(text.splitlines(), included)
        return []


def _clipped(text: str, options: dict[str, Any]) -> str:
    """The part of an included file its options select (``start-after``, ``lines``, ...)."""
    after = options.get("start-after")
    if after and after in text:
        text = text.split(after, 1)[1]
    before = options.get("end-before")
    if before and before in text:
        text = text.split(before, 1)[0]
    lines = text.split("\n")
    chosen = options.get("lines")
    if chosen:
        picked: list[str] = []
        for part in str(chosen).split(","):
            start, _, end = part.strip().partition("-")
            if start.isdigit() or end.isdigit():
                first = int(start) - 1 if start.isdigit() else 0
                last = int(end) if end.isdigit() else (len(lines) if _ else first + 1)
                picked += lines[first:last]
        lines = picked
    start_line, end_line = options.get("start-line"), options.get("end-line")
    if start_line or end_line:
        lines = lines[int(start_line or 0) : int(end_line) if end_line else None]
    return "\n".join(lines).strip("\n")


PROSE_DIRECTIVES: dict[str, type[Directive]] = {
    **dict.fromkeys(
        ("only", "hlist", "glossary", "centered", "tabs", "tab-set", "grid", "cards",
         "container-fluid", "div", "margin", "sidebar-container"),
        Container,
    ),
    **dict.fromkeys(
        ("tab", "group-tab", "tab-item", "card", "grid-item-card", "grid-item", "dropdown"), Tab
    ),
    "seealso": SeeAlso,
    **dict.fromkeys(VersionNote.labels, VersionNote),
}  # fmt: skip
CODE_DIRECTIVES = ("code-block", "sourcecode", "code", "code-tab", "productionlist")
# `sphinx.ext.doctest`: the page shows the code and its output (its setup and cleanup it hides)
DOCTEST_DIRECTIVES = {"testcode": "python", "doctest": "pycon", "testoutput": "none"}
HIDDEN_DIRECTIVES = (
    "index", "currentmodule", "py:currentmodule", "module", "py:module",
    "rst-class", "tabularcolumns", "sectionauthor", "moduleauthor", "codeauthor", "todo",
    "default-domain", "program", "cssclass", "toctree-hidden", "testsetup", "testcleanup",
    # where the domains' names that follow live: set up for the build, never shown
    "c:namespace", "c:namespace-push", "c:namespace-pop", "cpp:namespace",
    "cpp:namespace-push", "cpp:namespace-pop", "js:module", "rst:directive:option-group",
    # pictures: their source is not what the page shows
    *sorted(PICTURE_DIRECTIVES),
)  # fmt: skip
AUTODOC_DIRECTIVES = (
    "automodule", "autoclass", "autofunction", "automethod", "autoattribute", "autodata",
    "autoexception", "autodecorator", "autoproperty", "autosummary", "autoprogram",
    "click", "argparse",
)  # fmt: skip
_OBJECT_TYPES = (
    "function", "class", "method", "classmethod", "staticmethod", "attribute", "property",
    "data", "exception", "decorator", "decoratormethod", "type",
)  # fmt: skip
# Sphinx's other domains describe their objects the same way (C and C++ APIs, JavaScript,
# reStructuredText's own directives and roles in Sphinx's docs)
_DOMAIN_OBJECT_TYPES = {
    "c": ("function", "macro", "struct", "union", "enum", "enumerator", "type", "var", "member"),
    "cpp": (
        "class", "struct", "function", "member", "var", "type", "concept", "enum",
        "enum-struct", "enum-class", "enumerator", "union", "alias",
    ),
    "js": ("function", "method", "class", "data", "attribute"),
    "rst": ("directive", "directive:option", "role"),
}  # fmt: skip
OBJECT_DIRECTIVES = (
    *_OBJECT_TYPES, *(f"py:{name}" for name in _OBJECT_TYPES),
    *(f"{domain}:{name}" for domain, names in _DOMAIN_OBJECT_TYPES.items() for name in names),
    "envvar", "option", "cmdoption", "describe", "object", "confval", "setting",
    "std:envvar", "std:option", "std:cmdoption",
)  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Roles

RoleResult = tuple[Sequence[nodes.Node], Sequence[nodes.system_message]]


def _title_and_target(text: str) -> tuple[str, str, bool]:
    """``Title <target>`` as (title, target, explicit); else the text twice."""
    match = EXPLICIT_TARGET.fullmatch(text.strip())
    if match and match.group(1):
        return match.group(1), match.group(2).strip(), True
    return text, text.strip(), False


def _page_reference_role(
    name: str, rawtext: str, text: str, lineno: int, inliner: Inliner, options: Any = None,
    content: Any = None,
) -> RoleResult:  # fmt: skip
    title, target, explicit = _title_and_target(nodes.unescape(text))
    kind = name.split(":")[-1]
    if kind in ("ref", "numref") and not explicit:
        title = target
    node = page_reference(rawtext, title, kind=kind, target=target, explicit=explicit)
    node.line = lineno
    return [node], []


def _literal_role(
    name: str, rawtext: str, text: str, lineno: int, inliner: Inliner, options: Any = None,
    content: Any = None,
) -> RoleResult:  # fmt: skip
    """Code-like roles (an API object, a file, a command): the shown text, as code."""
    title, target, explicit = _title_and_target(nodes.unescape(text))
    shown = title if explicit else target
    if not explicit and name not in ("file", "samp", "download"):
        shown = shown.lstrip("!")
        if shown.startswith("~"):
            shown = shown[1:].rsplit(".", 1)[-1]
        if name.split(":")[-1] in ("func", "meth") and not shown.endswith(")"):
            shown += "()"  # Sphinx's add_function_parentheses
    if name in ("file", "samp"):
        shown = re.sub(r"\{([^{}]*)\}", r"\1", shown)  # `{variable}` parts
    return [nodes.literal(rawtext, shown)], []


def _text_role(
    name: str, rawtext: str, text: str, lineno: int, inliner: Inliner, options: Any = None,
    content: Any = None,
) -> RoleResult:  # fmt: skip
    """Roles shown as their text: a term, a label, a menu path, an abbreviation."""
    title, target, explicit = _title_and_target(nodes.unescape(text))
    shown = title if explicit else target
    if name == "guilabel":
        shown = re.sub(r"&(?!&)", "", shown).replace("&&", "&")
    elif name == "menuselection":
        shown = (
            re.sub(r"&(?!&)", "", shown).replace("&&", "&").replace("-->", "\u203a")
        )  # Sphinx's ‣-like separator
    elif name == "kbd":
        return [nodes.literal(rawtext, shown)], []
    elif name == "dfn":
        return [nodes.emphasis(rawtext, shown)], []
    return [nodes.inline(rawtext, shown)], []


def _unknown_role(
    name: str, rawtext: str, text: str, lineno: int, inliner: Inliner, options: Any = None,
    content: Any = None,
) -> RoleResult:  # fmt: skip
    title, target, explicit = _title_and_target(nodes.unescape(text))
    message = inliner.reporter.warning(
        f'unknown role ":{name}:" ({rawtext.strip()}): read as its text', line=lineno
    )
    return [nodes.inline(rawtext, title if explicit else target)], [message]


PAGE_REFERENCE_ROLES = ("ref", "doc", "std:ref", "std:doc", "numref", "any")
TEXT_ROLES = ("term", "guilabel", "kbd", "menuselection", "abbr", "dfn", "manpage", "newsgroup")


def extlink_role(url: str, caption: str | None) -> Callable[..., RoleResult]:
    """A role ``conf.py`` defines with ``extlinks``: ``:issue:`123``` is a link to
    ``url % "123"`` that reads ``caption % "123"``."""

    def role(
        name: str, rawtext: str, text: str, lineno: int, inliner: Inliner, options: Any = None,
        content: Any = None,
    ) -> RoleResult:  # fmt: skip
        title, target, explicit = _title_and_target(nodes.unescape(text))
        shown = title if explicit else (caption.replace("%s", target) if caption else target)
        address = url.replace("%s", target)
        return [nodes.reference(rawtext, shown, refuri=address)], []

    return role


_GITHUB = "https://github.com"
# sphinx-issues' roles: (setting prefix, the page under a GitHub repository, what a link reads
# before the name); a user's page is under no repository
_ISSUE_ROLES = {
    "issue": ("issues", "issues/{issue}", "#"),
    "pr": ("issues_pr", "pull/{pr}", "#"),
    "commit": ("issues_commit", "commit/{commit}", "@"),
    "user": ("issues_user", "", "@"),
}
_OTHER_REPOSITORY = re.compile(r"([\w.-]+/[\w.-]+)([#@])(\S+)")


def issue_roles(settings: Mapping[str, str]) -> dict[str, Callable[..., RoleResult]]:
    """The roles of the sphinx-issues extension, as its ``conf.py`` settings (``issues_github_path
    = "acme/billing"``, or ``issues_uri`` and the rest) make them: ``:issue:`42``` reads "#42"
    and links to the issue; ``:issue:`12,13``` is two links, ``:issue:`other/tool#7``` another
    project's; ``:pr:``, ``:commit:`` (its first seven characters, "@6bb9124"), ``:user:``
    ("@ada") and ``:pypi:`` likewise."""
    path = settings.get("issues_default_group_project") or settings.get("issues_github_path", "")
    group, _, project = path.partition("/")
    found: dict[str, Callable[..., RoleResult]] = {"pypi": _issue_role("pypi", "", "")}
    for kind, (prefix, page, mark) in _ISSUE_ROLES.items():
        default = f"{_GITHUB}/{{group}}/{{project}}/{page}" if page else f"{_GITHUB}/{{{kind}}}"
        uri = settings.get(f"{prefix}_uri") or default
        uri = uri.replace("{group}", group).replace("{project}", project)
        found[kind] = _issue_role(kind, uri, settings.get(f"{prefix}_prefix", mark))
    return found


def _issue_role(kind: str, uri: str, mark: str) -> Callable[..., RoleResult]:
    """One sphinx-issues role: ``kind`` is its name and the placeholder ``uri`` holds."""
    page = _ISSUE_ROLES[kind][1] if kind in _ISSUE_ROLES else ""
    placeholder = f"{{{kind}}}"

    def link(target: str, shown: str | None) -> nodes.reference:
        other = _OTHER_REPOSITORY.fullmatch(target) if page else None
        if kind == "pypi":
            address, text = f"https://pypi.org/project/{target}", target
        elif other is not None:  # `other/tool#7`: the same page of another repository
            repository, _, number = other.groups()
            address, text = f"{_GITHUB}/{repository}/{page}".replace(placeholder, number), target
        else:
            text = mark + (target[:7] if kind == "commit" else target)
            address = uri.replace(placeholder, target)
        return nodes.reference(target, shown or text, refuri=address)

    def role(
        name: str, rawtext: str, text: str, lineno: int, inliner: Inliner, options: Any = None,
        content: Any = None,
    ) -> RoleResult:  # fmt: skip
        title, target, explicit = _title_and_target(nodes.unescape(text))
        if explicit:
            return [link(target, title)], []
        found: list[nodes.Node] = []
        for each in (part.strip() for part in target.split(",")):
            if each:
                found += [nodes.Text(", ")] if found else []
                found.append(link(each, None))
        return found, []

    return role


def role_named(name: str) -> Callable[..., RoleResult] | None:
    """The role registered as ``name`` (``conf.py``'s ``default_role``), or None."""
    found = _ROLES.get(name.lower()) or _ROLE_REGISTRY.get(name.lower())
    return found if callable(found) else None


# A directive line: its indent, its name, its argument (if any)
_DIRECTIVE_LINE = re.compile(r"([ \t]*)\.\.[ \t]+([A-Za-z][\w-]*(?::[\w-]+)*)::(?:[ \t]+(\S.*))?")
_OPTION_LINE = re.compile(r"[ \t]+:[\w-]+:(?:[ \t].*)?")


def crossref_types(pages: Iterable[str]) -> frozenset[str]:
    """The directives ``pages`` use as a project's own cross-reference types (Sphinx's
    ``add_crossref_type``, as Scrapy's ``.. stat:: name`` and pytest's ``.. fixture:: name``):
    names docutils and Sphinx do not know, written with an argument and never with content, nor
    with an argument that is a sentence (``.. availability:: Unix, not WASI.`` shows it). Such a
    directive marks a target and shows nothing, and the role of its name refers to it."""
    used: set[str] = set()
    with_content: set[str] = set()
    for text in pages:
        lines = text.splitlines()
        for number, line in enumerate(lines):
            found = _DIRECTIVE_LINE.fullmatch(line)
            if found is None or _known_directive(found.group(2)):
                continue
            name = found.group(2).lower()
            after = number + 1  # the first line after its options, blank lines skipped
            while after < len(lines) and (
                not lines[after].strip() or _OPTION_LINE.fullmatch(lines[after])
            ):
                after += 1
            content = lines[after].expandtabs() if after < len(lines) else ""
            indent = len(found.group(1).expandtabs())
            argument = found.group(3) or ""
            if (
                not argument
                or SENTENCE_STOP.search(argument.strip())  # a sentence shown, not a name
                or len(content) - len(content.lstrip()) > indent
            ):
                with_content.add(name)
            used.add(name)
    return frozenset(used - with_content)


def _known_directive(name: str) -> bool:
    name = name.lower()
    return name in _DIRECTIVES or name in _DIRECTIVE_REGISTRY


@contextlib.contextmanager
def project_roles(
    local: dict[str, Callable[..., RoleResult]], *, targets: Iterable[str] = ()
) -> Iterator[None]:
    """The roles one project's ``conf.py`` adds (``""`` is its default role), and its own
    cross-reference types (``targets``: a directive that shows nothing, a role read as code),
    while one page is read: docutils keeps roles and directives in module tables, so they are
    put there and taken out again, as Sphinx does for its default role. One page at a time per
    process (a lock), so two threads reading two projects never see each other's."""
    targets = tuple(targets)
    local = {**{name: _literal_role for name in targets}, **local}
    with _PROJECT_ROLES_LOCK:
        saved = {name: _ROLES[name] for name in local if name in _ROLES}
        _ROLES.update(local)
        _DIRECTIVES.update({name: Nothing for name in targets})
        try:
            yield
        finally:
            for name in local:
                _ROLES.pop(name, None)
            _ROLES.update(saved)
            for name in targets:
                _DIRECTIVES.pop(name, None)


def _role_with_fallback(
    role_name: str, language_module: Any, lineno: int, reporter: Any
) -> tuple[Any, list[Any]]:
    found, messages = _docutils_role(role_name, language_module, lineno, reporter)
    if found is None:
        return _unknown_role, []
    return found, messages


# A call signature (`sleep(delay, result=None)`, `Lock.acquire()`, `w(here)`) or a constant's
# name in capitals (`NOP`, `LOAD_FAST (var_num)`): what an object type's directive describes
_SIGNATURE = re.compile(r"[A-Za-z_][\w.-]*[ \t]*\(.*\)|[A-Z][A-Z0-9_]+(?:[ \t]|$)")


def _directive_with_fallback(
    directive_name: str, language_module: Any, document: nodes.document
) -> tuple[Any, list[Any]]:
    found, messages = _docutils_directive(directive_name, language_module, document)
    return (Unknown if found is None else found), messages


def register() -> None:
    """Teach docutils Sphinx's directives and roles (idempotent; docutils keeps them in
    module-level tables, as Sphinx itself registers them)."""
    for name, directive in PROSE_DIRECTIVES.items():
        directives.register_directive(name, directive)
    for name in CODE_DIRECTIVES:
        directives.register_directive(name, Code)
    for name in DOCTEST_DIRECTIVES:
        directives.register_directive(name, DoctestCode)
    for name in HIDDEN_DIRECTIVES:
        directives.register_directive(name, Nothing)
    for name in AUTODOC_DIRECTIVES:
        directives.register_directive(name, Skipped)
    for name in OBJECT_DIRECTIVES:
        directives.register_directive(name, ObjectDescription)
    directives.register_directive("highlight", Highlight)
    directives.register_directive("toctree", Navigation)
    directives.register_directive("include", Include)
    directives.register_directive("literalinclude", Include)
    for names, role in (
        (PAGE_REFERENCE_ROLES, _page_reference_role),
        (CODE_ROLES, _literal_role),
        (TEXT_ROLES, _text_role),
    ):
        for name in names:
            roles.register_local_role(name, cast(Any, role))
    # Like Sphinx, which replaces this lookup while it reads: an unknown role is its text.
    roles.role = _role_with_fallback
    directives.directive = _directive_with_fallback


_docutils_role = roles.role
_docutils_directive = directives.directive
# Docutils' role tables (module globals it has no accessor for): the local roles, where the
# default role lives under "", and the canonical ones.
_ROLES: dict[str, Any] = vars(roles)["_roles"]
_ROLE_REGISTRY: dict[str, Any] = vars(roles)["_role_registry"]
_PROJECT_ROLES_LOCK = threading.Lock()
# Docutils' directive tables: the ones registered (as ``register`` does), the canonical ones
_DIRECTIVES: dict[str, Any] = vars(directives)["_directives"]
_DIRECTIVE_REGISTRY: dict[str, Any] = vars(directives)["_directive_registry"]
