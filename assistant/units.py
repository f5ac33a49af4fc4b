"""What an answer can quote, and how well each piece answers *this* question.

A passage is cut into units a reader takes in whole: a sentence, a list item read with the
sentence that introduces it, a table row with its header row, and a numbered procedure as a
whole. Each unit is scored against the question, not by its passage's rank alone:

- meaning: the embedder's question-unit cosine (the unit labelled with its section);
- the question's words, rare ones first: the share of the question's BM25 inverse document
  frequency (the index's own statistics, `search.results.RetrievalResult.term_idfs`) that the
  unit holds, and the share its section's headings hold;
- the question's word pairs, small words kept: "turn on" is not "turn off", though both are
  stop words to a search index;
- the question's kind: a question asking for an amount wants a unit holding a number, and a
  how-to question wants the steps;
- the passage's rank, a little: retrieval has read the whole passage, the unit scorer only the
  piece.

Words are stemmed with the Snowball English stemmer, the algorithm PostgreSQL's ``english``
configuration uses, so the IDF of a question's word is the one its index lexeme has. A question
word that no retrieved unit holds and that is one or two typing slips from a word that one does
("cancle", "subscribtion") is read as that word.
"""

from __future__ import annotations

import dataclasses
import html
import itertools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from assistant.generators.base import Source
from assistant.injection import is_flagged
from assistant.question_cues import cues_for
from kb.chunking.lines import FenceRole, indent_columns
from kb.chunking.markup import (
    CODE_SPAN,
    HTML_ELEMENTS,
    LINK_DESTINATION,
    LINK_LABEL,
    code_span,
    outside_code_spans,
)
from kb.chunking.sentences import ends_statement, split_sentences
from kb.chunking.structure import table_cells
from kb.selectors.passages import PassageLine, passage_lines
from search.keywords import ENGLISH_STOP_WORDS
from search.lexemes import WORD, lexemes, words
from search.lexemes import stem as _stem

# Fences, headings, list items and table delimiters are recognised by kb (``passage_lines``),
# as the chunker saw them; these only take the markup off a line that is quoted.
LIST_MARKER = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s*")
ORDERED_MARKER = re.compile(r"^\s*(\d{1,9})[.)]\s")  # CommonMark: at most nine digits
TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
# A link's label may hold brackets once ("[[services.concurrency]](…)"), its address parentheses
# ("…/wiki/Toml_(file)"); a picture, inline or by reference ("![badge][ref]", MkDocs Material's
# "[![Creating your site]][Creating your site]"), reads as nothing, and a link left with no label
# by it too.
IMAGE = re.compile(rf"!\[[^\[\]]*\](?:{LINK_DESTINATION}|\[[^\[\]]*\])?")
LINK = re.compile(rf"{LINK_LABEL}{LINK_DESTINATION}")
# A reference-style link ("[Staticman][]", "[Talkyard][talk]") reads as its text, and the line
# that defines where one points ("[talk]: https://www.talkyard.io/") is no text at all.
REFERENCE_LINK = re.compile(rf"{LINK_LABEL}\[[^\[\]]*\]")
# CommonMark's backslash escape of an ASCII punctuation character ("CSRF\_TRUSTED\_ORIGINS")
BACKSLASH_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
LINK_DEFINITION = re.compile(r"^\[[^\]]+\]:\s*\S+")
EMPHASIS = re.compile(r"\*\*|__")
# The formatting and media HTML a page writes in its Markdown (``<a href=…>``, ``<ul><li>``,
# ``</p>``, ``<img src=… alt=…>``): the words are quoted, the tags never (pages exported from
# other help-center tools hold many). The reading drops them already (the elements of
# ``kb.chunking.markup.HTML_ELEMENTS``); this catches what a line kept as written and passages
# chunked before it did. Any other tag is left as written: a page telling the reader to paste
# ``<script …>`` means it. A character reference closed by ";" (``&mdash;``, ``&#8212;``) is the
# character a reader sees, outside code spans (Markdown leaves those as written). One not
# closed, as in a query string's "&param=", is left as written.
HTML_TAG = re.compile(rf"</?(?:{HTML_ELEMENTS}|pre)(?:\s[^<>]*)?/?>", re.IGNORECASE)
CHARACTER_REFERENCE = re.compile(r"&(?:#\d+|#x[0-9a-f]+|[a-z][a-z0-9]*);", re.IGNORECASE)
WORDY = re.compile(r"\b[^\W\d_]{2,}")  # a word with letters in it
# A line that is one bold span ("**Once the billing period ends**", "**Use this when:**"): a
# label that heads what follows it, as a heading would, in pages that use no heading there. One
# that ends a sentence ("**Headers cannot be changed after the response starts.**") states
# something, and is read as the sentence it is.
BOLD_LABEL = re.compile(r"^(?:\*\*|__)(?P<label>[^*_].*?)(?<![.!?])(?:\*\*|__)$")
# A definition's line under its term (PHP Markdown Extra, Goldmark, Pandoc, MkDocs' def_list):
# the term heads the definition's sentences as a bold label heads what follows it
DEFINITION = re.compile(r"^:(?:[ \t]+|$)")
NUMBER = re.compile(r"\d")
# A sentence about the page itself ("This page explains what counts as a failure and how the
# retry schedule works.") promises what follows and states none of it.
ABOUT_THE_PAGE = re.compile(
    r"^(?:this|the following) (?:page|guide|article|section|document|tutorial|chapter)s? "
    r"(?:explains|describes|covers|shows|walks|outlines|lists|introduces|summari[sz]es|"
    r"provides|gives|tells|will (?:show|explain|describe|walk|cover|help|guide|teach))\b",
    re.IGNORECASE,
)

