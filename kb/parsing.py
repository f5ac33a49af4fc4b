"""Turning a Markdown file (bytes) into a `ParsedDocument`: front matter, title and body.

An HTML file (`.html`, `.htm`) takes the same path once ``kb.formats.html`` has made its article
Markdown: its body is that Markdown, its title the article's `<h1>` or the page's `<title>`.

No models and no database (the audiences and statuses come from ``kb.document_choices``, which
the model uses too). Every problem is raised as a `DocumentParseError` that names
the file and, where it can, the line, because the person who has to fix it is a doc writer
looking at that file, not someone reading a traceback.

Front matter is read as the static-site tools write it (Hugo, Jekyll, MkDocs, Docusaurus): YAML
between `---` lines, TOML between `+++` lines, or a JSON object. Their keys for the same ideas
(`draft`, `date`, `lastmod`, `last_update`, `description`) map to ours; their other keys are kept
as metadata, never an error, so a folder written for one of them loads unchanged.
"""

from __future__ import annotations

import datetime
import difflib
import json
import math
import posixpath
import re
import tomllib
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn

import yaml

from kb.chunking.lines import markup_warnings
from kb.chunking.structure import first_heading
from kb.document_choices import Audience, Status
from kb.formats.html import html_article, html_decode

MAX_DOCUMENT_BYTES = 1_000_000
# What YAML aliases (`*name`) may add to the values a front matter writes: enough for a shared
# block reused a few times, far below a "billion laughs" (442 bytes that expand to millions).
MAX_ALIAS_EXPANSION = 1_000
# The front-matter keys kept as metadata, as stored JSON: the largest of the 2,991 Markdown files
# on the development machine is 676 characters; every page view and sync reads it.
MAX_METADATA_CHARS = 65_536

AUDIENCES = tuple(Audience.values)
STATUSES = tuple(Status.values)
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx")  # .mdx: Docusaurus pages, MDX like its .md
RST_SUFFIXES = (".rst",)  # reStructuredText as Sphinx writes it, read by ``kb.rst``
# HTML articles (help-center exports, saved web pages): converted to Markdown (kb.formats.html),
# then read like a Markdown file. The file may be larger than its text: markup, inline styles.
HTML_SUFFIXES = (".html", ".htm")
DOCUMENT_SUFFIXES = (*MARKDOWN_SUFFIXES, *RST_SUFFIXES, *HTML_SUFFIXES)
MAX_HTML_BYTES = 5_000_000

_FRONT_MATTER_OPEN = re.compile(r"---[ \t]*")
_FRONT_MATTER_CLOSE = re.compile(r"(?:---|\.\.\.)[ \t]*")
_TOML_FENCE = re.compile(r"\+\+\+[ \t]*")
# What a near miss of a fence is made of: a dash of any kind (em, en, minus sign...), or `+`.
_FENCE_CHARACTERS = "-+\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"
# Hugo reads a page that opens with a JSON object as JSON front matter; `{{<` is a shortcode.
_JSON_OPEN = re.compile(r"\{[ \t]*(?:$|\"|\})")
# Keys that decide who sees a page and whether it is current: a near miss of one of these
# ("Audience", "audiance", "superseded") is not an unknown key to keep but a typo that would
# publish the page to everyone as current, so it is refused.
_GUARDED_KEYS = ("audience", "status", "superseded_by")
_OWN_KEYS = ("title", "category", "updated", "review_by", *_GUARDED_KEYS)
# The static-site tools' keys that mean one of ours (see `parse_document`).
_MAPPED_KEYS = ("description", "draft", "date", "lastmod", "last_update")
# Tool keys with no equivalent here, kept as metadata without being reported as unknown.
# Sphinx's file-wide fields (`:orphan:`, `:tocdepth:`) and the pages a toctree lists come too.
KEPT_KEYS = (
    "slug", "aliases", "weight", "sidebar_position", "tags", "redirect_from",
    "orphan", "tocdepth", "nocomments", "nosearch", "toctree",
    "params", "cascade",  # Hugo's page parameters, what its `param` shortcode prints (kb.hugo)
)  # fmt: skip
# Earlier addresses of the page: Hugo's `aliases`, Jekyll's `redirect_from` (see `page_aliases`).
_ALIAS_KEYS = ("aliases", "redirect_from")
_REMOTE = re.compile(r"[a-z][a-z0-9+.-]*:|//", re.IGNORECASE)
_KNOWN_KEYS = frozenset((*_OWN_KEYS, *_MAPPED_KEYS, *KEPT_KEYS))
# `status` values that label a published page rather than decide who sees it: MkDocs Material's
# badges, and the stage of a feature as documentation sites mark it (Fly.io's guides say
# `status: beta`). None is a near miss of draft / published / retired.
_PAGE_BADGES = ("new", "deprecated", "alpha", "beta", "stable", "experimental", "preview")
# Our own `updated` wins; then the most specific "last changed" each tool has, then `date`.
_UPDATED_KEYS = ("updated", "last_update", "lastmod", "date")


