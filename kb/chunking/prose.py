"""Whether text reads as prose or as code, for a block whose meaning the page does not say: a
directive of an extension we do not have (a Sphinx project's own, a MyST one) shows its content
in a form we cannot know, so it is read as what its content reads as (`kb.rst.sphinx.Unknown`,
`kb.chunking.lines`).

A paragraph reads as prose when it ends as a sentence, or is a title or a label (a capital
first, no code characters), or is a run of at least six words, seven in ten of them plain words
(terse notes: "fixed regexp that filters out warnings, thanks to…", "Use urllib.parse_qsl() in
Python 2.6 and above"). A command is short (``pip install x``); code and a diagram's source are
mostly not words. Content reads as prose when most of its paragraphs' characters are in
paragraphs that do. Measured on the unknown directives of SQLAlchemy's, Read the Docs' and
NumPy's docs (docs/architecture.md, "How an .rst page is read").
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# The end of a sentence (or of a label over what follows it): its stop, then any closing
# quotes, brackets or emphasis marks; SENTENCE_STOP without the label's colon.
_SENTENCE_END = re.compile(r"[.!?:][\"')\]*_`]*\Z")
SENTENCE_STOP = re.compile(r"[.!?][\"')\]*_`]*\Z")
# What code has and a title or a label does not (inline code, which prose may hold, is not read)
_CODE_CHARACTERS = re.compile(r"[{}()\[\]<>=;$|\\]|->|^\s*#")
# A word of prose: letters (an apostrophe, a hyphen), then at most a comma or a stop.
_PROSE_WORD = re.compile(r"[\"'(]?[^\W\d_][\w'-]*[\"')]?[,.;:!?]?")


def reads_as_prose(paragraphs: Iterable[str]) -> bool:
    """Whether most of the paragraphs' characters are in paragraphs that read as prose (true
    of no paragraph at all: content that is lists or tables parsed as such)."""
    prose = other = 0
    for paragraph in paragraphs:
        words = " ".join(paragraph.split())
        if _prose_paragraph(words):
            prose += len(words)
        else:
            other += len(words)
    return prose >= other


def _prose_paragraph(words: str) -> bool:
    """Whether a paragraph's text (outside its inline code, spaces collapsed) reads as prose."""
    if _SENTENCE_END.search(words):
        return True
    if words[:1].isupper() and not _CODE_CHARACTERS.search(words):
        return True
    tokens = words.split()
    plain = sum(bool(_PROSE_WORD.fullmatch(token)) for token in tokens)
    return len(tokens) >= 6 and plain >= 0.7 * len(tokens)