# A sentence that opens with a word pointing back to the one before it, with a conjunction
# that goes on from it ("And there is no built-in replication between volumes."), or as an
# example or a consequence of it ("For example, an acquisition-to-activation flow can be split
# into…" after "If your flow is longer, split it into two funnels…").
POINTS_BACK = re.compile(
    r"^(?:(?:this|that|these|those|it|its|they|them|their|such|then|also|however|otherwise"
    r"|instead|and|but|for example|for instance|in other words|as a result|therefore|thus"
    r"|in (?:this|that) case|because of this)\b|e\.g\.)",
    re.IGNORECASE,
)
# A sentence or item that opens as an example of something ("For instance, if you select
# (GMT+01:00) Amsterdam, Berlin… then the beginning and the end of each day…", "An example would
# be to tag all transactions for a trip with a tag like `#Vacation2025`", "Suppose you tag some
# links…"): a customer describing their own case matches it in words and meaning better than
# the rule it illustrates, which is the answer ("…you can change the timezone for your reports
# in the Site timezone field", "Tags are case-sensitive…"). Its score is lowered by the
# ``example`` weight (docs/answers.md, round thirty-two).
ILLUSTRATES = re.compile(
    r"^(?:(?:for example|for instance|(?:as )?(?:an|one|a common|another) example|suppose"
    r"|say (?:that|you|your)|let's say|let us say|imagine)\b|e\.g\.)",
    re.IGNORECASE,
)
# The units whose sentences may point back, and which a lead is quoted after the sentence before
# in: a paragraph's, and a list item's after its first.
POINTING_KINDS = frozenset({"sentence", "item"})
# How many units past the one it brings a quote goes on with, while each points back to the one
# before it (``continuing_unit``). Replayed over the six answer sets' dumps (the objective of
# ``answer_tuning fit``, calibration halves): none 0.8661, one 0.8757, two 0.8849, five 0.8849;
# the report halves 0.8096, 0.8206, 0.8206, 0.8199 (docs/answers.md, round twenty-two).
CONTINUED_UNITS = 2
STEP_KINDS = frozenset({"procedure", "code"})  # the units that answer "how do I ...?"
# The units quoted with the unit after them (``following_unit``), and the units that may be
# that one: a statement is followed by its next statement, or by the steps or the command that
# act on it ("…the cache will eventually contain unused files." then "To remove them, run
# Hugo's garbage collection:" and its `hugo build --gc` block). A row is never followed: the
# next row is another plan's.
FOLLOWING_KINDS = frozenset({"sentence", "item"})
FOLLOWER_KINDS = FOLLOWING_KINDS | STEP_KINDS
MIN_SENTENCE_WORDS = 4  # words with letters in them
MIN_ROW_WORDS = 2
# A shorter sentence is one when it names a value, as reference pages give an entry's default
# ("Default: `None`", "Defaults to `4093`."): a word outside its code and a number or a code
# span ("`merge`" alone names nothing).
MIN_VALUE_WORDS = 1
# A sentence most of whose words are link labels ("See Plans, Pricing and Limits.") is a pointer
# to another page, not a statement.
MAX_LINK_WORD_SHARE = 0.5
MAX_PROCEDURE_STEPS = 12  # a longer list is a reference, not a procedure to quote whole
MAX_CODE_LINES = 12  # a longer block is a listing to read on its page, not an answer
MAX_CODE_CHARS = 600
# Code fenced under a list item ("1. Scale the app to zero Machines:" over `fly scale count 0`)
# is read into the item, as the step's own words, when it is this short: a longer block is a
# listing the step points to.
MAX_ITEM_CODE_LINES = 3
MAX_ITEM_CODE_LINE_CHARS = 100
# Languages whose block under an item is an example of something written, not what to run
EXAMPLE_LANGUAGES = frozenset({"markdown", "md", "mdx", "email", "output", "out"})
# A console session's first line: "$ flask run", PowerShell's "> $env:…" or "PS C:\app>", "C:\>"
SHELL_PROMPT = re.compile(r"[ \t]*(?:\$|>|PS [^>\n]*>|[A-Z]:\\[^>\n]*>)[ \t]+\S")
# CommonMark's hard line break written as a backslash at the end of a line, right after its
# text ("Author: Atishay Jain\"); after a space or another backslash it is a shell's line
# continuation in a command the page did not fence (Fly.io's `curl -i -X GET \` in HTML) or an
# escaped backslash. The reader marks the break with LINE_BREAK.
HARD_BREAK = re.compile(r"(?<![\\\s])\\$")
# A footnote's mark where the page shows a superscript: `[^1]`, which the chunker reads as `[1]`
# (``kb.chunking.markup.FOOTNOTE``) and an Obsidian vault's import writes `\[1\]`, right after
# a word or a stop and before a space or a stop. Not a reference link's label (`[the
# guide][1]`) nor a link (`[1](…)`).
FOOTNOTE_MARK = re.compile(r"(?<=[^\s\[\]()\\])\\?\[\d+\\?\](?=[\s.,;:!?)]|$)")
LINE_BREAK = "\n"
# The words that join a clause to the words before it: PostgreSQL's English stop words (function
# words) and the modal verbs that list leaves out.
JOINING_WORDS = ENGLISH_STOP_WORDS | {"would", "could", "might", "must", "may", "shall"}
OPENING_WORD = re.compile(r"([a-z]+)\b")
UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")  # a pipe a table's cell shows: written `\|` in it
FENCE_MARKS = re.compile(r"^\s*(?:`{3,}|~{3,})")
# A block that names no language but is settings (``_settings``): a TOML or INI `key = value`
# line (a comment may follow), and a `[table]`, `[[array]]` or comment line.
SETTING_LINE = re.compile(r"""[ \t]*[A-Za-z_][\w.-]*[ \t]*=[ \t]*\S.*""")
SETTING_HEADER = re.compile(r"""[ \t]*(?:\[\[?[\w.-]+\]\]?[ \t]*(?:#.*)?|#.*)""")
# The file name or title a fence's info string gives its block, which Hugo (`{file="…"}`),
# Docusaurus and MkDocs (`title="…"`) show above it: often the file the reader must create.
CODE_CAPTION = re.compile(
    r"""(?<![\w-])(?:file|filename|title)[ \t]*=[ \t]*(?:"([^"`\n]+)"|'([^'`\n]+)')"""
)
PROSE_LANGUAGES = frozenset(
    {"markdown", "md", "mdx", "text", "txt", "plain", "plaintext", "email", "none", "output"}
)
# Labels that say only "no highlighting": such a block that opens with a shell prompt is a
# console session (Sphinx's `code-block:: none`). Markdown and e-mail are prose that may open
# with ">" (a quote), as PowerShell's prompt does.
PLAIN_LANGUAGES = frozenset({"", "text", "txt", "plain", "plaintext", "none", "output"})

# What kind of answer a question wants is read from its wording, in its own language
# (`assistant.question_cues`): an amount is answered by a unit holding a number ("How long is
# the free trial?" -> "...starts with a 14-day free trial."), a price by a unit holding a price,
# a how-to question by the steps, and a yes/no question ("...will you retry the card
# automatically?") by a sentence that says yes or no to it, plainly or with a limit.
MONEY = re.compile(r"[$€£¥]\s?\d|\d\s?(?:[$€£¥]|USD|EUR|GBP)\b|\b(?:USD|EUR|GBP)\s?\d")
POLARITY = re.compile(
    r"\b(?:yes|no|not|never|always|only|cannot|can't|won't|isn't|aren't|doesn't|don't|"
    r"automatically|by default|must|required|unless|except)\b",
    re.IGNORECASE,
)
# Actions and their opposites, as stems (one word, or a verb with its particle).
OPPOSITE_ACTIONS = (
    ("turn on", "turn off"),
    ("switch on", "switch off"),
    ("sign in", "sign out"),
    ("log in", "log out"),
    ("opt in", "opt out"),
    ("enabl", "disabl"),
    ("activ", "deactiv"),
    ("add", "remov"),
    ("upgrad", "downgrad"),
    ("subscrib", "unsubscrib"),
    ("allow", "block"),
    ("show", "hide"),
    ("increas", "decreas"),
    ("lock", "unlock"),
    ("paus", "resum"),
)
# Small words that change what a pair of words means ("turn on" / "turn off"); articles say
# nothing either way.
_PAIR_SKIP = frozenset({"a", "an", "the", "my", "our", "your", "i", "we", "you", "it"})
# A question word this long or longer may be a typing slip away from a unit's word.
_MIN_TYPO_LENGTH = 5


def pairs(text: str) -> set[tuple[str, str]]:
    """Adjacent stemmed word pairs of ``text``, small words kept (articles aside)."""
    stems = [_stem(word) for word in words(text) if word not in _PAIR_SKIP]
    return set(itertools.pairwise(stems))


@dataclass(frozen=True)
class Unit:
    """A piece of a passage quoted whole."""

    source: Source
    position: int  # order within its source
    text: str  # as quoted: Markdown links and emphasis removed
    kind: str  # "sentence", "item" (with its lead-in), "row" (with its header), "procedure",
    # "code" (a short code or configuration block with the sentence that introduces it) or
    # "table" (a short table with the sentence that introduces it)
    # for a procedure or a table, the positions of the items or rows it holds (quoting it
    # quotes them)
    holds: tuple[int, ...] = ()
    code: str = ""  # a code unit's block, as written; a table unit's rows, as a Markdown table
    language: str = ""  # its fence's info string
    caption: str = ""  # the file name or title its fence gives it (``CODE_CAPTION``)
    # the paragraph, list item or table row a sentence is read from, counted within its
    # source (-1: a procedure or a code block); the unit ranker's lab reads it from the dumps
    # (whether a unit opens its paragraph)
    paragraph: int = -1
    label: str = ""  # the bold label or the term a sentence is read under (``read_under``)
    # its passage's last unit: the one after it opens the passage that continues it
    # (``next_unit``)
    last: bool = False

    @property
    def words_text(self) -> str:
        """What the unit says, code included: what its words are scored on."""
        return " ".join(part for part in (self.text, self.caption, self.code) if part)


@dataclass(frozen=True)
class QuestionShape:
    quantity: bool  # asks for an amount, a duration, a limit
    how_to: bool  # asks for the steps of something
    yes_no: bool  # asks whether something is so
    money: bool = False  # asks what something costs

    def answered_by(self, text: str) -> bool:
        """Whether ``text`` holds the kind of amount asked for: a price for a money question
        ("12 months of Growth at no cost" holds a number, not a price), a number otherwise."""
        if self.money:
            return bool(MONEY.search(text))
        return self.quantity and bool(NUMBER.search(text))

    @classmethod
    def of(cls, question: str, *, language: str | None = None) -> QuestionShape:
        """The shape of ``question``, read with the cues of ``language`` (an ISO 639-1 code;
        by default the language it is detected in, `assistant.languages.question_language`)."""
        if language is None:
            from assistant.languages import question_language

            language = question_language(question)
        cues = cues_for(language)
        return cls(
            money=bool(cues.money.search(question)),
            quantity=bool(cues.quantity.search(question)),
            how_to=bool(cues.how_to.search(question)),
            yes_no=bool(cues.yes_no.search(question)),
        )


@dataclass(frozen=True)
class UnitWeights:
    """How much each signal adds to the cosine. Chosen by leave-one-set-out over the answer
    eval sets' calibration halves (docs/answers.md, "Choosing what to quote")."""

    terms: float = 0.5
    headings: float = 0.15
    pairs: float = 0.2
    quantity: float = 0.2
    procedure: float = 0.1
    decides: float = 0.1
    rank: float = 0.2
    opposite: float = -0.2
    example: float = -0.1


def units_of(sources: Iterable[Source]) -> list[Unit]:
    return [unit for source in sources for unit in _source_units(source)]


