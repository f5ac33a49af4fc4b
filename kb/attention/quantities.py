"""The numbers a passage states, with what they measure, and where two passages disagree.

A quantity is a number together with what it counts: "14 days", "up to 15 business days",
"$990", "20%", "3 retries", "a 12-month term". Two passages contradict each other on a kind of
quantity when both state that kind and each states a value the other does not: "within 14 days"
against "within 30 days" does, while a page that says "30 or 60 days" against one that says
"30 days" only says more. Durations are compared in one unit (72 hours is 3 days; a year is 12
months), business days apart from calendar days, money per currency.

Two values of one kind contradict each other only when they are about the same subject
(``same_subject``): "reminders 7 days before the trial ends" does not contradict "we email you
14 days before the deletion date", though both are days before something, and "$0.28 per GB"
does not contradict a plan's "$38.00". A quantity carries its *rate* (what it is per), its
*anchor* (the words after "before", "after", "of", "from"... that follow it: what the span is
counted from) and its *context* (the content words of its sentence, list item or table cell,
with the passage's own heading): two anchored values need anchors sharing a word; otherwise
their contexts must share one.

Code (fenced blocks and `inline code`) is left out: it holds identifiers and examples, not
claims; so are dates and years, which say when, not how much.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from fractions import Fraction

NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20,
    "thirty": 30, "forty": 40, "forty-five": 45, "fifty": 50, "sixty": 60, "ninety": 90,
    "hundred": 100,
}  # fmt: skip
# Durations by their size in a base unit: seconds for clock and calendar days, months for
# months and years (a month is no fixed number of days). A business day is its own unit.
DURATION_UNITS: dict[str, tuple[str, Fraction]] = {
    "second": ("duration", Fraction(1)),
    "minute": ("duration", Fraction(60)),
    "hour": ("duration", Fraction(3600)),
    "day": ("duration", Fraction(86400)),
    "week": ("duration", Fraction(7 * 86400)),
    "month": ("months", Fraction(1)),
    "year": ("months", Fraction(12)),
    "business day": ("business days", Fraction(1)),
    "working day": ("business days", Fraction(1)),
    "business hour": ("business hours", Fraction(1)),
    "working hour": ("business hours", Fraction(1)),
}
CURRENCY_SYMBOLS = {"$": "USD", "€": "EUR", "£": "GBP"}
CURRENCY_CODES = {"USD", "EUR", "GBP", "CAD", "AUD", "CHF", "JPY"}
MONTH_NAMES = {
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep",
    "sept", "oct", "nov", "dec",
}  # fmt: skip
# Words after a number that say nothing about what it counts: "1 of 3", "2 or more", "step 1 to".
NOT_A_COUNTED_THING = {
    "a", "an", "and", "or", "of", "to", "the", "in", "on", "at", "for", "by", "with", "is", "are",
    "was", "per", "x", "than", "more", "less", "times", "more than", "most", "from",
}  # fmt: skip

_NUMBER = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_NUMBER_WORD = "|".join(sorted(map(re.escape, NUMBER_WORDS), key=len, reverse=True))
_VALUE = rf"(?:{_NUMBER}|(?:{_NUMBER_WORD})\b)"
_DURATION_WORD = (
    r"(?:(?:business|working|calendar)[ -])?(?:second|minute|hour|day|week|month|year)s?"
)
_DASHES = "-\u2013\u2014"  # hyphen, en dash, em dash
_LIST_SEPARATOR = rf"(?:\s*[,{_DASHES}]\s*(?:(?:or|and)\s+)?|\s+(?:to|or|and)\s+)"
_VALUE_ITEM = re.compile(_VALUE, re.IGNORECASE)

# "30 days", "12-month", "thirty days", "5 to 10 business days", "1, 3, 5 and 7 days".
_DURATION = re.compile(
    rf"(?<![\w.,])(?P<values>{_VALUE}(?:{_LIST_SEPARATOR}{_VALUE})*)"
    rf"[ -](?P<unit>{_DURATION_WORD})\b",
    re.IGNORECASE,
)
# "$990", "€ 1,200.50", "20 EUR", "USD 20".
_MONEY = re.compile(
    rf"(?P<symbol>[$€£])\s?(?P<amount>{_NUMBER})"
    rf"|(?<![\w.])(?P<amount2>{_NUMBER})\s?(?P<code>{'|'.join(CURRENCY_CODES)})\b"
    rf"|\b(?P<code2>{'|'.join(CURRENCY_CODES)})\s?(?P<amount3>{_NUMBER})"
)
_PERCENT = re.compile(rf"(?<![\w.,])(?P<value>{_NUMBER})\s?(?:%|percent\b)", re.IGNORECASE)
# A number and the word it counts: "3 retries", "25 seats", "10,000 requests".
_COUNT = re.compile(
    rf"(?<![\w.,:/#-])(?P<value>{_NUMBER})(?![.,:/\d-]\d)\s(?P<noun>[A-Za-z][a-z]+)"
)
_DATE_OR_YEAR = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b|\b(?:19|20)\d{2}\b|\b\d{1,2}:\d{2}\b"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:{'|'.join(sorted(MONTH_NAMES, key=len, reverse=True))})\b",
    re.IGNORECASE,
)
# What a span of time is counted from or to ("14 days of the payment date", "7 days before the
# trial ends"), looked for among the few words right after the value.
ANCHOR_WORDS = {"before", "after", "of", "from", "since", "until", "following", "prior"}
ANCHOR_REACH = 6  # words after the value in which an anchor word may start
ANCHOR_LENGTH = 3  # content words an anchor keeps
# Words that say nothing about what a value is about: function words, the units themselves,
# and words every policy uses.
NOT_A_SUBJECT = {
    "the", "a", "an", "and", "or", "of", "to", "in", "on", "at", "for", "by", "with", "is", "are",
    "was", "were", "be", "been", "it", "its", "this", "that", "these", "those", "you", "your",
    "we", "our", "us", "they", "their", "them", "can", "may", "will", "would", "should", "must",
    "not", "no", "any", "all", "each", "every", "up", "within", "than", "more", "less", "also",
    "if", "when", "then", "after", "before", "from", "since", "until", "into", "out", "as", "so",
    "do", "does", "has", "have", "had", "there", "here", "which", "who", "what", "how", "per",
    "about", "only", "other", "one", "first", "last", "same", "default", "usually", "least",
    "most", "following", "prior", "over", "under", "between", "get", "use", "see",
    "second", "minute", "hour", "day", "week", "month", "year", "business", "working",
    "calendar", "time", "period",
}  # fmt: skip
_WORD = re.compile(r"[a-z][a-z'-]+")
# What a value is per: "$0.28 per GB", "$2/month", "$0.15 per GB per month". Read from the start
# of the clause after the value (RATE_REACH characters: "$82 to $164/month" is per month too).
_RATE = re.compile(r"(?:\bper\b|/)\s*(?:\d+[\s-]*)?([A-Za-z]+)", re.IGNORECASE)
RATE_REACH = 40
# A sentence, list item or table cell ends here: a value's context stays inside its own.
_CLAUSE_END = re.compile(r"[.!?;](?=\s|$)|\n|\|")

_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_LINK_TARGET = re.compile(r"\]\([^)]*\)")


@dataclass(frozen=True)
class Quantity:
    """One stated value: ``kind`` is what it measures ("duration", "business days", "USD",
    "percent", "count of seats"), ``value`` its size in the kind's base unit; ``start``/``end``
    are its place in the passage, so it can be marked there."""

    kind: str
    value: Fraction
    start: int
    end: int
    anchor: frozenset[str] = frozenset()  # what the value is counted from; empty: not said
    rate: frozenset[str] = frozenset()  # what it is per ("gb", "month"); empty: not a rate
    context: frozenset[str] = frozenset()  # content words of its sentence and heading


@dataclass(frozen=True)
class Disagreement:
    """A kind of quantity both passages state, with values each states and the other does not."""

    kind: str
    first_only: tuple[Quantity, ...]
    second_only: tuple[Quantity, ...]


def _number(text: str) -> Fraction:
    word = text.lower()
    if word in NUMBER_WORDS:
        return Fraction(NUMBER_WORDS[word])
    return Fraction(text.replace(",", ""))


def _blank(text: str, pattern: re.Pattern[str]) -> str:
    """``text`` with each match of ``pattern`` blanked out: offsets stay those of ``text``."""
    return pattern.sub(lambda match: " " * len(match.group(0)), text)


def _singular(noun: str) -> str:
    """Enough of English plurals that "3 retries" and "1 retry" count the same thing."""
    if noun.endswith("ies") and len(noun) > 4:
        return noun[:-3] + "y"
    if noun.endswith(("ches", "shes", "sses", "xes")):
        return noun[:-2]
    if noun.endswith("s") and not noun.endswith("ss"):
        return noun[:-1]
    return noun


def _subject_words(text: str) -> list[str]:
    return [
        _singular(word)
        for word in _WORD.findall(text.lower())
        if word not in NOT_A_SUBJECT and word not in NUMBER_WORDS
        and _singular(word) not in NOT_A_SUBJECT
    ]  # fmt: skip


def _clause(text: str, start: int, end: int) -> tuple[int, int]:
    """The sentence, list item or table cell around ``text[start:end]``."""
    before = [match.end() for match in _CLAUSE_END.finditer(text, 0, start)]
    after = _CLAUSE_END.search(text, end)
    return (before[-1] if before else 0), (after.start() if after else len(text))


def _anchor(before: str, rest: str) -> frozenset[str]:
    """What a value is counted from: the first words after an anchor word among the first
    ``ANCHOR_REACH`` words of ``rest`` (the clause after it: "before the trial ends" gives
    trial, end). An anchor word with nothing after it ("sent before a subscription renews (7
    days before)") points back: the last words of ``before``, the clause ahead of the value."""
    words = _WORD.findall(rest.lower())
    for position, word in enumerate(words[:ANCHOR_REACH]):
        if word in ANCHOR_WORDS:
            after = _subject_words(" ".join(words[position + 1 :]))[:ANCHOR_LENGTH]
            return frozenset(after or _subject_words(before)[-ANCHOR_LENGTH:])
    return frozenset()


