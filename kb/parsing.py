"""Turning a Markdown file (bytes) into a `ParsedDocument`: front matter, title and body.

Pure Python with no Django imports. Every problem is raised as a `DocumentParseError` that names
the file and, where it can, the line, because the person who has to fix it is a doc writer
looking at that file, not someone reading a traceback.
"""

from __future__ import annotations

import datetime
import difflib
import re
from dataclasses import dataclass
from typing import Any, NoReturn

import yaml

from kb.chunking.structure import first_heading

MAX_DOCUMENT_BYTES = 1_000_000

AUDIENCES = ("public", "internal")
STATUSES = ("draft", "published", "retired")
MARKDOWN_SUFFIXES = (".md", ".markdown")

_FRONT_MATTER_OPEN = re.compile(r"---[ \t]*")
_FRONT_MATTER_CLOSE = re.compile(r"(?:---|\.\.\.)[ \t]*")
# Keys that decide who sees a page and whether it is current: a near miss of one of these
# ("Audience", "audiance", "superseded") would otherwise be ignored and the page published to
# everyone as current, so it is refused. Other unknown keys (tags, description...) are ignored.
_GUARDED_KEYS = ("audience", "status", "superseded_by")


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


def parse_document(*, path: str, raw: bytes) -> ParsedDocument:
    """Parse one Markdown file. A file without front matter is valid and takes every default."""
    _check_path(path)
    text = _decode(path, raw)
    fields, body, key_lines = _split_front_matter(path, text)
    reader = _FieldReader(path, fields, key_lines)
    title = reader.text("title") or first_heading(body) or _title_from_file_name(path)
    title = " ".join(title.split())
    superseded_by = reader.text("superseded_by")
    if superseded_by is not None:
        superseded_by = _normalise_document_path(superseded_by) or None
    if superseded_by is not None:
        problem = _path_problem(superseded_by)
        if problem is None and superseded_by == path:
            problem = "a document cannot be superseded by itself"
        if problem is not None:
            reader.fail("superseded_by", f"'superseded_by' {problem} (got {superseded_by!r})")
    return ParsedDocument(
        path=path,
        title=title,
        category=reader.text("category") or "",
        audience=reader.choice("audience", AUDIENCES, default="public"),
        status=reader.choice("status", STATUSES, default="published"),
        updated_on=reader.date("updated"),
        review_by=reader.date("review_by"),
        superseded_by=superseded_by,
        body=body,
    )


def _check_path(path: str) -> None:
    problem = _path_problem(path)
    if problem is not None:
        raise DocumentParseError(path=path, message=f"invalid document path: {problem}")


def _path_problem(path: str) -> str | None:
    """Why `path` cannot name a document, or None. Guards against escaping the corpus folder."""
    if not path:
        return "the path is empty"
    if "\x00" in path:
        return "the path contains a NUL character"
    if "\\" in path:
        return "use forward slashes, not backslashes"
    if path.startswith("/") or re.match(r"[A-Za-z]:", path):
        return "the path must be relative to the corpus folder, not absolute"
    segments = path.split("/")
    if ".." in segments:
        return "'..' segments are not allowed"
    if "" in segments or "." in segments:
        return "empty or '.' segments are not allowed"
    if not path.lower().endswith(MARKDOWN_SUFFIXES):
        return "only .md and .markdown files are documents"
    return None


def _normalise_document_path(path: str) -> str:
    path = path.strip()
    while path.startswith(("./", "/")):
        path = path[2:] if path.startswith("./") else path[1:]
    return path


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