def following_unit(unit: Unit, units: Sequence[Unit]) -> Unit | None:
    """The unit after ``unit`` in its passage when both are sentences or list items, if any: a
    leading one is quoted with it, because a help center states a rule and then its number, its
    exception or its next step, in the same paragraph ("Paddle does not allow editing the VAT
    number. To update it, … cancel it and resubscribe."), in the next one, or in the next item
    ("…you'll find the Force Two-Factor Authentication (2FA) option." then "Click Enforce 2FA to
    make it mandatory for all team members."). With the next paragraph and item read too, and
    not only the next sentence of the paragraph, the answers stated more facts on three external
    sets' report halves (Plausible 27 → 29 of 68, Hugo 4 → 5 of 21, Argo CD's leads 1 → 2 of
    29) and none fewer (docs/answers.md, "Round five")."""
    if unit.kind not in FOLLOWING_KINDS:
        return None
    other = next_unit(unit, units)
    return other if other is not None and brings_next(unit.kind, other.kind) else None


def continuing_unit(unit: Unit, units: Sequence[Unit]) -> Unit | None:
    """The unit after ``unit`` (one a quote brought, ``following_unit``) when it goes on from
    it, pointing back (``points_back``): a rule, what it means, then what to do instead ("Using
    `@celery_app.task`… requires access to the `celery_app` object…" brings "It also means that
    the decorated tasks are tied to the specific Flask and Celery app instances…", which brings
    "Instead, use Celery's `@shared_task` decorator."). A quote brings at most
    ``CONTINUED_UNITS`` of them."""
    if unit.kind not in POINTING_KINDS:
        return None
    other = next_unit(unit, units)
    if other is None:
        return None
    # an item is judged by its own words, not by its list's lead-in ("It may have one of the
    # following messages:") that it shares with the item before it
    if another_term(unit.label, other.label):
        return None
    said = continued(unit.text, other.text)
    return other if points_back(other.kind, said, other.label) else None


def preceding_sentence(unit: Unit, units: Sequence[Unit]) -> Unit | None:
    """The sentence before ``unit`` in its paragraph (or its list item), which a leading
    sentence is quoted after (``assistant.generators.extractive``): a paragraph states its point
    and then what follows from it, and a customer asks in the words of what follows. "This
    keeps you well inside the 10-second timeout." says nothing without "Return `200` as soon as
    the signature is verified…", nor does "If you use “previous period”, it will compare today's
    data only up to the current hour…" answer "Can I compare against the whole of yesterday?"
    without "Note: this is only possible with custom period comparison.", nor "When you try to
    add the 51st site, the site you added first will be disconnected" say why without "Google
    has a limit of 50 live tokens." Only a sentence or an item's later sentence has one: an
    item's first sentence, read with its list's lead-in, is never the one before another's."""
    if unit.kind not in POINTING_KINDS:
        return None
    other = _at(units, unit.source, unit.position - 1)
    return (
        other
        if other is not None and brought_by(other.kind, other.paragraph, unit.paragraph)
        else None
    )


def brought_units(unit: Unit, units: Sequence[Unit], *, lead: bool = False) -> list[Unit]:
    """The units a quote of ``unit`` brings with it, when no other quote has: the sentence
    before it (``preceding_sentence``), the unit after it (``following_unit``) and those that go
    on from that one (``continuing_unit``); for the ``lead``, the rest of its paragraph first
    (``paragraph_rest``), the unit after it then following the paragraph's last sentence. None
    of them is quoted on its own beside it: each is quoted where the page has it, in that quote
    (docs/answers.md, round twenty-seven)."""
    return brought_with(
        unit,
        before=preceding_sentence(unit, units),
        after=lambda one: next_unit(one, units),
        following=lambda one: following_unit(one, units),
        going_on=lambda last: continuing_unit(last, units),
        lead=lead,
    )


def paragraph_rest(unit: _Quoted, after: Callable[[_Quoted], _Quoted | None]) -> list[_Quoted]:
    """The sentences after ``unit`` in its paragraph, in order (``after``: the unit after a unit
    on its page, ``next_unit``), of units or of dumped units alike, which the lead is quoted
    with. A help center's paragraph often restates the customer's problem, then gives its cause
    and its fix ("Even after having added the snippet…, checkout pages… will not be tracked
    yet. That's because they're not using the same theme layout. To enable pageview tracking on
    checkout pages, you need to create a custom pixel."); the customer's words match the first
    sentence best, and the answer is where the writer put it, further on. Replayed over the six
    answer sets' dumps, the leads state a fact more often on nine halves of twelve and less
    often on none (docs/answers.md, round twenty-nine)."""
    rest: list[_Quoted] = []
    last = unit
    paragraph = _paragraph_of(unit)
    while paragraph is not None and (other := after(last)) is not None:
        if _paragraph_of(other) != paragraph:
            break
        rest.append(other)
        last = other
    return rest


def read_to_paragraph_end(
    text: str, unit: _Quoted, after: Callable[[_Quoted], _Quoted | None], taken: Taken
) -> tuple[str, _Quoted]:
    """``text``, the lead's quote so far, ending with ``unit``, read on with the rest of its
    paragraph (``paragraph_rest``) up to a sentence quoted already (``unquoted``, which adds the
    marks of those it quotes to ``taken``); and the last unit it then quotes. The answerer and
    its lab's replay both read the lead so."""
    last = unit
    for other in paragraph_rest(unit, after):
        if unquoted(other, taken) is None:
            break
        text, last = quoted_with(text, _text(other)), other
    return text, last


def _paragraph_of(unit: Unit | dict[str, Any]) -> tuple[int, int] | None:
    """The passage and the paragraph a sentence is read from; None for any other unit (an item,
    a row, a procedure, a code block: none is a paragraph's sentence)."""
    if _kind(unit) != "sentence":
        return None
    if isinstance(unit, Unit):
        return (unit.source.number, unit.paragraph)
    paragraph = int(unit.get("paragraph", -1))
    return None if paragraph < 0 else (int(unit["source"]), paragraph)


def brought_with(
    unit: _Quoted,
    *,
    before: _Quoted | None,
    after: Callable[[_Quoted], _Quoted | None],
    following: Callable[[_Quoted], _Quoted | None],
    going_on: Callable[[_Quoted], _Quoted | None],
    lead: bool = False,
) -> list[_Quoted]:
    """What a quote of ``unit`` brings (``brought_units``), of units or of dumped units alike:
    the unit ``before`` it; for the ``lead``, the rest of its paragraph (``paragraph_rest``,
    ``after`` giving the unit after a unit on its page); the unit ``following`` the last of
    those, and up to ``CONTINUED_UNITS`` that go on from that one (``going_on``)."""
    rest = paragraph_rest(unit, after) if lead else []
    brought = ([] if before is None else [before]) + rest
    last = following(rest[-1] if rest else unit)
    for _ in range(CONTINUED_UNITS + 1):
        if last is None:
            break
        brought.append(last)
        last = going_on(last)
    return brought


def next_unit(unit: Unit, units: Sequence[Unit]) -> Unit | None:
    """The unit after ``unit`` on its page: the next of its passage, or, when it ends its
    passage, the one after its copy in the passage that continues it (``continues``), or that
    passage's first unit if it repeats none. "Rather than passing options every time you run a
    command… you can use Flask's dotenv support…" ended one passage of Flask's "Environment
    Variables From dotenv"; the next, also among the passages, opened with it again and went on
    "If `python-dotenv` is installed, running the `flask` command will set environment
    variables defined in the files `.env` and `.flaskenv`.", the answer.

    A numbered list is read as its items and then, after them, as the procedure that holds
    them: what follows its last item on the page is what follows the procedure, never the
    procedure, which would quote the item again ("…automatically. 1. … 2. … automatically.")."""
    if not unit.last:
        other = _at(units, unit.source, unit.position + 1)
        if other is not None and unit.position in other.holds:
            return next_unit(other, units)
        return other
    here = place_of(unit.source)
    then = next((s for s in _passages(units) if continues(here, place_of(s))), None)
    if then is None:
        return None
    # the copy is told by its own words: the chunker repeats a block, not the label over it
    # ("**Your data**" heads the sentence in one chunk and not in the next)
    said = unlabelled(unit.text, unit.label)
    copy = next(
        (
            o
            for o in units
            if o.source.number == then.number and unlabelled(o.text, o.label) == said
        ),
        None,
    )
    if copy is not None:
        return _at(units, then, copy.position + 1)
    first = _at(units, then, 0)
    repeated = {unlabelled(o.text, o.label) for o in units if o.source.number == unit.source.number}
    return None if first is None or unlabelled(first.text, first.label) in repeated else first


# Where a passage lies on its page: its page (document id), its chunk's place among the page's
# chunks (-1: not known) and its section.
Place = tuple[int, int, str]


def place_of(source: Source) -> Place:
    return (source.document_id, source.ordinal, source.section)


def continues(passage: Place, then: Place) -> bool:
    """Whether the passage at ``then`` is the one right after the passage at ``passage`` on its
    page, in the same section: the chunker cuts a long section into chunks one after the other,
    each opening with the last blocks of the one before when they are short
    (``kb.chunking.chunker``), so the two read as one text."""
    document, ordinal, section = passage
    return ordinal >= 0 and then == (document, ordinal + 1, section)


