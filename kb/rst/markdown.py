"""A docutils tree written as the Markdown our pages are made of, so one chunker and one renderer
serve both formats.

What each construct becomes is chosen so the existing Markdown path reads it as it reads the
same idea written in Markdown: sections are ATX headings whose ``{#id}`` is docutils' id (the
anchor Sphinx gives the section, so ``:ref:`` links land on it), admonitions are MkDocs
admonitions (``!!! note "Note"`` and indented content, which the scanner unwraps; inside a block
quote, which holds no such box, GitHub alerts: ``> [!note] Note``), literal blocks are fenced
code, tables are pipe tables, definition and field lists are bold terms over their text.
Paragraphs are written on one line each, so a line of prose can never start a Markdown block it
does not mean; text is escaped where Markdown would read it as markup.

Nothing docutils reports is written: its messages (a bad underline, how an unknown directive
was read) become warnings with their line, and the writer's own losses (an unresolved
``:ref:``, raw HTML, API text built from code) are warnings too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from docutils import nodes

from kb.chunking.markup import code_span
from kb.rst import sphinx

# (kind, target, from_path) -> (address, title) for a ``:ref:`` or ``:doc:``, or None
Resolver = Callable[[str, str, str], tuple[str, str] | None]

_ADMONITIONS = {
    "note": "Note", "warning": "Warning", "tip": "Tip", "hint": "Hint", "important": "Important",
    "caution": "Caution", "danger": "Danger", "error": "Error", "attention": "Attention",
}  # fmt: skip
_MAX_LEVEL = 6
# `*` between spaces (`2 * 3`) and `_` inside a word (`snake_case`) can never be emphasis.
_ESCAPED = re.compile(r"[\\`\[\]<]|(?<!\s)\*|\*(?!\s)|(?<![^\W_])_|_(?![^\W_])")
# What a line must not start with, or Markdown (or our scanner) reads a block there.
_LINE_START = re.compile(
    r"(#|>|[-+*](?=[ \t]|$)|=|\||~~~|:::|!!!|\?\?\?|\+\+\+|import[ \t]|\d{1,9}(?=[.)]))"
)
# `werkzeug:test`: intersphinx, a page of another Sphinx project
_UNDEFINED_SUBSTITUTION = re.compile(r'Undefined substitution referenced: "([^"]+)"\.')
_INTERSPHINX = re.compile(r"([A-Za-z][\w-]*):(?!/)\S")


@dataclass
class Written:
    markdown: str
    warnings: list[str] = field(default_factory=list)
    navigation: list[str] = field(default_factory=list)  # toctree entries as written
    description: str = ""  # from ``.. meta:: :description:``


class MarkdownWriter:
    def __init__(self, *, path: str, resolver: Resolver, title_section: nodes.Node | None):
        self._path = path
        self._resolve = resolver
        self._title_section = title_section  # the section whose heading is the page title
        self._ids: dict[str, str] = {}  # any id docutils gave a section -> its first id
        self.written = Written("")
        self._quotes = 0  # block quotes around the block being written

    def write(self, document: nodes.document) -> Written:
        for section in document.findall(nodes.section):
            for identifier in section["ids"]:
                self._ids.setdefault(identifier, section_anchor(section))
        # docutils' transforms (substitutions, link targets) leave their messages beside the
        # tree, not in it
        for message in (*document.findall(nodes.system_message), *document.transform_messages):
            self._message(message)
        blocks = self._blocks(document.children, level=0)
        self.written.markdown = "\n\n".join(block for block in blocks if block) + "\n"
        return self.written

    # -- messages --------------------------------------------------------------------------

    def _warn(self, message: str) -> None:
        if message not in self.written.warnings:
            self.written.warnings.append(message)

    def _message(self, message: nodes.system_message) -> None:
        if message["level"] < 2:
            return
        text = " ".join(message.children[0].astext().split()) if message.children else ""
        undefined = _UNDEFINED_SUBSTITUTION.fullmatch(text)
        if undefined:
            text = f"|{undefined.group(1)}| is not defined for this page: shown as written"
        source = message.get("source") or self._path
        where = f"line {message['line']}" if message.get("line") else ""
        if source != self._path:
            where = f"{source} {where}".strip()
        self._warn(f"{where}: {text}" if where else text)

    # -- blocks ----------------------------------------------------------------------------

    def _blocks(self, children: Iterable[nodes.Node], *, level: int) -> list[str]:
        blocks: list[str] = []
        for child in children:
            blocks += self._block(child, level=level)
        return [block for block in blocks if block.strip()]

    def _block(self, node: nodes.Node, *, level: int) -> list[str]:
        if isinstance(node, nodes.Text):
            return [_paragraph(_escape(node.astext()))]
        if isinstance(
            node,
            (nodes.comment, nodes.substitution_definition, nodes.target, nodes.system_message,
             nodes.pending, nodes.transition, nodes.decoration, nodes.title, nodes.subtitle),
        ):  # fmt: skip
            return []
        if isinstance(node, nodes.section):
            return self._section(node, level=level)
        if isinstance(node, nodes.paragraph):
            return [_paragraph(self._inline(node))]
        if isinstance(node, nodes.bullet_list):
            return [self._list(node, level=level, ordered=False)]
        if isinstance(node, nodes.enumerated_list):
            return [self._list(node, level=level, ordered=True)]
        if isinstance(node, nodes.definition_list):
            return self._definitions(node, level=level)
        if isinstance(node, nodes.field_list):
            return self._fields(node, level=level)
        if isinstance(node, nodes.option_list):
            return [self._options(node)]
        if isinstance(node, (nodes.literal_block, nodes.doctest_block, nodes.math_block)):
            return [self._code(node)]
        if isinstance(node, nodes.block_quote):
            self._quotes += 1
            try:
                inner = self._blocks(node.children, level=level)
            finally:
                self._quotes -= 1
            return ["\n".join(f"> {line}".rstrip() for line in "\n\n".join(inner).split("\n"))]
        if isinstance(node, nodes.attribution):
            return [_paragraph("— " + self._inline(node))]
        if isinstance(node, nodes.line_block):
            return ["\n".join(self._lines(node))]
        if isinstance(node, nodes.Admonition) and isinstance(node, nodes.Element):
            return [self._admonition(node, level=level)]
        if isinstance(node, nodes.table):
            return self._table(node)
        if isinstance(node, nodes.image):
            return [self._image(node)]
        if isinstance(node, nodes.figure):
            return self._blocks(node.children, level=level)
        if isinstance(node, (nodes.caption, nodes.rubric)):
            text = self._inline(node)
            return [_paragraph(f"**{text}**" if isinstance(node, nodes.rubric) else text)]
        if isinstance(node, (nodes.footnote, nodes.citation)):
            return self._note(node, level=level)
        if isinstance(node, (nodes.topic, nodes.sidebar)):
            if "contents" in node["classes"]:
                return []  # a table of contents: navigation
            return self._titled(node, level=level)
        if isinstance(node, nodes.raw):
            self._warn(f"line {node.line}: raw {node.get('format', '')} content is left out")
            return []
        if isinstance(node, nodes.Element) and node.tagname == "meta":
            if node.get("name") == "description":
                self.written.description = str(node.get("content", ""))
            return []
        if isinstance(node, sphinx.navigation):
            self.written.navigation += node["entries"]
            return []
        if isinstance(node, sphinx.skipped):
            self._warn(node["reason"])
            return []
        if isinstance(node, sphinx.object_description):
            if not node.children and _heads_its_section(node):
                return []  # a target (Scrapy's `.. setting:: X` over the section on X)
            heading = "#" * min(level + 1, _MAX_LEVEL) + " " + code_span(node["signature"])
            return [heading, *self._blocks(node.children, level=level + 1)]
        if isinstance(node, sphinx.version_note):
            return self._version_note(node, level=level)
        if isinstance(node, nodes.TextElement):
            return [_paragraph(self._inline(node))]
        if isinstance(node, nodes.Element):
            return self._blocks(node.children, level=level)
        return []

    def _section(self, node: nodes.section, *, level: int) -> list[str]:
        level += 1
        title = node.next_node(nodes.title)
        text = " ".join(self._inline(title).split()) if title is not None else ""
        anchor = ""
        if node is not self._title_section and node["ids"]:
            anchor = f" {{#{section_anchor(node)}}}"
        heading = "#" * min(level, _MAX_LEVEL) + " " + (text or "(untitled)") + anchor
        return [heading, *self._blocks(node.children, level=level)]

    def _list(self, node: nodes.Element, *, level: int, ordered: bool) -> str:
        items: list[str] = []
        start = int(node.get("start", 1))
        loose = False
        for number, item in enumerate(node.children, start=start):
            marker = f"{number}. " if ordered else "- "
            blocks = self._blocks(item.children, level=level)
            loose = loose or len(blocks) > 1
            items.append(_indented_after_marker(marker, "\n\n".join(blocks) or marker.strip()))
        return ("\n\n" if loose else "\n").join(items)

    def _definitions(self, node: nodes.definition_list, *, level: int) -> list[str]:
        blocks: list[str] = []
        for item in node.children:
            term = item.next_node(nodes.term)
            classifiers = [self._inline(c) for c in item.findall(nodes.classifier)]
            definition = item.next_node(nodes.definition)
            label = self._inline(term) if term is not None else ""
            if classifiers:
                label += " (" + ", ".join(classifiers) + ")"
            blocks.append(_paragraph(f"**{label}**"))
            if definition is not None:
                blocks += self._blocks(definition.children, level=level)
        return blocks

    def _fields(self, node: nodes.field_list, *, level: int) -> list[str]:
        blocks: list[str] = []
        for item in node.children:
            name = self._inline(item.next_node(nodes.field_name))
            body = item.next_node(nodes.field_body)
            inner = self._blocks(body.children, level=level) if body is not None else []
            if inner and not _starts_block(inner[0]):
                blocks.append(f"**{name}:** {inner[0]}")
                blocks += inner[1:]
            else:
                blocks += [f"**{name}:**", *inner]
        return blocks

    def _options(self, node: nodes.option_list) -> str:
        lines = []
        for item in node.children:
            group = item.next_node(nodes.option_group)
            description = item.next_node(nodes.description)
            options = group.astext() if group is not None else ""
            text = " ".join(self._inline(p) for p in description.findall(nodes.paragraph)) if (
                description is not None
            ) else ""  # fmt: skip
            lines.append(f"- {code_span(options)}: {text}".rstrip(": "))
        return "\n".join(lines)

    def _code(self, node: nodes.Element) -> str:
        text = node.astext().rstrip("\n")
        language = node.get("language", "")
        if not language:
            language = next((c for c in node["classes"] if c not in ("code", "literal-block")), "")
        if isinstance(node, nodes.doctest_block):
            language = "pycon"
        elif isinstance(node, nodes.math_block):
            language = "math"
        longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
        fence = "`" * max(3, longest + 1)
        return f"{fence}{language}\n{text}\n{fence}"

    def _lines(self, node: nodes.line_block, indent: str = "") -> list[str]:
        lines: list[str] = []
        for child in node.children:
            if isinstance(child, nodes.line_block):
                lines += self._lines(child, indent + "  ")
            else:
                text = self._inline(child)
                lines.append(_paragraph(text) if not indent else indent + text)
        return lines

    def _admonition(self, node: nodes.Element, *, level: int) -> str:
        kind = node.tagname if node.tagname in _ADMONITIONS else "note"
        title_node = node.next_node(nodes.title) if node.tagname == "admonition" else None
        title = _ADMONITIONS.get(node.tagname, "Note")
        if title_node is not None:
            title = " ".join(self._inline(title_node).split())
        elif "seealso" in node["classes"]:
            title = "See also"
        inner = "\n\n".join(self._blocks(node.children, level=level))
        if self._quotes:  # a quote holds no MkDocs box: a GitHub alert is the box a quote is
            return f"[!{kind}] {title}\n\n{inner}"
        body = "\n".join(f"    {line}".rstrip() for line in inner.split("\n"))
        return f'!!! {kind} "{title}"\n\n{body}'

    def _titled(self, node: nodes.Element, *, level: int) -> list[str]:
        title = node.next_node(nodes.title)
        head = [_paragraph(f"**{self._inline(title)}**")] if title is not None else []
        return [*head, *self._blocks(node.children, level=level)]

    def _note(self, node: nodes.Element, *, level: int) -> list[str]:
        label = node.next_node(nodes.label)
        mark = f"\\[{_escape(label.astext())}\\]" if label is not None else ""
        inner = self._blocks(
            [c for c in node.children if not isinstance(c, nodes.label)], level=level
        )
        if inner and not _starts_block(inner[0]):
            return [f"{mark} {inner[0]}".strip(), *inner[1:]]
        return [mark, *inner]

    def _version_note(self, node: nodes.Element, *, level: int) -> list[str]:
        inner = self._blocks(node.children, level=level)
        if inner and not _starts_block(inner[0]):
            return [f"*{node['label']}:* {inner[0]}", *inner[1:]]
        return [f"*{node['label']}.*", *inner]

    def _image(self, node: nodes.Element) -> str:
        alt = _escape(" ".join(str(node.get("alt", "")).split()))
        uri = str(node.get("uri", ""))
        return f"![{alt}]({_link_destination(uri)})"

    def _table(self, node: nodes.table) -> list[str]:
        title = node.next_node(nodes.title)
        head = [_paragraph(f"**{self._inline(title)}**")] if title is not None else []
        group = node.next_node(nodes.tgroup)
        if group is None:
            return head
        columns = int(group.get("cols", 0)) or 1
        header = group.next_node(nodes.thead)
        body = group.next_node(nodes.tbody)
        header_rows = self._rows(header, columns) if header is not None else []
        body_rows = self._rows(body, columns) if body is not None else []
        if not header_rows:
            # a pipe table needs a header row; a table without one gets an empty one, not its
            # first row (which would read as the names of the columns)
            header_rows = [[""] * columns]
        header_row = [" ".join(cells) for cells in zip(*header_rows, strict=True)]
        lines = [_row(header_row), _row(["---"] * columns)] + [_row(row) for row in body_rows]
        return [*head, "\n".join(lines)]

    def _rows(self, part: nodes.Element, columns: int) -> list[list[str]]:
        rows: list[list[str]] = []
        below: dict[int, int] = {}  # column -> rows still covered by a cell above
        for row in part.findall(nodes.row):
            cells: list[str] = []
            entries = [entry for entry in row.children if isinstance(entry, nodes.entry)]
            while len(cells) < columns:
                if below.get(len(cells)):
                    below[len(cells)] -= 1
                    cells.append("")
                    continue
                if not entries:
                    cells.append("")
                    continue
                entry = entries.pop(0)
                column = len(cells)
                cells.append(self._cell(entry))
                for _ in range(int(entry.get("morecols", 0))):
                    cells.append("")
                for offset in range(int(entry.get("morecols", 0)) + 1):
                    if entry.get("morerows"):
                        below[column + offset] = int(entry["morerows"])
            rows.append(cells[:columns])
        return rows

    def _cell(self, entry: nodes.Element) -> str:
        parts: list[str] = []
        for child in entry.children:
            if isinstance(child, (nodes.bullet_list, nodes.enumerated_list)):
                parts.append("; ".join(self._inline_all(item) for item in child.children))
            elif isinstance(child, (nodes.literal_block, nodes.doctest_block)):
                parts.append(code_span(" ".join(child.astext().split())))
            else:
                parts.append(self._inline_all(child))
        return " ".join(part for part in parts if part).replace("|", "\\|")

    def _inline_all(self, node: nodes.Node) -> str:
        """A block's text on one line (for a table cell)."""
        if isinstance(node, nodes.TextElement):
            return self._inline(node)
        if isinstance(node, nodes.Element):
            return " ".join(p for p in (self._inline_all(c) for c in node.children) if p)
        return _escape(node.astext()) if isinstance(node, nodes.Text) else ""

    # -- inline ----------------------------------------------------------------------------

    def _inline(self, node: nodes.Node | None) -> str:
        if node is None:
            return ""
        return " ".join(self._inline_children(node).split())

    def _inline_children(self, node: nodes.Node) -> str:
        return "".join(self._span(child) for child in node.children) if isinstance(
            node, nodes.Element
        ) else self._span(node)  # fmt: skip

    def _span(self, node: nodes.Node) -> str:
        if isinstance(node, nodes.Text):
            return _escape(node.astext().replace("\n", " "))
        if isinstance(node, (nodes.system_message, nodes.raw, nodes.target, nodes.pending)):
            if isinstance(node, nodes.target):
                return self._inline_children(node)
            return ""
        if isinstance(node, (nodes.emphasis, nodes.title_reference)):
            return _wrapped("*", self._inline_children(node))
        if isinstance(node, nodes.strong):
            return _wrapped("**", self._inline_children(node))
        if isinstance(node, (nodes.literal, nodes.math)):
            return code_span(node.astext())
        if isinstance(node, nodes.image):
            return self._image(node)
        if isinstance(node, sphinx.page_reference):
            return self._page_reference(node)
        if isinstance(node, nodes.reference):
            return self._reference(node)
        if isinstance(node, (nodes.footnote_reference, nodes.citation_reference)):
            return f"\\[{_escape(node.astext())}\\]"
        return self._inline_children(node)

    def _reference(self, node: nodes.reference) -> str:
        text = self._inline_children(node)
        if node.get("refuri"):
            return f"[{text}]({_link_destination(str(node['refuri']))})"
        refid = node.get("refid")
        if refid and refid in self._ids:
            return f"[{text}](#{self._ids[refid]})"
        return text

    def _page_reference(self, node: sphinx.page_reference) -> str:
        kind, target = node["kind"], node["target"]
        found = self._resolve(kind, target, self._path)
        text = self._inline_children(node)
        if found is None:
            project = _INTERSPHINX.match(target)
            where = f"a page of another project ({project.group(1)})" if project else (
                "no page or label in the folder"
            )  # fmt: skip
            self._warn(f"line {node.line}: :{kind}:`{target}` names {where}: kept as its text")
            return text
        address, title = found
        if not node["explicit"] and title:
            text = _escape(title)
        return f"[{text}]({_link_destination(address)})"


