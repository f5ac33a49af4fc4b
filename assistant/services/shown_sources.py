"""Which cited sources a quoting answer lists: the ones it quotes.

The offline answerer cites a passage in two ways: after a quote of it, and in a note that points
at pages it did not quote (an older version of a page: "the older page … also covers this [3];
where they differ, the newer … applies [4]"). Listing every cited passage put three or four
sources under a one-line answer. A source the answer does not quote is listed only when it is
one side of a contradiction the reader is warned about (``older`` and the newer page it names),
and the markers of the others are taken out of the text, so no "[4]" is left pointing nowhere.

A written answer (Claude) is left as it is: it paraphrases, and a paraphrase that matches no
sentence closely enough is still a claim its citation supports.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from assistant.citations import CODE, MARKER, citations_renumber, marker_numbers


def quoted_sources_only(
    *, answer: str, citations: Sequence[dict[str, Any]]
) -> tuple[str, list[dict[str, Any]]]:
    """The answer and its citations (as ``citations_with_quotes`` made them, numbered 1..n in
    order of first citation) with the sources it neither quotes nor warns about left out and
    the rest renumbered 1..n. With no source quoted at all (no sentence matched), nothing is
    left out: an answer never loses every source over a highlight."""
    shown = {c["number"] for c in citations if c.get("quotes") or c.get("older")}
    shown |= {c["newer_number"] for c in citations if c.get("older") and c.get("newer_number")}
    if not any(c.get("quotes") for c in citations) or shown >= {c["number"] for c in citations}:
        return answer, list(citations)
    kept = [c for c in citations if c["number"] in shown]
    text = _markers_without(answer, dropped={c["number"] for c in citations} - shown)
    text = citations_renumber(text=text, cited=[c["number"] for c in kept])
    new_number = {c["number"]: position for position, c in enumerate(kept, start=1)}
    renumbered = [
        {
            **c,
            "number": new_number[c["number"]],
            "newer_number": new_number.get(c["newer_number"]) if c.get("newer_number") else None,
        }
        for c in kept
    ]
    return text.strip(), renumbered


def _markers_without(text: str, *, dropped: set[int]) -> str:
    """``text`` with the ``dropped`` numbers taken out of its markers; a marker left empty goes
    with the space before it. Markers inside code stay as written."""
    code = [match.span() for match in CODE.finditer(text)]

    def rewrite(match: re.Match[str]) -> str:
        if any(start <= match.start("body") < end for start, end in code):
            return match.group()
        numbers = marker_numbers(match.group("body"))
        if numbers is None:
            return match.group()
        kept = [number for number in numbers if number not in dropped]
        if not kept:
            return ""
        if len(kept) == len(numbers):
            return match.group()
        return f"{match.group('space')}[{', '.join(str(number) for number in kept)}]"

    return MARKER.sub(rewrite, text)