def _at(units: Sequence[Unit], source: Source, position: int) -> Unit | None:
    return next(
        (
            unit
            for unit in units
            if unit.source.number == source.number and unit.position == position
        ),
        None,
    )


def _passages(units: Sequence[Unit]) -> list[Source]:
    return list({unit.source.number: unit.source for unit in units}.values())


# The rules of the functions above (the unit after a quote, those that go on from it, the
# sentence before a lead), which the lab's replay applies to dumped units too
# (``assistant.tooling.tuning.quotes``): one owner for what a quote brings.
def brings_next(kind: str, next_kind: str) -> bool:
    """Whether a quote of a unit of ``kind`` brings the unit after it, of ``next_kind``."""
    return kind in FOLLOWING_KINDS and next_kind in FOLLOWER_KINDS


def points_back(kind: str, text: str, label: str = "") -> bool:
    """Whether a unit opens by pointing back to the sentence before it; one read under a label
    or a term, by what follows it ("`static`: For example: `favicon.ico`…" points back to
    "`static`: The `static` directory contains files that will be copied…")."""
    return _opens_with(POINTS_BACK, kind, text, label)


def illustrates(kind: str, text: str, label: str = "") -> bool:
    """Whether a sentence or a list item opens as an example (``ILLUSTRATES``); one read under a
    label or a term, by what follows it."""
    return _opens_with(ILLUSTRATES, kind, text, label)


def _opens_with(opening: re.Pattern[str], kind: str, text: str, label: str) -> bool:
    """Whether a sentence or a list item's own words (after the ``label`` or term it is read
    under) open with ``opening``."""
    return kind in POINTING_KINDS and bool(opening.match(unlabelled(text, label)))


def another_term(label: str, next_label: str) -> bool:
    """Whether a sentence read under ``next_label`` opens the definition of another term (or
    the paragraph of another bold label) than the sentence before it, read under ``label``: its
    "this" is its own term ("Fuse.js gist: This gist builds a JSON index…" after "hugo-lunr: It
    indexes your pages."), and it does not go on from the sentence before."""
    return bool(label) and bool(next_label) and label != next_label


def unlabelled(text: str, label: str) -> str:
    """A unit's ``text`` without the ``label`` or term it is read under (``read_under``)."""
    return text.removeprefix(read_under(label, "")) if label else text


def brought_by(kind: str, paragraph: int, next_paragraph: int) -> bool:
    """Whether a unit (of ``kind``, read from ``paragraph``) is quoted before the sentence after
    it (read from ``next_paragraph``) when that one leads: a sentence of its paragraph, or of its
    list item (an item's first sentence, read with its list's lead-in, is never the one before
    another item's)."""
    return kind in POINTING_KINDS and paragraph == next_paragraph


def continued(lead: str, following: str) -> str:
    """``following`` as quoted after ``lead``: without the lead-in the two begin with ("To
    cancel: Go to Settings." then "To cancel: Click Cancel." reads "To cancel: Go to Settings.
    Click Cancel.")."""
    length = next(
        (i for i, (a, b) in enumerate(zip(lead, following, strict=False)) if a != b),
        min(len(lead), len(following)),
    )
    cut = following[:length].rfind(": ")
    return following[cut + 2 :] if cut > 0 else following


_Quoted = TypeVar("_Quoted", bound="Unit | dict[str, Any]")  # a unit, or a dumped one


def quoted_with(text: str, following: str | None) -> str:
    """A quote's ``text`` with the unit quoted after it (``following_unit``), if any: after a
    semicolon when ``text`` ends with no stop, as list items do ("…are preserved in the
    cluster; The finalizer is removed…"), which would otherwise run into one sentence."""
    if following is None:
        return text
    separator = " " if ends_statement(text) else "; "
    return f"{text}{separator}{continued(text, following)}"


# What tells a unit quoted already (``unquoted``): the unit itself, or its words, which the copy
# of it that opens the next chunk of its section shares (``kb.chunking.chunker`` repeats a
# chunk's last blocks at the start of the next).
Taken = set[int | str]


def taken_by(units: Iterable[Unit | dict[str, Any]]) -> Taken:
    """The marks of ``units`` quoted (``unquoted``): each one's id and words."""
    return {mark for unit in units for mark in _marks(unit)}


def _marks(unit: Unit | dict[str, Any]) -> tuple[int, str]:
    # a dumped unit's text is its words (``Unit.words_text``)
    return id(unit), unit.words_text if isinstance(unit, Unit) else str(unit["text"])


def unquoted(after: _Quoted | None, taken: Taken) -> _Quoted | None:
    """``after``, the unit following a quote, if it is to be quoted with it: not when it is
    quoted already (``taken``, the marks of the units picked or brought so far, to which its
    own are then added), itself or in the same words: Flask's "This is because the blueprint
    does not "own" a certain URL space…" ended one quote and was the sentence before the next,
    from the chunk that repeats it. The answerer and its lab's replay both ask this, of units
    and of dumped units."""
    if after is None:
        return None
    marks = _marks(after)
    if any(mark in taken for mark in marks):
        return None
    taken.update(marks)
    return after


# The units a quote shows a block after its text for: a code block, a table. Nothing can be
# quoted after the block in the same quote, so a quote that ends with one ends its run.
BLOCK_KINDS = frozenset({"code", "table"})


def quote_runs(
    spans: Sequence[tuple[_Quoted, _Quoted]], after: Callable[[_Quoted], _Quoted | None]
) -> list[list[int]]:
    """The quotes of an answer that its page has one right after the other, as runs, each
    quoted as one quote: two quotes of one passage read as two pieces of it, the later one on
    the page often first ("Common mistakes: Port mismatch…" [1] then "Common mistakes:
    Listening on `127.0.0.1`…" [1]), or the sentence that states the fact after the one that
    leads (Plausible's "The discount applies to Business plans on annual billing only." [1]
    then "The discount is 15% off your first payment…" [1], the sentence before it).

    ``spans`` gives each quote's first and last unit on the page, in the answer's order;
    ``after`` is the unit after a unit on its page (``next_unit``), which opens the next quote
    when it is that quote's first unit or says its words on the same page (``_same``). Each
    run lists its quotes in page order and stands where the first of them stands in the
    answer: the run of the lead leads. A quote that ends with a block (``BLOCK_KINDS``) ends
    its run, and a table's row is quoted on its own, under its header row, as ever."""
    runs = [[index] for index in range(len(spans))]
    joined = True
    while joined:
        joined = False
        for one, other in itertools.permutations(range(len(runs)), 2):
            last, first = spans[runs[one][-1]][1], spans[runs[other][0]][0]
            if not _runs_on(last, first, after):
                continue
            keep, drop = sorted((one, other))
            runs[keep] = runs[one] + runs[other]
            del runs[drop]
            joined = True
            break
    return runs


def run_text(quotes: Sequence[tuple[str, str]]) -> str:
    """The text of a run of quotes (``quote_runs``), each given in page order as its text and
    its last unit's: each after the first without the lead-in it shares with the unit before it
    ("Common mistakes: Listening on `127.0.0.1`…; Port mismatch…")."""
    (text, last), *rest = quotes
    for quoted, its_last in rest:
        text, last = quoted_with(text, continued(last, quoted)), its_last
    return text


def _runs_on(last: _Quoted, first: _Quoted, after: Callable[[_Quoted], _Quoted | None]) -> bool:
    """Whether a quote that ends with ``last`` goes on into one that opens with ``first``."""
    if _kind(last) in BLOCK_KINDS or "row" in (_kind(last), _kind(first)):
        return False
    return _same(after(last), first)


def _kind(unit: Unit | dict[str, Any]) -> str:
    return unit.kind if isinstance(unit, Unit) else str(unit["kind"])


def _text(unit: Unit | dict[str, Any]) -> str:
    return unit.text if isinstance(unit, Unit) else str(unit["text"])


def _same(unit: _Quoted | None, other: _Quoted) -> bool:
    """Whether ``unit`` is ``other``, or the same words of the same page: a passage and the page
    section read beside it (``search.services.with_page_sections``), or two chunks of one
    section, may both hold a unit."""
    if unit is None:
        return False
    return unit is other or (_marks(unit)[1] == _marks(other)[1] and _page(unit) == _page(other))


def _page(unit: Unit | dict[str, Any]) -> int:
    return unit.source.document_id if isinstance(unit, Unit) else int(unit.get("document", -1))


# The rank credit of a page section read beside the retrieved passages, as a share of its
# page's first passage's: chosen on the answer sets' calibration halves (docs/answers.md, "The
# passages the answer step sees").
PAGE_SECTION_RANK_SHARE = 0.75

FEATURES = (
    "terms",
    "headings",
    "pairs",
    "quantity",
    "procedure",
    "decides",
    "rank",
    "opposite",
    "example",
)


