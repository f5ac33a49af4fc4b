"""What a page being read may reach besides its own text: the folder's other files, for includes.

Docutils' own ``include`` opens any path the process can read (``/etc/passwd`` included); ours
reads through `RstContext.include_read`, which takes only files inside the synced folder, by
the same rule as the pages themselves (``kb.services.sync.sources``).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# Reads a file of the folder by its path relative to the folder, or raises ValueError saying
# why it may not (outside the folder, missing, too large).
FileReader = Callable[[str], bytes]

MAX_INCLUDES = 50  # per page: past this an include chain is a loop or a mistake
_SETTING = "groundwork_rst"


@dataclass
class RstContext:
    path: str  # the page being read, relative to the folder
    read_file: FileReader | None  # None: no folder to read from (includes are refused)
    included: list[str] = field(default_factory=list)  # paths this page included, in order

    def include_read(self, target: str, *, from_source: str) -> tuple[str, str]:
        """(path, text) of the file an ``include`` in ``from_source`` names. Sphinx resolves
        ``/x`` from the folder's root and anything else from the including file's folder."""
        if self.read_file is None:
            raise ValueError(f"include {target}: only a folder sync can read other files")
        if len(self.included) >= MAX_INCLUDES:
            raise ValueError(f"include {target}: more than {MAX_INCLUDES} includes in one page")
        base = "" if target.startswith("/") else posixpath.dirname(from_source)
        joined = posixpath.normpath(posixpath.join(base, target.lstrip("/")))
        if joined.startswith("../") or joined == ".." or posixpath.isabs(joined):
            raise ValueError(
                f"include {target}: outside the folder, refused (a sync publishes only what "
                "the folder holds)"
            )
        if joined == self.path or joined in self.included:
            raise ValueError(f"include {target}: {joined} is already part of this page")
        raw = self.read_file(joined)
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ValueError(f"include {target}: not UTF-8 text") from None
        self.included.append(joined)
        return joined, text.replace("\r\n", "\n").replace("\r", "\n")


def context_settings(context: RstContext) -> dict[str, Any]:
    return {_SETTING: context}


def context_of(document: Any) -> RstContext:
    context = getattr(document.settings, _SETTING, None)
    if not isinstance(context, RstContext):
        raise RuntimeError("a page is read through kb.rst, which gives it an RstContext")
    return context