class DocumentParseError(ValueError):
    """A document that cannot be read, with the path, the line (1-based or None) and a message.

    `str(err)` reads `policies/refunds.md:3: front matter: 'updated' is not a date (got 'x')`.
    """

    def __init__(self, *, path: str, message: str, line: int | None = None) -> None:
        self.path = path
        self.message = message
        self.line = line
        super().__init__(self._render())

    def _render(self) -> str:
        path = self.path if self.path.isprintable() else repr(self.path)[1:-1]
        return f"{path}:{self.line}: {self.message}" if self.line else f"{path}: {self.message}"

    def __str__(self) -> str:
        return self._render()

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only arguments defeat the default pickling of exceptions, and Celery pickles
        # the errors of failed tasks.
        return _restore_parse_error, (self.path, self.message, self.line)


def _restore_parse_error(path: str, message: str, line: int | None) -> DocumentParseError:
    return DocumentParseError(path=path, message=message, line=line)


@dataclass(frozen=True)
class ParsedDocument:
    path: str  # as given: relative, forward slashes
    title: str
    category: str  # "" by default
    audience: str  # "public" | "internal"
    status: str  # "draft" | "published" | "retired"
    updated_on: datetime.date | None
    review_by: datetime.date | None
    superseded_by: str | None  # the path of the document that replaces this one
    body: str  # Markdown after the front matter, exactly as in the file: offsets point into it
    description: str = ""
    # Front-matter keys that are not ours (KEPT_KEYS and unknown ones), JSON-ready values.
    metadata: Mapping[str, Any] = field(default_factory=dict)
    unknown_keys: tuple[str, ...] = ()  # keys of `metadata` that no tool convention explains
    warnings: tuple[str, ...] = ()  # markup that loaded but lost something (an include)
    aliases: tuple[str, ...] = ()  # earlier /docs/<alias> addresses that redirect here
    # Whether the file says `audience:` itself. One that does not leaves a stored page's audience
    # as it is: a body copied from the admin editor (which never shows front matter) and
    # uploaded again must not make an internal page public.
    audience_stated: bool = False


def parse_document(*, path: str, raw: bytes) -> ParsedDocument:
    """Parse one Markdown file. A file without front matter is valid and takes every default.
    (A reStructuredText page needs its folder, for labels and includes: ``kb.rst``.)"""
    _check_path(path)
    if is_html_path(path):
        text = _decode_html(path, raw)
        fields, body, key_lines = _html_fields_and_body(path, text)
        first_line = 1  # a converted body's lines are not the file's
    else:
        text = _decode(path, raw)
        fields, body, key_lines = split_front_matter(path, text)
        first_line = text.count("\n", 0, len(text) - len(body)) + 1
    return document_from_fields(
        path=path,
        fields=fields,
        key_lines=key_lines,
        body=body,
        warnings=markup_warnings(body, first_line=first_line),
    )


def document_from_fields(
    *,
    path: str,
    fields: dict[str, Any],
    key_lines: dict[str, int],
    body: str,
    warnings: Iterable[str] = (),
) -> ParsedDocument:
    """The document a page's metadata ``fields`` (front matter, or a reStructuredText page's
    field list) and Markdown ``body`` make, every field checked as front matter is; what the
    page's markup lost is ``warnings``."""
    _check_path(path)
    for key in fields:
        _refuse_near_miss(path, str(key), key_lines.get(key, _FIRST_LINE))
    reader = _FieldReader(path, fields, key_lines)
    title = reader.text("title") or first_heading(body) or _title_from_file_name(path)
    title = " ".join(title.split())
    superseded_by = reader.text("superseded_by")
    if superseded_by is not None:
        superseded_by = _normalise_document_path(superseded_by) or None
    if superseded_by is not None:
        problem = document_path_problem(superseded_by)
        if problem is None and superseded_by == path:
            problem = "a document cannot be superseded by itself"
        if problem is not None:
            reader.fail("superseded_by", f"'superseded_by' {problem} (got {superseded_by!r})")
    for key, value in fields.items():
        problem = _unstorable(key) or _unstorable(value)
        if problem is not None:
            reader.fail(key, f"'{_shown(str(key))}' {problem}")
    metadata = {key: _json_ready(value) for key, value in fields.items() if key not in _OWN_KEYS}
    for key in _MAPPED_KEYS:
        metadata.pop(key, None)
    stored = len(json.dumps(metadata, ensure_ascii=False))
    if stored > MAX_METADATA_CHARS:
        raise DocumentParseError(
            path=path,
            message=f"front matter: the keys kept as metadata take {stored:,} characters; the "
            f"limit is {MAX_METADATA_CHARS:,}",
            line=_FIRST_LINE,
        )
    aliases, alias_warnings = page_aliases(path=path, metadata=metadata)
    badge = reader.text("status")
    if badge is not None and badge.lower() in _PAGE_BADGES:
        metadata["status"] = badge  # shown by MkDocs Material as a badge, kept for it
    return ParsedDocument(
        path=path,
        title=title,
        category=reader.text("category") or "",
        audience=reader.choice("audience", AUDIENCES, default="public"),
        status=_status(reader),
        updated_on=next(
            (date for key in _UPDATED_KEYS if (date := reader.date(key)) is not None), None
        ),
        review_by=reader.date("review_by"),
        superseded_by=superseded_by,
        body=body,
        description=reader.text("description") or "",
        metadata=metadata,
        unknown_keys=tuple(key for key in metadata if key not in _KNOWN_KEYS),
        warnings=(*warnings, *alias_warnings),
        aliases=aliases,
        audience_stated=reader.text("audience") is not None,
    )