def units_score(
    *,
    question: str,
    units: Sequence[Unit],
    similarities: np.ndarray,
    idfs: Mapping[str, float] | None = None,
    weights: UnitWeights | None = None,
    context: str | None = None,
) -> np.ndarray:
    """Each unit's score for ``question``: ``similarities`` (its cosine to the question) plus
    the weighted ``unit_features``."""
    features = unit_features(question=question, units=units, idfs=idfs, context=context)
    return np.asarray(similarities, dtype=np.float32) + weighted(features, weights)


def weighted(features: np.ndarray, weights: UnitWeights | None = None) -> np.ndarray:
    """What ``unit_features`` rows add to each unit's cosine under ``weights``."""
    vector = np.array(
        [getattr(weights or UnitWeights(), name) for name in FEATURES], dtype=np.float32
    )
    return np.asarray(features, dtype=np.float32).reshape(-1, len(FEATURES)) @ vector


def shortlist(features: np.ndarray, *, limit: int) -> list[int]:
    """The positions, in order, of the ``limit`` units holding the most of the question's IDF
    (``unit_features``' "terms"): the ones worth an embedder call when a passage is long."""
    terms = np.asarray(features, dtype=np.float32).reshape(-1, len(FEATURES))[:, 0]
    if len(terms) <= limit:
        return list(range(len(terms)))
    return sorted(int(index) for index in np.argsort(-terms, kind="stable")[:limit])


def unit_features(
    *,
    question: str,
    units: Sequence[Unit],
    idfs: Mapping[str, float] | None = None,
    context: str | None = None,
) -> np.ndarray:
    """One row per unit, one column per name in ``FEATURES``, each in [0, 1].

    ``idfs`` maps index lexemes to their IDF (without them every word weighs the same);
    ``context`` is what a follow-up leans on: its words count too, at half weight, so "and for
    annual plans?" is read as about refunds but answered about annual plans."""
    idfs = idfs or {}
    shape = QuestionShape.of(question)
    wanted = set(question_lexemes(question, units))
    leaning = set(question_lexemes(context, units)) - wanted if context else set()
    question_pairs = pairs(question)
    rank = _rank_credits(units)
    features = np.zeros((len(units), len(FEATURES)), dtype=np.float32)
    for index, unit in enumerate(units):
        held = lexemes(_read_words(unit))
        terms = _share(wanted, held, idfs)
        if leaning:
            terms = (terms + 0.5 * _share(leaning, held, idfs)) / 1.5
        found = pairs(f"{unit.source.section} {unit.words_text}") & question_pairs
        features[index] = (
            terms,
            _share(wanted, lexemes(unit.source.section), idfs),
            len(found) / len(question_pairs) if question_pairs else 0.0,
            float(shape.answered_by(unit.text)),
            float(shape.how_to and unit.kind in STEP_KINDS),
            float(shape.yes_no and bool(POLARITY.search(unit.text))),
            rank[unit.source.number],
            float(opposite_action(question, f"{last_heading(unit)} {unit.text}")),
            float(illustrates(unit.kind, unit.text, unit.label)),
        )
    return features


def _rank_credits(units: Sequence[Unit]) -> dict[int, float]:
    """Source number -> the "rank" feature of its units: 1 / (1 + its place among the retrieved
    passages), and for a page section read beside them (``Source.page_section``)
    ``PAGE_SECTION_RANK_SHARE`` of the credit of its page's first retrieved passage (or of the
    last place, when no passage of that page is among the units)."""
    sources = {unit.source.number: unit.source for unit in units}
    retrieved = sorted(number for number, source in sources.items() if not source.page_section)
    credit = {number: 1 / (1 + place) for place, number in enumerate(retrieved)}
    first_of_page: dict[int, int] = {}
    for number in retrieved:
        first_of_page.setdefault(sources[number].document_id, number)
    last = 1 / (1 + len(retrieved))
    for number, source in sources.items():
        if source.page_section:
            page = first_of_page.get(source.document_id)
            credit[number] = PAGE_SECTION_RANK_SHARE * (credit[page] if page else last)
    return credit


def _read_words(unit: Unit) -> str:
    """What a unit's words are scored on. A numbered procedure no sentence introduces is read
    under its heading, which plays that sentence's part ("Turning on 2FA" over "1. Go to
    Settings > Security…"), as a procedure with a lead-in is read with it."""
    if unit.kind == "procedure" and ORDERED_MARKER.match(unit.text):
        return f"{last_heading(unit)} {unit.words_text}"
    return unit.words_text


def opposite_action(question: str, text: str) -> bool:
    """Whether ``text`` is about the opposite of what ``question`` asks to do: "How do I turn
    on 2FA?" against "You can turn off 2FA in Settings..." (both hold every word the question
    names, and a search index drops "on" and "off" as stop words)."""
    asked, said = _actions(question), _actions(text)
    return any(
        (one in asked and other in said and other not in asked and one not in said)
        for first, second in OPPOSITE_ACTIONS
        for one, other in ((first, second), (second, first))
    )


def _actions(text: str) -> set[str]:
    found = [_stem(word) for word in words(text)]
    return set(found) | {f"{a} {b}" for a, b in itertools.pairwise(found)}


def last_heading(unit: Unit) -> str:
    return unit.source.section.rsplit(" > ", 1)[-1]


BEST_LINES = 3  # the lines a writing generator is shown first


def best_lines(
    *, question: str, sources: Sequence[Source], idfs: Mapping[str, float] | None = None
) -> list[tuple[int, str]]:
    """The sources' units most likely to answer ``question``, best first, as (source number,
    text), for a generator that writes its own answer. Scored by words and kind alone (no
    embedder call: the model reads every passage anyway, this only orders its reading)."""
    units = units_of(sources)
    if not units:
        return []
    scores = units_score(
        question=question, units=units, similarities=np.zeros(len(units)), idfs=idfs
    )
    order = [int(index) for index in np.argsort(-scores, kind="stable")][:BEST_LINES]
    return [(units[index].source.number, units[index].words_text) for index in order]


def question_lexemes(question: str, units: Sequence[Unit]) -> frozenset[str]:
    """The question's index terms, each word the units lack read as a unit word one or two
    typing slips away (`question_as_read`: one reading of a mistyped word for both)."""
    return frozenset(lexemes(question_as_read(question, units)))


def question_as_read(question: str, units: Sequence[Unit]) -> str:
    """``question`` with each word the units lack replaced by the unit word one or two typing
    slips away, as ``question_lexemes`` reads it: what the embedder is given, since a model
    reads "cancle my subscribtion" as about something else (its cosine to the "How to cancel"
    steps on the sample: 0.32 misspelt, 0.76 spelt right). Of the unit words with the stem
    found, the one closest to what was typed stands in ("cancel", not "cancellation")."""
    stems = _unit_stems(units)

    def read(match: re.Match[str]) -> str:
        word = match.group(0)
        if word.casefold() in ENGLISH_STOP_WORDS:
            return word
        near = _nearest(_stem(word.casefold()), stems)
        if near is None:
            return word
        typed = word.casefold()
        return min(stems[near], key=lambda held: (_slips(typed, held, limit=9), len(held)))

    return WORD.sub(read, question)


def _unit_stems(units: Sequence[Unit]) -> dict[str, list[str]]:
    """Stem -> the units' words holding it (stop words aside), sorted."""
    vocabulary = {word for unit in units for word in words(f"{unit.source.section} {unit.text}")}
    stems: dict[str, list[str]] = {}
    for word in sorted(vocabulary - ENGLISH_STOP_WORDS):
        stems.setdefault(_stem(word), []).append(word)
    return stems


def _share(wanted: set[str], held: set[str], idfs: Mapping[str, float]) -> float:
    """The share of ``wanted``'s IDF that ``held`` holds (a word the index lacks weighs as the
    rarest: its IDF is unknown, and a word no page uses is what a question is most about)."""
    if not wanted:
        return 0.0
    rarest = max(idfs.values(), default=1.0)
    total = sum(idfs.get(term, rarest) for term in wanted)
    return sum(idfs.get(term, rarest) for term in wanted & held) / total if total else 0.0


def _nearest(term: str, stems: Mapping[str, object]) -> str | None:
    """The units' stem one or two slips from ``term`` (a stem they lack), or None: when the
    units hold ``term``, it is short, or nothing is that near."""
    if term in stems or len(term) < _MIN_TYPO_LENGTH:
        return None
    allowed = 1 if len(term) < 8 else 2
    near = [
        (slips, stem)
        for stem in stems
        if abs(len(stem) - len(term)) <= allowed
        and (slips := _slips(term, stem, limit=allowed)) <= allowed
    ]
    return min(near)[1] if near else None


def _slips(a: str, b: str, *, limit: int) -> int:
    """Edits between ``a`` and ``b``: insertions, deletions, substitutions and swaps of two
    neighbouring letters (the optimal string alignment distance), or ``limit + 1`` as soon as
    it must exceed ``limit``: once two rows in a row hold nothing within it, no later row can.
    (Most of a help center's words are far from a mistyped one: this is the hot loop.)"""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], previous2[j - 2] + 1)
        if min(current) > limit and min(previous) > limit:
            return limit + 1
        previous2, previous = previous, current
    return min(previous[len(b)], limit + 1)