def section_anchor(section: nodes.section) -> str:
    """The id a section's heading gets: its label's (what ``:ref:`` names), else the one
    docutils made from its title (Sphinx's section id). A section whose title repeats its label
    (``.. _refunds:`` over "Refunds") has the label's ``refunds``, not ``refunds-1``."""
    document = section.document
    if document is not None:
        for name in section["names"]:
            if document.nametypes.get(name) and document.nameids.get(name) in section["ids"]:
                return str(document.nameids[name])
    return str(section["ids"][0])


def _heads_its_section(node: nodes.Element) -> bool:
    """Whether a described object with no text of its own stands right before a section of its
    name: then it marks that section for cross-references (a project's ``add_crossref_type``,
    Scrapy's 200 ``.. setting::``), which Sphinx does not show, and heading it would head the
    section twice."""
    following = next(
        (
            found
            for found in node.findall(include_self=False, descend=False, siblings=True, ascend=True)
            if not isinstance(found, nodes.target | nodes.comment | nodes.system_message)
        ),
        None,
    )
    if not isinstance(following, nodes.section):
        return False
    title = following.next_node(nodes.title)
    return title is not None and _bare(title.astext()) == _bare(str(node["signature"]))


def _bare(text: str) -> str:
    return " ".join(text.replace("`", "").split()).casefold()


