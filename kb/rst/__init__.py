"""reStructuredText pages, as Sphinx writes them, read into the same documents as Markdown pages.

`rst_pages_read` (``project``) takes a folder's ``.rst`` pages together: docutils parses each one
with Sphinx's directives and roles registered (``sphinx``), and each tree is written as the
Markdown our chunker and renderer read (``markdown``). Includes are read only from the folder
(``context``).
"""

from __future__ import annotations

from kb.rst.project import RstPages, rst_pages_read

__all__ = ["RstPages", "rst_pages_read"]
