"""Citations checked in code: an answer may only cite sources that were retrieved for it.

Markers are bracketed source numbers: ``[1]``, ``[1][3]``, ``[1, 3]`` (and ranges, ``[1-3]``).
A number that names no source is removed from the text, since a link to a passage the model never
saw would dress up a guess as a quote. An answer that states facts without one valid citation is
kept but flagged as not confident; an answer that says the documents do not cover the question
claims nothing and needs no citation, and neither does a reply to "thanks!".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import structlog

from assistant.generators.base import Source

log = structlog.get_logger("groundwork.assistant")

NO_VALID_CITATION = "no valid citation"
ONLY_INVALID_CITATIONS = "cites only sources that were not retrieved"
EMPTY_ANSWER = "empty answer"

# Not followed by "(": "[1](https://…)" is a Markdown link, not a citation.
MARKER = re.compile(r"(?P<space>[ \t]?)\[(?P<body>\s*\d+\s*(?:[-\u2013,]\s*\d+\s*)*)\](?!\()")
CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`", re.DOTALL)
MAX_RANGE = 50  # "[1-3]" is a range; "[1-2000]" is not a citation anyone means
NOT_COVERED = re.compile(
    r"\b(?:documents?|docs|documentation|help[ -]?cent(?:er|re)|sources?|articles?|pages?"
    r"|knowledge base)\b[^.\n]{0,40}?\b(?:do not|don't|doesn't|does not|didn't|did not)\s+"
    r"(?:seem\s+to\s+)?(?:cover|mention|say|include|contain|address|explain|describe|specify"
    r"|answer|have)\b"
    r"|\b(?:couldn't|could not|can't|cannot|didn't|did not|was unable to|wasn't able to)\s+"
    r"find\b"
    r"|\bno (?:information|details|mention|documentation)\b"
    r"|\b(?:not|isn't|aren't|wasn't) (?:covered|mentioned|documented|addressed|described)\b"
    r"|\bdon't have (?:any )?(?:information|details)\b",
    re.IGNORECASE,
)
SMALL_TALK = re.compile(
    r"^\s*(?:(?:hi|hello|hey|thanks|thank you|thank u|thx|ty|cheers|ok|okay|great|cool|bye"
    r"|goodbye|good (?:morning|afternoon|evening))\b[\s!.,?:)]*"
    r"(?:so much|a lot|again)?[\s!.,?:)]*)+$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class CitationCheck:
    text: str  # the answer with invalid citation markers removed
    cited: list[int]  # valid source numbers in order of first use
    removed: list[str]  # the invalid markers that were removed, e.g. ["[7]"]
    confident: bool  # False when a factual answer has no valid citation
    flag: str | None  # why it is not confident ("no valid citation", ...), else None


def check_citations(*, answer: str, sources: Sequence[Source], question: str) -> CitationCheck:
    valid = {source.number for source in sources}
    code = [match.span() for match in CODE.finditer(answer)]
    cited: list[int] = []
    removed: list[str] = []

    def rewrite(match: re.Match[str]) -> str:
        if any(start <= match.start("body") < end for start, end in code):
            return match.group()  # `items[0]` in a code sample is not a citation
        numbers = marker_numbers(match.group("body"))
        if numbers is None:
            return match.group()
        kept = [number for number in numbers if number in valid]
        removed.extend(f"[{number}]" for number in numbers if number not in valid)
        for number in kept:
            if number not in cited:
                cited.append(number)
        if not kept:
            # "[7][1]": the space before a dropped marker belongs to the one that follows.
            return match.group("space") if answer.startswith("[", match.end()) else ""
        if len(kept) == len(numbers):
            return match.group()
        return f"{match.group('space')}[{', '.join(str(number) for number in kept)}]"

    text = MARKER.sub(rewrite, answer)
    confident, flag = _confidence(text=text, cited=cited, removed=removed, question=question)
    if removed or flag:
        log.warning(
            "citations_checked", cited=cited, removed=removed, confident=confident, flag=flag
        )
    return CitationCheck(text=text, cited=cited, removed=removed, confident=confident, flag=flag)


def says_not_covered(text: str) -> bool:
    """Whether ``text`` says the documents do not answer the question (a claim about the
    documents, not about the product, so it needs no citation)."""
    return NOT_COVERED.search(text) is not None


def is_small_talk(question: str) -> bool:
    """A greeting or a thank-you: nothing factual was asked."""
    return SMALL_TALK.match(question) is not None


def _confidence(
    *, text: str, cited: list[int], removed: list[str], question: str
) -> tuple[bool, str | None]:
    if not text.strip():
        return False, EMPTY_ANSWER
    if cited:
        return True, None
    if says_not_covered(text) or is_small_talk(question):
        return True, None
    return False, ONLY_INVALID_CITATIONS if removed else NO_VALID_CITATION


def citations_renumber(*, text: str, cited: Sequence[int]) -> str:
    """``text`` with its markers renumbered 1..n in order of first citation (``cited``, as
    ``check_citations`` found it): the reader meets [1] first, whichever retrieved passage it
    was. A range is written out ("[2-3]" may not stay consecutive); markers in code stay."""
    new_number = {old: position for position, old in enumerate(cited, start=1)}
    code = [match.span() for match in CODE.finditer(text)]

    def rewrite(match: re.Match[str]) -> str:
        if any(start <= match.start("body") < end for start, end in code):
            return match.group()
        numbers = marker_numbers(match.group("body"))
        if numbers is None or not all(number in new_number for number in numbers):
            return match.group()
        body = ", ".join(str(new_number[number]) for number in numbers)
        return f"{match.group('space')}[{body}]"

    return MARKER.sub(rewrite, text)


class StreamRenumberer:
    """``citations_renumber`` for text that arrives in pieces, so what streams to the reader
    already reads [1] first: a marker is held back until it is complete, and a source number
    gets its new number when it is first cited. Numbers that name no source pass unchanged
    (the final, checked text drops them); so do markers inside code."""

    def __init__(self, *, valid: Sequence[int]) -> None:
        self._valid = set(valid)
        self._new_number: dict[int, int] = {}
        self._pending = ""
        self._backticks = 0

    def feed(self, text: str) -> str:
        text = self._pending + text
        held = _OPEN_MARKER.search(text)
        self._pending = text[held.start() :] if held else ""
        return self._rewrite(text[: held.start()] if held else text)

    def finish(self) -> str:
        rest, self._pending = self._pending, ""
        return self._rewrite(rest)

    def _rewrite(self, text: str) -> str:
        out: list[str] = []
        last = 0
        for match in MARKER.finditer(text):
            before = text[last : match.start()]
            self._backticks += before.count("`")
            out.append(before)
            out.append(match.group() if self._backticks % 2 else self._renumbered(match))
            last = match.end()
        self._backticks += text[last:].count("`")
        out.append(text[last:])
        return "".join(out)

    def _renumbered(self, match: re.Match[str]) -> str:
        numbers = marker_numbers(match.group("body"))
        if numbers is None or not all(number in self._valid for number in numbers):
            return match.group()
        for number in numbers:
            self._new_number.setdefault(number, len(self._new_number) + 1)
        body = ", ".join(str(self._new_number[number]) for number in numbers)
        return f"{match.group('space')}[{body}]"


# The start of a marker that may not be complete yet ("… [1", "… [1, ") at the end of a piece,
# or a space that may belong to the marker that follows.
_OPEN_MARKER = re.compile(r"[ \t]?\[[\d\s,\-\u2013]*$|[ \t]$")


def marker_numbers(body: str) -> list[int] | None:
    """The source numbers a marker's ``body`` names, in order; None when it is not a citation
    at all. The answer page reads markers with it too, so a marker links what was checked."""
    numbers: list[int] = []
    for part in body.split(","):
        bounds = [int(value) for value in re.split(r"[-\u2013]", part.strip())]
        if len(bounds) == 1:
            numbers.append(bounds[0])
        elif len(bounds) == 2 and 0 <= bounds[1] - bounds[0] <= MAX_RANGE:
            numbers.extend(range(bounds[0], bounds[1] + 1))
        else:
            return None
    return numbers
