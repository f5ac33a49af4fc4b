"""Whether a text states a fact: the one comparison the answer eval and the test questions that
guard an edit both use ("5\u201310 **business days**" states "5-10 business days")."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

MATCHES = ("all", "any")  # "all": every fact must be stated; "any": one of them is an answer
_MARKUP = re.compile(r"\*\*|__|`")
_DASHES = re.compile(r"[\u2010-\u2015\u2212]")


def fact_text(text: str) -> str:
    """``text`` as facts are compared: NFKC, casefolded, no emphasis or code marks, one kind of
    dash, single spaces ("5\u201310 **business days**" == "5-10 business days")."""
    text = unicodedata.normalize("NFKC", text)
    text = _DASHES.sub("-", _MARKUP.sub("", text)).replace("\u2019", "'")
    return " ".join(text.casefold().split())


def states(text: str, fact: str) -> bool:
    return fact_text(fact) in fact_text(text)


def facts_stated(text: str, facts: Sequence[str], *, match: str = "all") -> bool:
    """Whether ``text`` states ``facts``: all of them, or any one (``match``)."""
    if not facts:
        return False
    found = (states(text, fact) for fact in facts)
    return all(found) if match == "all" else any(found)