def _rate(rest: str) -> frozenset[str]:
    return frozenset(_singular(unit.lower()) for unit in _RATE.findall(rest[:RATE_REACH]))


def same_subject(first: Quantity, second: Quantity) -> bool:
    """Whether two values are about the same thing: the same rate (a price per GB is not a
    price per month), then anchors that share a word when both are counted from something,
    else contexts that share one."""
    if first.rate != second.rate:
        return False
    if first.anchor and second.anchor:
        return bool(first.anchor & second.anchor)
    return bool(first.context & second.context)


def _overlaps(taken: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(start < taken_end and taken_start < end for taken_start, taken_end in taken)


def quantities_in(text: str, *, heading: str = "") -> list[Quantity]:
    """Every quantity ``text`` states, in order. Each stretch of text is read once, as the most
    specific thing it can be: money, then percentages, then durations, then counts. ``heading``
    is the passage's own (last) heading: its words join every value's context."""
    readable = text
    for pattern in (_FENCE, _INLINE_CODE, _LINK_TARGET, _DATE_OR_YEAR):
        readable = _blank(readable, pattern)
    readable = readable.replace("*", " ").replace("_", " ")  # emphasis markers
    found: list[Quantity] = []
    taken: list[tuple[int, int]] = []

    heading_words = frozenset(_subject_words(heading))

    def add(kind: str, value: Fraction, start: int, end: int) -> None:
        clause_start, clause_end = _clause(readable, start, end)
        around = readable[clause_start:start] + " " + readable[end:clause_end]
        found.append(
            Quantity(
                kind=kind,
                value=value,
                start=start,
                end=end,
                anchor=_anchor(readable[clause_start:start], readable[end:clause_end]),
                rate=_rate(readable[end:clause_end]),
                context=frozenset(_subject_words(around)) | heading_words,
            )
        )
        taken.append((start, end))

    for match in _MONEY.finditer(readable):
        if match.group("symbol"):
            currency, amount = CURRENCY_SYMBOLS[match.group("symbol")], match.group("amount")
        elif match.group("code"):
            currency, amount = match.group("code"), match.group("amount2")
        else:
            currency, amount = match.group("code2"), match.group("amount3")
        add(currency, _number(amount), match.start(), match.end())
    for match in _PERCENT.finditer(readable):
        if not _overlaps(taken, match.start(), match.end()):
            add("percent", _number(match.group("value")), match.start(), match.end())
    for match in _DURATION.finditer(readable):
        if _overlaps(taken, match.start(), match.end()):
            continue
        unit = re.sub(r"[ -]+", " ", match.group("unit").lower()).removeprefix("calendar ")
        kind, size = DURATION_UNITS[unit.removesuffix("s")]
        for value in _VALUE_ITEM.findall(match.group("values")):
            add(kind, _number(value) * size, match.start(), match.end())
    for match in _COUNT.finditer(readable):
        noun = match.group("noun").lower()
        if noun in NOT_A_COUNTED_THING or noun in MONTH_NAMES:
            continue
        if _overlaps(taken, match.start(), match.end()):
            continue
        thing = _singular(noun)
        add(f"count of {thing}", _number(match.group("value")), match.start(), match.end())
    return sorted(found, key=lambda quantity: quantity.start)


def disagreements(first: list[Quantity], second: list[Quantity]) -> list[Disagreement]:
    """The kinds of quantity on which two passages state different values: both state the kind
    and each has a value the other lacks (a superset is elaboration, not contradiction), about
    the same subject (``same_subject``). Only the values with such a counterpart are kept."""
    first_by_kind: dict[str, list[Quantity]] = defaultdict(list)
    second_by_kind: dict[str, list[Quantity]] = defaultdict(list)
    for quantity in first:
        first_by_kind[quantity.kind].append(quantity)
    for quantity in second:
        second_by_kind[quantity.kind].append(quantity)
    found = []
    for kind in sorted(first_by_kind.keys() & second_by_kind.keys()):
        first_values = {quantity.value for quantity in first_by_kind[kind]}
        second_values = {quantity.value for quantity in second_by_kind[kind]}
        first_only = tuple(q for q in first_by_kind[kind] if q.value not in second_values)
        second_only = tuple(q for q in second_by_kind[kind] if q.value not in first_values)
        first_only = tuple(q for q in first_only if any(same_subject(q, o) for o in second_only))
        second_only = tuple(q for q in second_only if any(same_subject(o, q) for o in first_only))
        if first_only and second_only:
            found.append(Disagreement(kind=kind, first_only=first_only, second_only=second_only))
    return found