def is_html_path(path: str) -> bool:
    return path.lower().endswith(HTML_SUFFIXES)


def source_byte_limit(path: str) -> int:
    """How many bytes of the file at ``path`` a sync may read: past it the file is refused."""
    return MAX_HTML_BYTES if is_html_path(path) else MAX_DOCUMENT_BYTES


def _html_fields_and_body(path: str, text: str) -> tuple[dict[str, Any], str, dict[str, int]]:
    """An HTML page's fields and its article as Markdown. Front matter above the HTML (a
    Jekyll page) is read as for Markdown and wins; else the title is the article's ``<h1>`` or
    the page's ``<title>``, and the description its ``<meta name="description">``."""
    fields, html, key_lines = split_front_matter(path, text)
    article = html_article(html)
    found = {"title": article.title, "description": article.description}
    fields = {**{key: value for key, value in found.items() if value}, **fields}
    body = normalise_newlines(article.markdown)
    if len(body.encode()) > MAX_DOCUMENT_BYTES:
        raise DocumentParseError(
            path=path,
            message=f"the page's text is {len(body.encode()):,} bytes as Markdown; the limit is "
            f"{MAX_DOCUMENT_BYTES:,}",
        )
    return fields, body, key_lines


def page_aliases(*, path: str, metadata: Mapping[str, Any]) -> tuple[tuple[str, ...], list[str]]:
    """The page's earlier addresses as ``/docs/`` paths, and a warning per value left out.

    Hugo's `aliases` and Jekyll's `redirect_from` list server paths (`/guides/old-name/`,
    `/2019/01/post.html`); one without a leading `/` is relative to the page's folder, as Hugo
    resolves it. A site's `/docs/` section is the synced folder itself, so `/docs/x/` is `x`.
    """
    aliases: list[str] = []
    warnings: list[str] = []
    folder = posixpath.dirname(path)
    for key in _ALIAS_KEYS:
        values = metadata.get(key)
        for value in values if isinstance(values, list) else [] if values is None else [values]:
            if not isinstance(value, str) or _REMOTE.match(value.strip()):
                warnings.append(f"front matter: '{key}' entry {value!r} is not a path, ignored")
                continue
            written = value.strip().split("#")[0].split("?")[0]
            joined = written if written.startswith("/") else posixpath.join(folder, written)
            alias = alias_path(joined)
            if not alias:  # `/`, `/docs/`: the index lists every page, it cannot redirect to one
                warnings.append(
                    f"front matter: '{key}' entry {value!r} is the /docs/ index itself, ignored"
                )
            elif alias.startswith("..") or alias == path:
                warnings.append(f"front matter: '{key}' entry {value!r} is not a path, ignored")
            elif alias not in aliases:
                aliases.append(alias)
    return tuple(aliases), warnings


def alias_path(address: str) -> str:
    """An address as the alias lookup compares it: no edge slashes, no `docs/` prefix, `.`
    and `..` resolved. Both an alias and a requested ``/docs/<path>`` go through it."""
    cleaned = posixpath.normpath("/" + address.strip()).strip("/")
    return cleaned.removeprefix("docs/") if cleaned != "docs" else ""


def parse_warnings(documents: Iterable[ParsedDocument]) -> list[str]:
    """What a sync of `documents` should tell the importer: each file's markup warnings, and
    the unknown front-matter keys once for the whole sync rather than once per file."""
    warnings: list[str] = []
    unknown: Counter[str] = Counter()
    for document in documents:
        warnings += [f"{document.path}: {warning}" for warning in document.warnings]
        unknown.update(document.unknown_keys)
    if unknown:
        listed = ", ".join(
            f"{key} ({count} file{'' if count == 1 else 's'})"
            for key, count in sorted(unknown.items())
        )
        warnings.append(f"front matter keys kept as metadata, not used: {listed}")
    return warnings


