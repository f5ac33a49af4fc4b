"""Sections that send the reader to another page: a cross-reference is evidence of where the
answer is, not the answer.

Documentation keeps a topic on one page and points to it from the others: Flask's "Handling
Application Errors" has a section "Logging" whose whole text is "See [Logging](…) for information
about how to log exceptions, such as by emailing them to admins." A question about e-mailing
errors to admins finds that sentence close in meaning and in words, and its page (about errors
as a whole) ranked above the Logging page that says how (docs/retrieval.md, "A section that sends
the reader elsewhere"). ``search.fusion.fuse`` ranks the page a cross-reference names, when it is
among the candidates, at least as high as the cross-reference itself.

A cross-reference here is a chunk that is one sentence, on one line, that opens by sending the
reader ("See …", "Refer to …", "For more details, …") and links to another page. A sentence that
states something and links on the side ("Add `admin.enabled: false` … (see [user management]…)"),
a list of links ("Related pages"), or a link alone (a table of contents) is not one: measured on
twelve eval sets, counting those as references, or any short chunk with a link, lowered Argo CD's
or AutoHotkey's rankings (docs/retrieval.md).
"""

from __future__ import annotations

import re
from collections.abc import Collection

from kb.chunking.sentences import split_sentences
from kb.content_checks import INLINE_LINK
from kb.rendering import linked_document

SENDS_ELSEWHERE = re.compile(r"(?:see|refer|for (?:more|further|details))\b", re.IGNORECASE)


def referred_page(text: str, *, path: str, pages: Collection[str]) -> str | None:
    """The page of ``pages`` (document paths) that the chunk ``text`` of page ``path`` sends the
    reader to, when the chunk is a cross-reference; None otherwise."""
    text = text.strip()
    if not text or "\n" in text or not SENDS_ELSEWHERE.match(text):
        return None
    if len(split_sentences(text, abbreviations=True)) != 1:
        return None
    for link in INLINE_LINK.finditer(text):  # a picture's address is not a link
        target = linked_document(href=link.group(2), document_path=path, exists=pages.__contains__)
        if target is not None and target != path:
            return target
    return None