def _source_units(source: Source) -> list[Unit]:
    found: list[Unit] = []
    blocks = _blocks(source.text)
    first_unit: list[int] = []  # block -> the position of its first unit (or of the next one)
    for paragraph, block in enumerate(blocks):
        first_unit.append(len(found))
        # a paragraph the rows of a table follow: its last sentence leads into the table
        leads_into_table = (
            block.kind == "paragraph"
            and paragraph + 1 < len(blocks)
            and blocks[paragraph + 1].kind == "row"
        )
        if block.kind == "code":
            found.append(
                Unit(
                    source=source,
                    position=len(found),
                    text=clean(block.text),
                    kind="code",
                    code=block.code,
                    language=block.language,
                    caption=block.caption,
                )
            )
            continue
        if block.kind == "procedure":
            holds = tuple(range(first_unit[block.first], len(found)))  # every unit of its list
            found.append(
                Unit(
                    source=source,
                    position=len(found),
                    text=block.text,
                    kind="procedure",
                    holds=holds,
                )
            )
            continue
        # A table row is one statement, whatever punctuation its cells hold; its column names
        # make a short one ("Currency: GBP; Minimum: £0.30") complete.
        is_row = block.kind == "row"
        pieces = [block.text] if is_row else _sentences(block.text)
        minimum = MIN_ROW_WORDS if is_row else MIN_SENTENCE_WORDS
        # a sentence is read under the label or the term it stands under; a term is what its
        # sentences are about, so it counts when a pointer to another page is told from a
        # statement ("`path`: A [glob pattern](g) matching the page's [logical path](g).")
        labelled = bool(block.label) and block.kind not in {"row", "item"}
        for number, piece in enumerate(pieces, start=1):
            if _mostly_link_labels(read_under(block.label, piece) if block.term else piece):
                continue
            text = clean(piece)
            # A lead-in ("…request a refund on 10 April:") promises what it does not say, as
            # a sentence about the page does, unless it leads into a table, which it is then
            # quoted with ("By default, Acme retries a failed payment 4 times:" before the
            # schedule); a sentence that asks ("Have you lost your recovery codes?") says
            # nothing either, and a formula or a bare link reads as nothing on its own.
            asks = text.endswith("?") and not is_row  # a row's last cell may ask; it is one
            leads_in = text.endswith(":")
            table_lead_in = (
                leads_in
                and leads_into_table
                and number == len(pieces)
                and len(WORDY.findall(text)) >= MIN_SENTENCE_WORDS
            )
            promises = (leads_in and not table_lead_in) or (
                not is_row and ABOUT_THE_PAGE.match(text)
            )
            short = len(WORDY.findall(text)) < minimum
            # a paragraph that opens in small letters with a word that joins ("would allow the
            # `app-team-one` … namespaces", "and then serving the `asgi_app`…") goes on with
            # the sentence the code block above it interrupted: alone it is half a sentence
            interrupted = block.after_code and number == 1 and _goes_on(text)
            if promises or asks or interrupted or (short and not _names_value(text)):
                continue
            kind = block.kind if block.kind in {"row", "item"} else "sentence"
            table = ""
            if table_lead_in:
                # quoted with the rows it leads into, as a code block's lead-in is with its
                # block: "…retries a failed payment 4 times:" alone promises the schedule
                table = _table_markdown(_rows_after(blocks, paragraph))
                if len(table) > MAX_CODE_CHARS:
                    continue  # a long table is read on its page, its rows one by one
                kind = "table"
            if labelled:
                # under its label, as an item under its lead-in: "Once the billing period
                # ends: Your dashboard is locked."
                text = read_under(block.label, text)
            found.append(
                Unit(
                    source=source,
                    position=len(found),
                    text=text,
                    kind=kind,
                    paragraph=paragraph,
                    label=block.label if labelled else "",
                    code=table,
                )
            )
    found = [_holding_rows(unit, found, blocks) if unit.kind == "table" else unit for unit in found]
    if found:
        found[-1] = dataclasses.replace(found[-1], last=True)
    return found


def _goes_on(text: str) -> bool:
    """Whether ``text`` opens with a small-letter word that joins it to words before it: a
    conjunction, a preposition, a pronoun or an auxiliary verb ("and", "where", "to", "would")."""
    first = OPENING_WORD.match(text)
    return first is not None and first.group(1) in JOINING_WORDS


def _rows_after(blocks: Sequence[_Block], paragraph: int) -> list[_Block]:
    """The rows of the table right after block ``paragraph``: those under one header."""
    rows: list[_Block] = []
    for block in blocks[paragraph + 1 :]:
        if block.kind != "row" or (rows and block.header != rows[0].header):
            break
        rows.append(block)
    return rows


def _table_markdown(rows: Sequence[_Block]) -> str:
    """``rows`` as a Markdown table under their header, their cells as a reader reads them."""
    if not rows:
        return ""

    def line(cells: Iterable[str]) -> str:
        return "| " + " | ".join(UNESCAPED_PIPE.sub(r"\\|", clean(cell)) for cell in cells) + " |"

    header = rows[0].header
    width = max(len(header), *(len(row.cells) for row in rows))
    padded = [*header, *[""] * (width - len(header))]
    return "\n".join([line(padded), "|" + "---|" * width, *(line(row.cells) for row in rows)])


def _holding_rows(table: Unit, units: Sequence[Unit], blocks: Sequence[_Block]) -> Unit:
    """A table unit holding the units of the rows it quotes: quoting it quotes them."""
    rows = range(
        table.paragraph + 1, table.paragraph + 1 + len(_rows_after(blocks, table.paragraph))
    )
    holds = tuple(unit.position for unit in units if unit.kind == "row" and unit.paragraph in rows)
    return dataclasses.replace(table, holds=holds)


def read_under(label: str, text: str) -> str:
    """``text`` read under the label, term or heading over it: "Once the billing period ends:
    Your dashboard is locked."; one that asks or ends its own sentence needs no colon ("Why is
    my list not filtered? You are probably…")."""
    return f"{label} {text}" if label.endswith((".", "?", "!", ":")) else f"{label}: {text}"


def _sentences(text: str) -> list[str]:
    """The sentences of a paragraph's or an item's text, a hard line break ending one too."""
    return [
        sentence
        for line in text.split(LINE_BREAK)
        for sentence in split_sentences(line, abbreviations=True)
    ] or [""]


def _names_value(text: str) -> bool:
    """Whether a short sentence names a value: a word outside its code, and a number or a code
    span ("Default: `None`"; "`merge`" alone names nothing)."""
    words = len(WORDY.findall(CODE_SPAN.sub(" ", text)))
    return words >= MIN_VALUE_WORDS and bool(NUMBER.search(text) or CODE_SPAN.search(text))


@dataclass
class _Block:
    kind: str  # "paragraph", "item", "row", "procedure" or "code"
    text: str
    items: list[str]  # a procedure's steps, as quoted
    first: int = 0  # a procedure's first block: the blocks from it to the procedure are its list
    code: str = ""
    language: str = ""
    label: str = ""  # the bold label or the term the block stands under, if any
    term: bool = False  # the label is the term a definition defines (``DEFINITION``)
    caption: str = ""  # a code block's file name or title (``CODE_CAPTION``)
    # a table row's header and cells, as written (a table's lead-in is quoted with its rows)
    header: tuple[str, ...] = ()
    cells: tuple[str, ...] = ()
    after_code: bool = False  # a paragraph that opens right after a code block on the page


def _blocks(text: str) -> list[_Block]:
    """Paragraphs, list items and table rows of a passage, code, headings and flagged lines
    out; after the items of a numbered list, the list as one procedure.

    A list item is read with the sentence that introduces it ("If you've lost both your device
    and your recovery codes: contact support…"): alone, either half says little.
    """
    reader = _BlockReader()
    for passage_line in passage_lines(text):
        reader.read(passage_line)
    return reader.finish()