def _status(reader: _FieldReader) -> str:
    """`status`, or draft for a page the tools would not publish (`draft: true`).

    MkDocs Material's own `status: new` and `status: deprecated`, and a feature's stage
    (`alpha`, `beta`, `stable`, `experimental`, `preview`), label a published page (a badge);
    any other value that is not ours is still refused, since a typo of `retired` must not
    publish a page as current."""
    draft = reader.flag("draft")
    badge = reader.text("status")
    if badge is not None and badge.lower() in _PAGE_BADGES:
        if draft:
            return "draft"
        return "published"
    status = reader.choice("status", STATUSES, default="draft" if draft else "published")
    if draft and status != "draft":
        reader.fail("draft", f"'draft: true' contradicts 'status: {status}' (remove one)")
    return status


def _json_ready(value: Any) -> Any:
    """TOML and YAML values as JSON can store them: dates as ISO text, YAML pairs as lists.
    Only for values `_unstorable` accepts."""
    if isinstance(value, dict):
        return {str(key): _json_ready(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_json_ready(item) for item in value]
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    return value


def _unstorable(value: Any) -> str | None:
    """Why a front-matter value (or key) cannot be stored as text and JSON, or None.

    PostgreSQL holds no NUL and no lone surrogate in text or JSON, JSON has no NaN, and YAML's
    `!!binary` and `!!set` have no JSON form; each of these was a 500 in admin and a crashed
    kb_sync before it was refused here, by key and line."""
    if isinstance(value, str):
        if "\x00" in value:
            return "contains a NUL character, which cannot be stored"
        surrogate = next((c for c in value if "\ud800" <= c <= "\udfff"), None)
        if surrogate is not None:
            return f"contains a lone surrogate (U+{ord(surrogate):04X}), which is not text"
        return None
    if isinstance(value, bool | int | None | datetime.date | datetime.time):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"is not a finite number ({value})"
    if isinstance(value, dict):
        return next(
            (p for k, v in value.items() if (p := _unstorable(str(k)) or _unstorable(v))), None
        )
    if isinstance(value, list | tuple):
        return next((p for item in value if (p := _unstorable(item)) is not None), None)
    if isinstance(value, bytes | bytearray):
        return "is binary data (!!binary), which a page cannot store"
    if isinstance(value, set | frozenset):
        return "is a set (!!set): write a list instead"
    return f"cannot be stored (a {type(value).__name__})"


def _shown(text: str) -> str:
    """`text` as an error may print it: control characters escaped, never written raw."""
    return text if text.isprintable() else repr(text)[1:-1]


_UNPRINTABLE_KINDS = {
    "Cc": "a control character",
    "Cf": "an invisible format character",
    "Zl": "a line separator",
    "Zp": "a paragraph separator",
    "Zs": "a space other than ' '",
}


def _check_path(path: str) -> None:
    problem = document_path_problem(path)
    if problem is not None:
        raise DocumentParseError(path=path, message=f"invalid document path: {problem}")


def document_path_problem(path: str) -> str | None:
    """Why `path` cannot name a document, or None: the one rule for a document path, on every
    way in (admin form, upload, zip entry, folder sync, successor, CLI). Guards against
    escaping the corpus folder, and against characters that break a URL, a log line, a
    terminal or a page: a newline in a path made /docs/ a 500 for every visitor. Its length is
    the model field's (``kb.services.sync.rows.document_limits_check``)."""
    if not path:
        return "the path is empty"
    if "\x00" in path:
        return "the path contains a NUL character"
    invisible = next((c for c in path if not c.isprintable()), None)
    if invisible is not None:
        kind = _UNPRINTABLE_KINDS.get(unicodedata.category(invisible), "an unprintable character")
        return f"the path contains U+{ord(invisible):04X}, {kind}"
    if "\\" in path:
        return "use forward slashes, not backslashes"
    if path.startswith("/") or re.match(r"[A-Za-z]:", path):
        return "the path must be relative to the corpus folder, not absolute"
    segments = path.split("/")
    if ".." in segments:
        return "'..' segments are not allowed"
    if "" in segments or "." in segments:
        return "empty or '.' segments are not allowed"
    if not path.lower().endswith(DOCUMENT_SUFFIXES):
        return "only .md, .markdown, .mdx, .rst, .html and .htm files are documents"
    return None


def _normalise_document_path(path: str) -> str:
    path = path.strip()
    while path.startswith(("./", "/")):
        path = path[2:] if path.startswith("./") else path[1:]
    return path


def document_text(*, path: str, raw: bytes) -> str:
    """A file's text as every page format reads it: size-checked UTF-8, ``\n`` line ends."""
    _check_path(path)
    return _decode(path, raw)


def _decode(path: str, raw: bytes) -> str:
    if len(raw) > MAX_DOCUMENT_BYTES:
        raise DocumentParseError(
            path=path,
            message=f"file is too large ({len(raw):,} bytes; the limit is {MAX_DOCUMENT_BYTES:,})",
        )
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DocumentParseError(path=path, message="not UTF-8 text (it looks like UTF-16)")
    if b"\x00" in raw:
        raise DocumentParseError(path=path, message="binary file (it contains NUL bytes)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise DocumentParseError(
            path=path,
            message=(
                f"not UTF-8 text (invalid byte 0x{raw[error.start]:02x} at offset {error.start})"
            ),
            line=raw.count(b"\n", 0, error.start) + 1,
        ) from None
    return normalise_newlines(text.removeprefix("\ufeff"))


def _decode_html(path: str, raw: bytes) -> str:
    if len(raw) > MAX_HTML_BYTES:
        raise DocumentParseError(
            path=path,
            message=f"file is too large ({len(raw):,} bytes; the limit for HTML is "
            f"{MAX_HTML_BYTES:,})",
        )
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DocumentParseError(path=path, message="not UTF-8 text (it looks like UTF-16)")
    if b"\x00" in raw:
        raise DocumentParseError(path=path, message="binary file (it contains NUL bytes)")
    text = html_decode(raw)
    if text is None:
        raise DocumentParseError(
            path=path,
            message="not UTF-8 text, and the page declares no encoding that reads it "
            "(add <meta charset=...> or save it as UTF-8)",
        )
    return normalise_newlines(text)


def normalise_newlines(text: str) -> str:
    """``\n`` only. Done before anything else, so that offsets into a body and its content hash
    mean the same thing whichever editor (or browser form, which sends CRLF) last saved it."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


class _FrontMatterLoader(yaml.SafeLoader):
    """Safe YAML that leaves timestamps as text.

    PyYAML turns `2026-13-45` into a ValueError deep in its constructor; read as text, a bad
    date becomes our own error naming the key and the line like every other bad value.
    """


class _FastFrontMatterLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The same YAML read by libyaml, where PyYAML was built with it: 70 µs for a page's
    front matter against 530 µs, which a sync of a thousand pages pays before anything else.
    Its errors are worded otherwise, so a file it refuses is read again by
    ``_FrontMatterLoader``, whose message and line the writer gets (``_load_yaml_text``)."""


def _timestamp_as_text(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> str:
    return str(loader.construct_scalar(node))


_FrontMatterLoader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp_as_text)
_FastFrontMatterLoader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp_as_text)