def _escape(text: str) -> str:
    # `\<!--` would still open a comment for our line scanner, which knows no escapes.
    return _ESCAPED.sub(lambda match: "\\" + match.group(), text.replace("<!--", "&lt;!--"))


def _paragraph(text: str) -> str:
    """One line of prose that starts no Markdown block."""
    text = " ".join(text.split())
    match = _LINE_START.match(text)
    if match is None:
        return text
    marker = match.group()
    if marker[0].isdigit():
        return marker + "\\" + text[len(marker) :]
    return "\\" + text


def _starts_block(text: str) -> bool:
    """Whether a written block is something other than a paragraph (a list, code, a heading)."""
    return text.startswith(("- ", "#", "```", "!!!", "> ", "|", "**")) or bool(
        re.match(r"\d+\. ", text)
    )


def _wrapped(mark: str, inner: str) -> str:
    stripped = inner.strip()
    if not stripped:
        return inner
    lead = inner[: len(inner) - len(inner.lstrip())]
    trail = inner[len(inner.rstrip()) :]
    return f"{lead}{mark}{stripped}{mark}{trail}"


def _link_destination(uri: str) -> str:
    if re.search(r"[\s()<>]", uri):
        return "<" + uri.replace("<", "%3C").replace(">", "%3E") + ">"
    return uri


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cell or " " for cell in cells) + " |"


def _indented_after_marker(marker: str, text: str) -> str:
    pad = " " * len(marker)
    lines = text.split("\n")
    return "\n".join([marker + lines[0], *((pad + line).rstrip() for line in lines[1:])])
