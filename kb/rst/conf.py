"""What a Sphinx project's ``conf.py`` says about how its pages read: ``default_role`` (what
single backticks mean), ``extlinks`` (roles such as ``:issue:`123```), ``highlight_language``
(the language of a literal block that names none), its ``extensions`` and the ``issues_*``
settings of the sphinx-issues extension (its ``:issue:``, ``:pr:``, ``:user:`` roles),
``rst_prolog`` and ``rst_epilog`` (text every page is read with, most often substitutions
such as ``|brand|``) and ``version``, ``release`` and ``today`` (``|version|``…); and
which of its files are not pages: ``templates_path``, ``html_static_path``,
``html_extra_path`` (folders) and ``exclude_patterns`` (globs).

``conf.py`` is a Python program and is never run: it is parsed (``ast``) and only top-level
assignments of literal values to these names are read. Anything else in it (imports,
computed values) is ignored, and a value that is not a literal is reported, not guessed.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

CONF_FILE = "conf.py"
_PATH_LISTS = ("templates_path", "html_static_path", "html_extra_path", "exclude_patterns")
# The substitutions Sphinx defines from conf.py for every page that does not define its own
_SUBSTITUTIONS = ("version", "release", "today")
_READ = (
    "default_role", "extlinks", "highlight_language", "extensions", "rst_prolog", "rst_epilog",
    *_SUBSTITUTIONS, *_PATH_LISTS,
)  # fmt: skip
# sphinx-issues' settings: `issues_github_path = "acme/billing"`, `issues_uri`, `issues_prefix`, …
_ISSUES_SETTING = "issues_"


@dataclass(frozen=True)
class SphinxConf:
    default_role: str | None = None
    extlinks: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    highlight_language: str | None = None
    warnings: tuple[str, ...] = ()
    # `templates_path`, `html_static_path`, `html_extra_path`, `exclude_patterns`, as written
    paths: dict[str, tuple[str, ...]] = field(default_factory=dict)
    extensions: tuple[str, ...] = ()
    issues: dict[str, str] = field(default_factory=dict)  # sphinx-issues' settings
    prolog: str = ""
    epilog: str = ""
    substitutions: dict[str, str] = field(default_factory=dict)  # |version|, |release|, |today|

    def added_to(self, page: str) -> str:
        """What Sphinx reads with ``page``'s source: ``rst_prolog`` (which Sphinx puts first; it
        is read last here, so a page's line numbers stay its own: substitutions and link
        targets, what a prolog holds, apply wherever they are defined) and ``rst_epilog``, then
        ``|version|``, ``|release|`` and ``|today|`` where the page uses one and nothing read
        with it defines it."""
        added = [self.prolog, self.epilog]
        defined = "\n".join((page, *added))
        for name, value in self.substitutions.items():
            if f"|{name}|" in page and not re.search(
                rf"^\s*\.\.\s+\|{name}\|", defined, flags=re.MULTILINE
            ):
                added.append(f".. |{name}| replace:: {value}")
        return "\n\n".join(part.strip("\n") for part in added if part.strip())


def sphinx_conf_read(source: bytes) -> SphinxConf:
    try:
        tree = ast.parse(source, filename=CONF_FILE)
    except (SyntaxError, ValueError) as exc:
        return SphinxConf(warnings=(f"{CONF_FILE}: not Python that can be read ({exc}), ignored",))
    default_role: str | None = None
    highlight_language: str | None = None
    extlinks: dict[str, tuple[str, str | None]] = {}
    paths: dict[str, tuple[str, ...]] = {}
    extensions: tuple[str, ...] = ()
    issues: dict[str, str] = {}
    texts: dict[str, str] = {}  # rst_prolog, rst_epilog, version, release, today
    warnings: list[str] = []
    for statement in tree.body:
        if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
            continue
        target = statement.targets[0]
        if not isinstance(target, ast.Name) or not (
            target.id in _READ or target.id.startswith(_ISSUES_SETTING)
        ):
            continue
        try:
            value = ast.literal_eval(statement.value)
        except ValueError:
            warnings.append(
                f"{CONF_FILE}:{statement.lineno}: {target.id} is computed, not written out: ignored"
            )
            continue
        if target.id == "default_role" and (value is None or isinstance(value, str)):
            default_role = value
        elif target.id == "highlight_language" and isinstance(value, str):
            highlight_language = value
        elif target.id in ("rst_prolog", "rst_epilog", *_SUBSTITUTIONS) and isinstance(value, str):
            texts[target.id] = value
        elif target.id.startswith(_ISSUES_SETTING) and isinstance(value, str):
            issues[target.id] = value
        elif target.id == "extensions" and isinstance(value, list | tuple):
            extensions = tuple(item for item in value if isinstance(item, str))
        elif target.id in _PATH_LISTS and isinstance(value, list | tuple):
            paths[target.id] = tuple(item for item in value if isinstance(item, str))
        elif target.id == "extlinks" and isinstance(value, dict):
            for name, link in value.items():
                if (
                    isinstance(name, str)
                    and isinstance(link, tuple | list)
                    and len(link) == 2
                    and isinstance(link[0], str)
                    and (link[1] is None or isinstance(link[1], str))
                ):
                    extlinks[name] = (link[0], link[1])
    return SphinxConf(
        default_role=default_role,
        extlinks=extlinks,
        highlight_language=highlight_language,
        warnings=tuple(warnings),
        paths=paths,
        extensions=extensions,
        issues=issues,
        prolog=texts.get("rst_prolog", ""),
        epilog=texts.get("rst_epilog", ""),
        substitutions={name: texts[name] for name in _SUBSTITUTIONS if texts.get(name)},
    )