def split_front_matter(path: str, text: str) -> tuple[dict[str, Any], str, dict[str, int]]:
    """(fields, body, line of each key) for `text`; no front matter gives ({}, text, {}).

    Fails closed: a `---` (or `+++`) first line always opens front matter, so one that is never
    closed is an error rather than a page whose body shows `audience: internal` to the public;
    and a line that only looks like a fence (` ---`, `----`, `--- yaml`, `———`) is an error too,
    since Markdown would show the `audience: internal` under it to everyone."""
    lines = text.split("\n")
    if _TOML_FENCE.fullmatch(lines[0]):
        source, body = _fenced(path, lines, _TOML_FENCE, "+++")
        fields, key_lines = _load_toml(path, source)
    elif _JSON_OPEN.match(lines[0]):
        fields, body, key_lines = _load_json(path, text)
    elif _FRONT_MATTER_OPEN.fullmatch(lines[0]):
        source, body = _fenced(path, lines, _FRONT_MATTER_CLOSE, "---")
        fields, key_lines = _load_yaml(path, source)
    else:
        _refuse_near_front_matter(path, lines)
        return {}, text, {}
    return fields, body, key_lines


def _visible(line: str) -> str:
    """`line` without whitespace of any kind and invisible format characters (U+200B, U+FEFF)."""
    return "".join(c for c in line if not c.isspace() and unicodedata.category(c) != "Cf")


def _fence_like(line: str) -> bool:
    """Whether `line` reads as a front-matter fence to a person: three or more dashes (of any
    kind) or pluses, maybe spaced, with at most a word after them (`--- yaml`)."""
    visible = _visible(line)
    rest = visible.lstrip(_FENCE_CHARACTERS)
    return len(visible) - len(rest) >= 3 and (rest == "" or rest.isalpha())