class _BlockReader:
    """Reads a passage line by line into ``_Block``s (see ``_blocks``)."""

    def __init__(self) -> None:
        self.blocks: list[_Block] = []
        self.paragraph: list[str] = []
        self.table_header: list[str] | None = None
        self.lead_in: str | None = None  # the "...:" sentence before the current list
        self.in_list = False
        self.steps: list[str] = []  # the current numbered list's items
        self.steps_from = 0  # the block the first of ``steps`` is read into
        self.steps_start = 1  # the number the page shows on the first of ``steps``
        self.in_step = False  # the item read last is the last of ``steps``, not one under it
        self.options: list[str] = []  # the items under a step that ends in a colon
        # the items of the list read now that the next may be nested under: each one's indent
        # (in columns) and the block its text is read into
        self.nesting: list[tuple[int, int]] = []
        # the column the text of the list's outermost items starts at: a paragraph after a blank
        # line that is indented less is not theirs (CommonMark), whatever container holds both
        self.items_column = 0
        self.fence: list[str] | None = None  # the code lines of the fenced block being read
        self.fence_in_item = False  # that block is fenced under a list item
        self.language = ""
        self.caption = ""
        self.label = ""  # the bold label over what is read now (``BOLD_LABEL``)
        self.label_from = 0  # the blocks read before it
        self.label_lists = False  # it introduces the list read now, and ends with it
        self.term = ""  # the term the definition read now defines (``DEFINITION``)
        self.after_code = False  # no line but blank ones read since a code block ended
        self.paragraph_after_code = False  # the paragraph read now opened right after one

    def read(self, passage_line: PassageLine) -> None:
        if passage_line.in_code:
            self._code_line(passage_line)
            return
        if self.fence is not None:  # a block the passage cut before its closing fence
            self._end_code()
        line = passage_line.content
        follows_code, self.after_code = self.after_code, self.after_code and not line
        if "[" in line:
            # a footnote's mark is no text: quoted, "[1]" would read as one of the answer's
            # citations, and "pages.[1] If…" as one sentence
            line = outside_code_spans(line, lambda text: FOOTNOTE_MARK.sub("", text))
        if HARD_BREAK.search(line):
            # CommonMark's hard line break: the page shows no backslash and breaks the line
            # there ("**OAuth:** User token\" above "**Version history:**"), so what comes
            # after it is read apart, as a sentence after a stop is
            line = f"{line[:-1].rstrip()}{LINE_BREAK}"
        if line != passage_line.content:
            passage_line = dataclasses.replace(passage_line, content=line)
        if passage_line.is_heading:
            self._end_section()
        elif not line or is_flagged(line) or LINK_DEFINITION.match(line):
            self._flush()
            self.table_header = None
        elif TABLE_ROW.match(line) or (self.table_header is not None and "|" in line):
            self._table_line(passage_line)
        elif passage_line.is_table_delimiter and "|" in line and self._header_above():
            return  # a table written without its outer pipes, whose header was the line above
        elif passage_line.is_list_item:
            self.table_header = None
            self._list_item(passage_line)
        elif BOLD_LABEL.match(line) and not passage_line.text[:1].isspace():
            self._end_section()
            self.label = clean(line).rstrip(":").strip()
            self.label_from = len(self.blocks)
        elif (
            DEFINITION.match(line) and not self.in_list and (self.term or len(self.paragraph) == 1)
        ):
            self._definition(DEFINITION.sub("", line))
        else:
            self.table_header = None
            if not self.paragraph:
                self.paragraph_after_code = follows_code
            self._paragraph_line(passage_line)

    def finish(self) -> list[_Block]:
        self._flush()
        self._end_procedure()
        if self.fence is not None:
            self._end_code()
        return self.blocks

    def _code_line(self, passage_line: PassageLine) -> None:
        if passage_line.fence is FenceRole.OPEN:
            # a block indented under an item is part of it: the list goes on after it
            self.fence_in_item = self.in_list and passage_line.text[:1].isspace()
            if not self.fence_in_item:
                self._end_section()
            info = FENCE_MARKS.sub("", passage_line.content).strip()
            caption = CODE_CAPTION.search(info)
            self.fence, self.language = [], info.split(" ")[0].casefold()
            self.caption = next(filter(None, caption.groups()), "") if caption else ""
        elif passage_line.fence is FenceRole.BODY and self.fence is not None:
            self.fence.append(passage_line.text)
        elif passage_line.fence is FenceRole.CLOSE and self.fence is not None:
            self._end_code()

    def _end_code(self) -> None:
        assert self.fence is not None
        if self.fence_in_item:
            self._item_code(self.fence)
        else:
            block = _code_block(self.blocks, self.fence, self.language, caption=self.caption)
            if block is not None:
                self.blocks.append(block)
            self.after_code = True  # quoted or not, the page shows it
        self.fence, self.fence_in_item = None, False

    def _item_code(self, lines: list[str]) -> None:
        """A short block fenced under a list item, read into the item (and its step) as code
        spans: "Scale the app to zero Machines: `fly scale count 0`". The page shows the command
        under the step that runs it; apart, the step only promises it and the command says
        nothing of what it is for."""
        code = [line.strip() for line in lines if WORDY.search(line)]  # not "---", "}"
        if (
            code
            and self.language not in EXAMPLE_LANGUAGES
            and len(code) <= MAX_ITEM_CODE_LINES
            and all(len(line) <= MAX_ITEM_CODE_LINE_CHARS for line in code)
            and (self.paragraph or (self.blocks and self.blocks[-1].kind == "item"))
        ):
            spans = " ".join(code_span(line) for line in code)
            if self.paragraph:
                self.paragraph.append(spans)
            else:
                self.blocks[-1].text = f"{self.blocks[-1].text} {spans}"
            if self.in_step:
                self.steps[-1] = f"{self.steps[-1]} {spans}"
        self._flush()  # the text under the block is a paragraph of its own

    def _end_section(self) -> None:
        """A heading or a fence: what was being read ends, and no list or table goes on."""
        self._flush()
        self._end_procedure()
        self.table_header, self.in_list, self.lead_in, self.nesting = None, False, None, []
        self.label, self.label_lists = "", False

    def _header_above(self) -> bool:
        """Whether the paragraph line read last is the header of a table written without its
        outer pipes (GFM: "Path|Pattern|Match" over ":--|:--|:--"); if so it becomes one."""
        if not self.paragraph or "|" not in self.paragraph[-1]:
            return False
        header = self.paragraph.pop()
        self._flush()
        self._end_procedure()
        self._end_list()
        self.table_header = table_cells(header)
        return True

    def _table_line(self, passage_line: PassageLine) -> None:
        self._flush()
        self._end_procedure()
        self._end_list()
        cells = table_cells(passage_line.content)
        if passage_line.is_table_delimiter:
            return
        if self.table_header is None:
            self.table_header = cells
        else:
            self.blocks.append(
                _Block(
                    kind="row",
                    text=table_row(self.table_header, cells),
                    items=[],
                    header=tuple(self.table_header),
                    cells=tuple(cells),
                )
            )

    def _list_item(self, passage_line: PassageLine) -> None:
        raw, line = passage_line.text, passage_line.content
        self._flush()
        self.lead_in = self._start_list()
        top_level = not raw[:1].isspace()
        ordered = ORDERED_MARKER.match(line)
        self.in_step = bool(ordered) and top_level
        # an option of the choice the last step promises ("3. From there you can either:"
        # over "- Change the account email address…"), indented under it or listed right after
        # it: read into the step, which says nothing without them
        option = (
            not self.in_step
            and bool(self.steps)
            and (bool(self.options) or self.steps[-1].endswith(":"))
        )
        if not ordered and top_level and not option:
            self._end_procedure()
        if not self.nesting:  # an outermost item
            marker = LIST_MARKER.match(line)
            self.items_column = indent_columns(raw) + (len(marker.group()) if marker else 0)
        self.in_list = True
        item = LIST_MARKER.sub("", line, count=1)
        lead_in = self._item_lead_in(raw)
        if option:  # under the step's last sentence, as an item under its list's lead-in
            self.options.append(item)
            self.paragraph.append(f"{_sentences(self.steps[-1])[-1]} {item}")
            return
        if self.in_step:
            self._options_end()
            if not self.steps and ordered:
                # a list goes on from its first number ("3." after a table the list broke at)
                self.steps_from, self.steps_start = len(self.blocks), int(ordered.group(1))
            self.steps.append(item)
        self.paragraph.append(f"{lead_in} {item}" if lead_in else item)

    def _item_lead_in(self, raw: str) -> str | None:
        """What the item starting on ``raw`` is read under: its list's lead-in, or, nested
        under another item, that item's last sentence when it introduces the nested list
        ("Its events are recorded in one of these places:") and nothing when it states
        something the nested items go on from ("Any deployed resources … will be deleted."
        over "To preserve deployed resources, set…"). Argo CD's nested items read as if the
        list's lead-in announced them: "…the following occurs (in rough order): To preserve
        deployed resources, set `.syncPolicy.preserveResourcesOnDeletion` to true"."""
        indent = indent_columns(raw)
        while self.nesting and self.nesting[-1][0] >= indent:
            self.nesting.pop()
        parent = self.nesting[-1][1] if self.nesting else None
        self.nesting.append((indent, len(self.blocks)))
        if parent is None:
            return self.lead_in
        above = self.blocks[parent] if parent < len(self.blocks) else None
        last = _sentences(above.text)[-1] if above is not None and above.kind == "item" else ""
        return last if last.endswith(":") else None

    def _paragraph_line(self, passage_line: PassageLine) -> None:
        if (
            self.in_list
            and not self.paragraph
            and indent_columns(passage_line.text) < self.items_column
        ):
            # a paragraph after a blank line, indented less than the items' text: after the
            # list, as Hugo's FAQ gives "In these cases, … use the `--poll` command line flag."
            # under the cases listed in its definition, indented as the definition
            self._end_procedure()
            self._end_list()
        self.paragraph.append(passage_line.content)

    def _end_list(self) -> None:
        """The list read now, if any, ends, and a label that only introduced it ends with it:
        "**Use this when:**" over two items heads them, not "Raw event exports are not
        self-serve and are not real-time." after them (Plausible's "Scheduled raw event
        exports"), which the page shows as a paragraph of its own."""
        if self.in_list and self.label_lists:
            self.label, self.label_lists = "", False
        self.in_list, self.lead_in, self.nesting = False, None, []

    def _definition(self, line: str) -> None:
        """A definition's first line, under the term on the line above it (or under the term
        of the definition before it, a term may have several): the term heads each of its
        sentences, as a bold label does, until the definition's paragraph ends."""
        term = self.term or clean(self.paragraph.pop())
        self._flush()
        self.term = term
        self.paragraph.append(line)

    def _flush(self) -> None:
        if self.paragraph:
            kind = "item" if self.in_list else "paragraph"
            text = " ".join(self.paragraph).replace(f"{LINE_BREAK} ", LINE_BREAK).strip()
            if text:  # not a definition whose only content was a shortcode
                label = self.term or self.label
                block = _Block(
                    kind=kind,
                    text=text,
                    items=[],
                    label=label,
                    term=bool(self.term),
                    after_code=kind == "paragraph" and self.paragraph_after_code,
                )
                self.blocks.append(block)
            self.paragraph.clear()
        self.paragraph_after_code = False
        self.term = ""

    def _options_end(self) -> None:
        """The options read under the last step, if any, into it: "3. From there you can
        either: Change the account email address…; Transfer individual sites…"."""
        if not self.options:
            return
        step = self.steps[-1]
        for option in self.options:  # an option that promises more leads into the next one
            step = f"{step}{' ' if step.endswith(':') else '; '}{option}"
        self.steps[-1] = step
        self.options.clear()

    def _end_procedure(self) -> None:
        self._options_end()
        if 2 <= len(self.steps) <= MAX_PROCEDURE_STEPS:
            numbered = " ".join(
                f"{n}. {clean(step)}" for n, step in enumerate(self.steps, start=self.steps_start)
            )
            text = f"{clean(self.lead_in)} {numbered}" if self.lead_in else numbered
            self.blocks.append(
                _Block(kind="procedure", text=text, items=list(self.steps), first=self.steps_from)
            )
        self.steps.clear()

    def _start_list(self) -> str | None:
        """The lead-in of a list that starts now, taken off the paragraph it ended."""
        if self.in_list:
            return self.lead_in
        blocks = self.blocks
        if not blocks or blocks[-1].kind != "paragraph" or not blocks[-1].text.endswith(":"):
            # a label right over the list introduces it ("**Use this when:**"); one over a
            # paragraph first heads the paragraph, the list and what follows
            self.label_lists = bool(self.label) and len(blocks) == self.label_from
            return f"{self.label}:" if self.label else None
        return _last_sentence_taken(blocks)