def normalise_newlines(text: str) -> str:
    """``\n`` only. Done before anything else, so that offsets into a body and its content hash
    mean the same thing whichever editor (or browser form, which sends CRLF) last saved it."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


class _FrontMatterLoader(yaml.SafeLoader):
    """Safe YAML that leaves timestamps as text.

    PyYAML turns `2026-13-45` into a ValueError deep in its constructor; read as text, a bad
    date becomes our own error naming the key and the line like every other bad value.
    """


def _timestamp_as_text(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> str:
    return str(loader.construct_scalar(node))


_FrontMatterLoader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp_as_text)


def _split_front_matter(path: str, text: str) -> tuple[dict[str, Any], str, dict[str, int]]:
    """(fields, body, line of each key) for `text`; no front matter gives ({}, text, {}).

    Fails closed: a `---` first line always opens front matter, so one that is never closed is
    an error rather than a page whose body shows `audience: internal` to the public."""
    lines = text.split("\n")
    if not _FRONT_MATTER_OPEN.fullmatch(lines[0]):
        _refuse_late_front_matter(path, lines)
        return {}, text, {}
    close = next((n for n in range(1, len(lines)) if _FRONT_MATTER_CLOSE.fullmatch(lines[n])), None)
    if close is None:
        raise DocumentParseError(
            path=path,
            message="front matter: the '---' on line 1 is never closed (end the front matter "
            "with a '---' line; a page cannot begin with a horizontal rule)",
            line=1,
        )
    source = "\n".join(lines[1:close])
    body = "\n".join(lines[close + 1 :])
    first_line = 2  # the YAML starts on the file's second line
    loader = _FrontMatterLoader(source)
    try:
        node = loader.get_single_node()
        fields = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = error.problem or error.context or "invalid YAML"
        raise DocumentParseError(
            path=path,
            message=f"front matter: invalid YAML ({problem})",
            line=first_line + mark.line if mark is not None else None,
        ) from None
    except RecursionError:
        raise DocumentParseError(
            path=path, message="front matter: invalid YAML (nested too deeply)", line=first_line
        ) from None
    except (yaml.YAMLError, ValueError, TypeError) as error:
        raise DocumentParseError(
            path=path, message=f"front matter: invalid YAML ({error})", line=first_line
        ) from None
    finally:
        loader.dispose()
    if node is None or fields is None:
        return {}, body, {}
    if not isinstance(fields, dict):
        raise DocumentParseError(
            path=path,
            message=(
                f"front matter must be a mapping of keys to values (got {_describe_type(fields)})"
            ),
            line=first_line,
        )
    key_lines: dict[str, int] = {}  # where each key's value starts, for errors about it
    seen: dict[str, int] = {}  # where each key is written
    for key, value in node.value:
        if not isinstance(key, yaml.ScalarNode):
            continue
        line = first_line + key.start_mark.line
        if key.value in seen:
            # YAML would keep the last one silently: which did the writer mean?
            raise DocumentParseError(
                path=path,
                message=f"front matter: '{key.value}' is given twice "
                f"(lines {seen[key.value]} and {line})",
                line=line,
            )
        seen[key.value] = line
        _refuse_near_miss(path, key.value, line)
        key_lines[key.value] = first_line + value.start_mark.line
    return fields, body, key_lines


def _refuse_late_front_matter(path: str, lines: list[str]) -> None:
    """A `---` after leading blank lines is front matter that Markdown would show as text."""
    first = next((n for n, line in enumerate(lines) if line.strip()), None)
    if first is not None and first > 0 and _FRONT_MATTER_OPEN.fullmatch(lines[first]):
        raise DocumentParseError(
            path=path,
            message="front matter must begin on the first line (remove the blank lines above "
            "the '---')",
            line=first + 1,
        )


def _refuse_near_miss(path: str, key: str, line: int) -> None:
    if key in _GUARDED_KEYS:
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
    """Reads and validates front-matter fields; unknown keys are ignored."""

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

    def date(self, key: str) -> datetime.date | None:
        value = self._fields.get(key)
        if value is None or value == "":
            return None
        if isinstance(value, str):  # the loader keeps YAML timestamps as text
            parsed = _parse_iso_date(value.strip())
            if parsed is not None:
                return parsed
        self.fail(key, f"'{key}' is not a date (got {value!r})")


def _parse_iso_date(text: str) -> datetime.date | None:
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        pass
    try:
        return datetime.datetime.fromisoformat(text).date()
    except ValueError:
        return None


def _describe_type(value: object) -> str:
    names = {dict: "a mapping", list: "a list", bool: "true/false", int: "a number"}
    return names.get(type(value), f"a {type(value).__name__}")


def _title_from_file_name(path: str) -> str:
    """`guides/getting-started.md` → "Getting started"."""
    name = path.rsplit("/", 1)[-1]
    for suffix in MARKDOWN_SUFFIXES:
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
            break
    words = " ".join(name.replace("-", " ").replace("_", " ").split())
    return (words[:1].upper() + words[1:]) if words else name or path