def _fenced(path: str, lines: list[str], close: re.Pattern[str], fence: str) -> tuple[str, str]:
    end = None
    for number in range(1, len(lines)):
        if close.fullmatch(lines[number]):
            end = number
            break
        if _fence_like(lines[number]):
            raise DocumentParseError(
                path=path,
                message=f"front matter: line {number + 1} looks like the end of front matter "
                f"but is {lines[number]!r} (close it with exactly '{fence}')",
                line=number + 1,
            )
    if end is None:
        raise DocumentParseError(
            path=path,
            message=f"front matter: the '{fence}' on line 1 is never closed (end the front "
            f"matter with a '{fence}' line; a page cannot begin with a horizontal rule)",
            line=1,
        )
    return "\n".join(lines[1:end]), "\n".join(lines[end + 1 :])


_FIRST_LINE = 2  # fenced front matter starts on the file's second line


def _load_yaml(path: str, source: str) -> tuple[dict[str, Any], dict[str, int]]:
    try:
        return _load_yaml_text(path, source)
    except DocumentParseError:
        if "\t" not in source:
            raise
    # Hugo (Go YAML) and Jekyll read tab-indented front matter that YAML itself forbids. Only a
    # file that failed is rewritten, line for line, so valid YAML is never second-guessed and
    # an error in the rewritten text still points at the right line.
    return _load_yaml_text(path, _tabs_as_spaces(source))


_TAB_AFTER_INDICATOR = re.compile(r"^([ ]*(?:- )*[^\s\"'#][^:\"'#]*:|[ ]*-)\t+")


def _tabs_as_spaces(source: str) -> str:
    lines = []
    for line in source.split("\n"):
        stripped = line.lstrip(" \t")
        line = line[: len(line) - len(stripped)].expandtabs(4) + stripped
        lines.append(_TAB_AFTER_INDICATOR.sub(lambda match: match.group(1) + " ", line))
    return "\n".join(lines)


def _load_yaml_text(path: str, source: str) -> tuple[dict[str, Any], dict[str, int]]:
    try:
        return _load_yaml_with(_FastFrontMatterLoader, path, source)
    except DocumentParseError:
        return _load_yaml_with(_FrontMatterLoader, path, source)


def _load_yaml_with(
    loader_class: type[yaml.SafeLoader], path: str, source: str
) -> tuple[dict[str, Any], dict[str, int]]:
    try:
        # The reader refuses control characters as it is made: inside the `try`, that is a
        # per-file error too (kb_sync crashed on a U+001F in front matter).
        loader = loader_class(source)
    except yaml.YAMLError as error:
        raise DocumentParseError(
            path=path, message=f"front matter: invalid YAML ({error})", line=_FIRST_LINE
        ) from None
    try:
        node = loader.get_single_node()
        if node is not None:
            _refuse_alias_expansion(path, node)
        fields = loader.construct_document(node) if node is not None else None
    except DocumentParseError:
        raise
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = error.problem or error.context or "invalid YAML"
        raise DocumentParseError(
            path=path,
            message=f"front matter: invalid YAML ({problem})",
            line=_FIRST_LINE + mark.line if mark is not None else None,
        ) from None
    except RecursionError:
        raise DocumentParseError(
            path=path, message="front matter: invalid YAML (nested too deeply)", line=_FIRST_LINE
        ) from None
    except (yaml.YAMLError, ValueError, TypeError) as error:
        raise DocumentParseError(
            path=path, message=f"front matter: invalid YAML ({error})", line=_FIRST_LINE
        ) from None
    finally:
        loader.dispose()
    if node is None or fields is None:
        return {}, {}
    _require_mapping(path, fields)
    key_lines: dict[str, int] = {}  # where each key's value starts, for errors about it
    seen: dict[str, int] = {}  # where each key is written
    for key, value in node.value:
        if not isinstance(key, yaml.ScalarNode):
            continue
        line = _FIRST_LINE + key.start_mark.line
        if key.value in seen:
            _refuse_repeated(path, key.value, seen[key.value], line)
        seen[key.value] = line
        _refuse_near_miss(path, key.value, line)
        key_lines[key.value] = _FIRST_LINE + value.start_mark.line
    return fields, key_lines