def _code_block(
    blocks: list[_Block], lines: list[str], language: str, *, caption: str = ""
) -> _Block | None:
    """A fenced block as a unit, with the sentence that introduces it, when it is short
    configuration or code: the sentence before it ends the paragraph it closes, with a colon
    ("Change this in your project configuration:"), with a comma (a sentence that goes on
    after the block: "by wrapping the Flask app," then "and then serving…") or as a statement
    ("This example adds the command `create-user` that takes the argument `name`."). A
    statement or a comma's half-sentence that introduces a block is quoted with it, not alone;
    Sphinx documentation puts most of its code after such a statement (on the Flask answer
    set's calibration half, facts stated 54.8 -> 62.9%).

    A block without a language, or in a prose one (Markdown, plain text, e-mail), is an example
    of what someone might write, not what the help center says: never quoted, unless it is
    plain text whose first line is a shell prompt ("$ coverage run -m pytest"), which makes it
    a console session, or settings (``_settings``: Fly.io writes `fly.toml` sections in fences
    that name no language), read as TOML. So is a block with no lead-in: without it a reader
    cannot tell what the code is for."""
    code = "\n".join(lines).strip("\n")
    if language in PLAIN_LANGUAGES and SHELL_PROMPT.match(code):
        language = "console"
    elif language in PLAIN_LANGUAGES and _settings(code):
        language = "toml"
    if (
        not language
        or language in PROSE_LANGUAGES
        or not code.strip()
        or len(lines) > MAX_CODE_LINES
        or len(code) > MAX_CODE_CHARS
        or not blocks
        or blocks[-1].kind != "paragraph"
    ):
        return None
    lead_in, label = _sentences(blocks[-1].text)[-1], blocks[-1].label
    if lead_in.endswith(","):
        # a sentence that goes on through the block ("You can use the adapter by wrapping the
        # Flask app," then the code, "and then serving…"): a lead-in, quoted with it alone
        _last_sentence_taken(blocks)
    elif not lead_in.endswith(":"):
        if not lead_in.endswith(".") or len(WORDY.findall(lead_in)) < MIN_SENTENCE_WORDS:
            return None
        _last_sentence_taken(blocks)  # the statement is quoted with its block, not alone
    return _Block(
        kind="code",
        text=read_under(label, lead_in) if label else lead_in,  # under its label, as a sentence is
        items=[],
        code=code,
        language=language,
        caption=caption,
    )


def _settings(code: str) -> bool:
    """Whether a block is TOML or INI settings: every line a `[table]`, a `key = value` or a
    comment, at least one a setting ("[http_service]\\n  auto_stop_machines = \"suspend\"").
    Prose is never written so, and a reply or a note shown as an example does not look so."""
    lines = [line for line in code.splitlines() if line.strip()]
    return any(SETTING_LINE.fullmatch(line) for line in lines) and all(
        SETTING_LINE.fullmatch(line) or SETTING_HEADER.fullmatch(line) for line in lines
    )


def _last_sentence_taken(blocks: list[_Block]) -> str:
    """The last sentence of the paragraph ``blocks`` ends with, taken off it: it introduces
    what follows (a list, a code block) and is read with that."""
    block = blocks.pop()
    *before, last = _sentences(block.text)
    if before:
        blocks.append(dataclasses.replace(block, text=LINE_BREAK.join(before)))
    return last


def _mostly_link_labels(text: str) -> bool:
    """Whether most of the words of ``text`` are link labels: a pointer to another page. A label
    that is a sentence itself ("[Eventlet is no longer maintained.](…)") states it."""
    labels = sum(
        len(WORDY.findall(label)) for label in LINK.findall(text) if not _is_sentence(label)
    )
    return labels > 0 and labels >= MAX_LINK_WORD_SHARE * len(WORDY.findall(clean(text)))


def _is_sentence(label: str) -> bool:
    return label.rstrip().endswith((".", "!", "?")) and (
        len(WORDY.findall(clean(label))) >= MIN_SENTENCE_WORDS
    )


def table_row(header: Sequence[str], cells: Sequence[str]) -> str:
    """A row as one statement naming its columns: "Charge type: Annual plan charge; Window: …".
    Under a header that names no column the first cell is what the row is about, as a term over
    its definition: "`path`: like `string` but also accepts slashes"."""
    described = [
        f"{name}: {cell}" if name else cell
        for name, cell in zip(header, cells, strict=False)
        if cell and cell not in {"—", "-"}
    ]
    if not any(header) and len(described) > 1 and described[0] == cells[0]:
        return f"{described[0]}: {'; '.join(described[1:])}"
    return "; ".join(described)


def clean(text: str) -> str:
    """``text`` as a reader of the page reads it: links and images as their labels, no formatting
    tags or emphasis marks, character references as their characters. Code spans are left as
    written (``MYAPI__CREDENTIALS__USERNAME``, ``<div>``): Markdown shows them so. A link's
    label may hold a code span, so links are read first, over the whole text."""
    text = IMAGE.sub("", text)
    text = REFERENCE_LINK.sub(r"\1", LINK.sub(r"\1", text))
    text = outside_code_spans(text, _prose_cleaned)
    # a space a removed tag or image left before punctuation goes ("Click Save ."), not the one
    # of a symbol written spaced ("Framework :: Flask", "a ... b")
    return re.sub(r"\s+([.,;:!?])(?=\s|$)", r"\1", " ".join(text.split()))


def _prose_cleaned(text: str) -> str:
    """``clean`` on text outside code spans."""
    text = HTML_TAG.sub(" ", text)
    text = CHARACTER_REFERENCE.sub(lambda m: html.unescape(m[0]), text)
    return BACKSLASH_ESCAPE.sub(r"\1", EMPHASIS.sub("", text))