def _refuse_alias_expansion(path: str, root: yaml.Node) -> None:
    """Refuse front matter whose aliases would expand past MAX_ALIAS_EXPANSION values, or
    refer to themselves, before anything is built from it.

    The composed nodes share what an alias names, so counting each node's expanded size once
    (memoised) costs what the text costs, whereas building the values (and their JSON) costs
    what the expansion costs (issue 26: 442 bytes took an admin import 84 s and 2.6 GB)."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def expanded(node: yaml.Node) -> int:
        if id(node) in sizes:
            return sizes[id(node)]
        if id(node) in open_nodes:
            raise DocumentParseError(
                path=path,
                message="front matter: an alias refers to itself (a value that contains itself)",
                line=_FIRST_LINE + node.start_mark.line,
            )
        open_nodes.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        else:
            children = []
        size = 1 + sum(expanded(child) for child in children)
        open_nodes.discard(id(node))
        sizes[id(node)] = size
        return size

    total = expanded(root)
    if total - len(sizes) <= MAX_ALIAS_EXPANSION:
        return
    # Name the first key whose value alone passes the bound; else the front matter's start.
    pairs = root.value if isinstance(root, yaml.MappingNode) else []
    line = next(
        (
            _FIRST_LINE + key.start_mark.line
            for key, value in pairs
            if sizes[id(value)] > MAX_ALIAS_EXPANSION
        ),
        _FIRST_LINE,
    )
    raise DocumentParseError(
        path=path,
        message=f"front matter: its aliases (*name) expand to {total:,} values from "
        f"{len(sizes):,} written; at most {MAX_ALIAS_EXPANSION:,} more are allowed",
        line=line,
    )


_TOML_ERROR_LINE = re.compile(r"\(at line (\d+), column \d+\)$")
_TOML_KEY = re.compile(r"[ \t]*(?:\"([^\"]+)\"|'([^']+)'|([A-Za-z0-9_-]+))[ \t]*=")


def _load_toml(path: str, source: str) -> tuple[dict[str, Any], dict[str, int]]:
    try:
        fields = tomllib.loads(source)
    except tomllib.TOMLDecodeError as error:
        found = _TOML_ERROR_LINE.search(str(error))
        problem = _TOML_ERROR_LINE.sub("", str(error)).strip()
        raise DocumentParseError(
            path=path,
            message=f"front matter: invalid TOML ({problem})",
            line=_FIRST_LINE + int(found.group(1)) - 1 if found else _FIRST_LINE,
        ) from None
    except ValueError as error:  # a number past Python's 4,300-digit conversion limit
        raise DocumentParseError(
            path=path, message=f"front matter: invalid TOML ({error})", line=_FIRST_LINE
        ) from None
    key_lines: dict[str, int] = {}
    for number, line in enumerate(source.split("\n")):
        if line.lstrip().startswith("["):
            break  # a table: the keys after it are not top-level
        match = _TOML_KEY.match(line)
        if match:
            key = next(group for group in match.groups() if group is not None)
            key_lines.setdefault(key, _FIRST_LINE + number)
    for key in fields:
        _refuse_near_miss(path, key, key_lines.get(key, _FIRST_LINE))
    return fields, key_lines


def _load_json(path: str, text: str) -> tuple[dict[str, Any], str, dict[str, int]]:
    def no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        mapping: dict[str, Any] = {}
        for key, value in pairs:
            if key in mapping:
                raise DocumentParseError(path=path, message=f"front matter: '{key}' is given twice")
            mapping[key] = value
        return mapping

    try:
        fields, end = json.JSONDecoder(object_pairs_hook=no_repeats).raw_decode(text)
    except json.JSONDecodeError as error:
        raise DocumentParseError(
            path=path, message=f"front matter: invalid JSON ({error.msg})", line=error.lineno
        ) from None
    except DocumentParseError:
        raise
    except ValueError as error:  # a number past Python's 4,300-digit conversion limit
        raise DocumentParseError(
            path=path, message=f"front matter: invalid JSON ({error})", line=1
        ) from None
    except RecursionError:
        raise DocumentParseError(
            path=path, message="front matter: invalid JSON (nested too deeply)", line=1
        ) from None
    _require_mapping(path, fields, line=1)
    rest = text[end:]
    newline = rest.find("\n")
    if rest[: newline if newline >= 0 else len(rest)].strip():
        raise DocumentParseError(
            path=path,
            message="front matter: text after the closing '}' (start the page on the next line)",
            line=text.count("\n", 0, end) + 1,
        )
    body = rest[newline + 1 :] if newline >= 0 else ""
    key_lines: dict[str, int] = {}
    for number, line in enumerate(text[:end].split("\n")):
        for key in re.findall(r'"((?:[^"\\]|\\.)*)"[ \t]*:', line):
            key_lines.setdefault(key, number + 1)
    key_lines = {key: key_lines.get(key, 1) for key in fields}
    for key, key_line in key_lines.items():
        _refuse_near_miss(path, key, key_line)
    return fields, body, key_lines


def _require_mapping(path: str, fields: object, *, line: int = _FIRST_LINE) -> None:
    if not isinstance(fields, dict):
        raise DocumentParseError(
            path=path,
            message=(
                f"front matter must be a mapping of keys to values (got {_describe_type(fields)})"
            ),
            line=line,
        )


def _refuse_repeated(path: str, key: str, first: int, line: int) -> NoReturn:
    # YAML would keep the last one silently: which did the writer mean?
    raise DocumentParseError(
        path=path,
        message=f"front matter: '{key}' is given twice (lines {first} and {line})",
        line=line,
    )


def _refuse_near_front_matter(path: str, lines: list[str]) -> None:
    """Refuse a page whose first visible line is a fence that does not open front matter: one
    after blank lines, or a near miss (` ---`, `----`, `--- yaml`, `---` + U+00A0, `———`)."""
    first = next((n for n, line in enumerate(lines) if _visible(line)), None)
    if first is None:
        return
    line = lines[first]
    if first > 0 and (_FRONT_MATTER_OPEN.fullmatch(line) or _TOML_FENCE.fullmatch(line)):
        raise DocumentParseError(
            path=path,
            message="front matter must begin on the first line (remove the blank lines above "
            "the '---')",
            line=first + 1,
        )
    if _fence_like(line):
        raise DocumentParseError(
            path=path,
            message=f"line {first + 1} looks like the start of front matter but is {line!r}: "
            "front matter opens with exactly '---' (or '+++') as the first line, and a page "
            "cannot begin with a horizontal rule",
            line=first + 1,
        )


def _refuse_near_miss(path: str, key: str, line: int) -> None:
    if key in _KNOWN_KEYS:
        return
    folded = key.strip().lower().replace("-", "_").replace(" ", "_")
    meant = difflib.get_close_matches(folded, _GUARDED_KEYS, n=1, cutoff=0.8)
    if meant:
        raise DocumentParseError(
            path=path,
            message=f"front matter: unknown key '{key}' (did you mean '{meant[0]}'?)",
            line=line,
        )


class _FieldReader:
    """Reads and validates front-matter fields; the keys it is not asked about are left alone."""

    def __init__(self, path: str, fields: dict[str, Any], key_lines: dict[str, int]) -> None:
        self._path = path
        self._fields = fields
        self._key_lines = key_lines

    def fail(self, key: str, message: str) -> NoReturn:
        raise DocumentParseError(
            path=self._path, message=f"front matter: {message}", line=self._key_lines.get(key)
        )

    def text(self, key: str) -> str | None:
        """The stripped string value, or None when absent, null or blank."""
        value = self._fields.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            self.fail(key, f"'{key}' must be text (got {_describe_type(value)})")
        return value.strip() or None

    def choice(self, key: str, allowed: tuple[str, ...], *, default: str) -> str:
        value = self.text(key)
        if value is None:
            return default
        if value.lower() not in allowed:
            self.fail(key, f"'{key}' must be one of: {', '.join(allowed)} (got {value!r})")
        return value.lower()

    def flag(self, key: str) -> bool:
        value = self._fields.get(key)
        if value is None or isinstance(value, bool):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"  # Hugo reads "true" as true
        self.fail(key, f"'{key}' must be true or false (got {value!r})")

    def date(self, key: str) -> datetime.date | None:
        value = self._fields.get(key)
        if isinstance(value, dict):  # Docusaurus {date:, author:}; Material {created:, updated:}
            value = next(
                (value[part] for part in ("date", "updated", "created") if value.get(part)), None
            )
        if value is None or value == "":
            return None
        if isinstance(value, datetime.datetime):  # TOML dates are typed
            return value.date()
        if isinstance(value, datetime.date):
            return value
        if isinstance(value, str):  # the loader keeps YAML timestamps as text
            parsed = _parse_iso_date(value.strip())
            if parsed is not None:
                return parsed
        self.fail(key, f"'{key}' is not a date (got {value!r})")


_DATE_THEN_TIME = re.compile(r"(\d{4}-\d{2}-\d{2})[T ]\S.*")


def _parse_iso_date(text: str) -> datetime.date | None:
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        pass
    try:
        return datetime.datetime.fromisoformat(text).date()
    except ValueError:
        pass
    # Jekyll writes `2026-01-15 09:30:00 +0100`, which fromisoformat refuses for the space.
    match = _DATE_THEN_TIME.fullmatch(text)
    try:
        return datetime.date.fromisoformat(match.group(1)) if match else None
    except ValueError:
        return None


def _describe_type(value: object) -> str:
    names = {dict: "a mapping", list: "a list", bool: "true/false", int: "a number"}
    return names.get(type(value), f"a {type(value).__name__}")


def _title_from_file_name(path: str) -> str:
    """`guides/getting-started.md` → "Getting started"."""
    name = path.rsplit("/", 1)[-1]
    for suffix in DOCUMENT_SUFFIXES:
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
            break
    words = " ".join(name.replace("-", " ").replace("_", " ").split())
    return (words[:1].upper() + words[1:]) if words else name or path
