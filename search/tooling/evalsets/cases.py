"""Eval cases derived mechanically from a folder of documentation pages.

Two kinds, each labelled with its page and its section (the label a chunk's `heading_path` holds):

- `natural`: questions a reader would type. A heading that is a question ("Why is my app
  OutOfSync?") asks for its section; a how-to heading, page title or page description ("Installing
  Argo CD", "Deploy an app") is rephrased by one fixed rule as "How do I install Argo CD?".
- `definition`: a reference entry's description restated as the question: the description column
  of an option table, a definition entry, a reference page's own description (a function or
  command), a flag's help text in a CLI usage block, or the first sentence under an option-named
  heading (`### baseURL`).

No case is edited by hand. A question whose text comes from two places is ambiguous and dropped;
definitions shorter than six words or occurring twice are dropped. Each kind is capped by seeded,
stratified sampling (round-robin over where the questions came from), so the output is stable.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from kb.chunking.markup import outside_code_spans
from kb.chunking.sentences import first_sentence
from kb.chunking.structure import BlockKind, is_table_delimiter_row, table_cells
from search.tooling.evalsets.pages import Page, PageFolder, PageSection

KINDS = ("natural", "definition")
CASES_PER_KIND = 150
SAMPLING_SEED = 20261201
MIN_DEFINITION_WORDS = 6

# Headings that name a kind of content, not a task: never a question on their own.
GENERIC_HEADINGS = frozenset(
    {
        "overview",
        "example",
        "examples",
        "usage",
        "introduction",
        "intro",
        "summary",
        "prerequisites",
        "requirements",
        "next steps",
        "see also",
        "options",
        "flags",
        "global options",
        "inherited options",
        "options inherited from parent commands",
        "notes",
        "note",
        "syntax",
        "configuration",
        "setup",
        "installation",
        "related",
        "references",
        "reference",
        "description",
        "parameters",
        "arguments",
        "returns",
        "what's next?",
        "what's next",
        "getting started",
        "faq",
        "troubleshooting",
        "conclusion",
    }
)

# Verbs a how-to title starts with, in their base form. "Installing ..." and "Install ..." both
# become "How do I install ...?"; a title starting with any other word is not a how-to.
HOW_TO_VERBS = frozenset(
    [
        "access",
        "add",
        "allow",
        "apply",
        "attach",
        "authenticate",
        "automate",
        "back",
        "build",
        "change",
        "check",
        "choose",
        "clean",
        "configure",
        "connect",
        "control",
        "create",
        "customize",
        "debug",
        "define",
        "delete",
        "deploy",
        "detach",
        "disable",
        "display",
        "embed",
        "enable",
        "export",
        "fix",
        "generate",
        "get",
        "handle",
        "host",
        "import",
        "inspect",
        "install",
        "integrate",
        "launch",
        "manage",
        "migrate",
        "monitor",
        "mount",
        "move",
        "optimize",
        "organize",
        "override",
        "paginate",
        "protect",
        "provision",
        "publish",
        "pull",
        "push",
        "recover",
        "register",
        "remove",
        "rename",
        "render",
        "replace",
        "resize",
        "restart",
        "restore",
        "roll",
        "rotate",
        "run",
        "scale",
        "secure",
        "send",
        "serve",
        "set",
        "share",
        "sign",
        "specify",
        "start",
        "stop",
        "switch",
        "sync",
        "translate",
        "troubleshoot",
        "trigger",
        "uninstall",
        "update",
        "upgrade",
        "upload",
        "use",
        "validate",
        "verify",
        "view",
        "write",
    ]
)
# Words that verbs and nouns share ("cache", "list", "log") are left out of the lexicon: "Cache
# busters" is not a task. An object starting with one of these is not an object either.
_NON_OBJECTS = frozenset({"it", "this", "that", "them", "these", "those"})
_NOT_OBJECT_STARTS = frozenset({"of", "vs", "vs.", "versus", "and", "or", "for"})

_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)|!?\[([^\]]*)\]\[[^\]]*\]")
_HTML_TAG = re.compile(r"<[^>]+>")
_EMPHASIS = re.compile(r"(\*\*|__|\*|_)(?=\S)(.+?)(?<=\S)\1")
_SHORTCODE = re.compile(r"\{\{[<%].*?[>%]\}\}")
_LEADING_TYPE = re.compile(r"^\((?:[^()]|\([^()]*\))*\)\s*")  # "(`string`) The path ..."
_FLAG_LINE = re.compile(
    r"^\s*(?:-[A-Za-z0-9], )?--[A-Za-z0-9][\w.-]*(?: [^\s]+)?\s{2,}(?P<help>\S.*)$"
)
_OPTION_HEADING = re.compile(r"^`[^`\s]+`$|^[A-Za-z_][\w./:\[\]-]*$")
_CAMEL_CASE = re.compile(r"[a-z][A-Z]")
_DESCRIPTION_COLUMNS = frozenset({"description", "purpose", "meaning", "details", "explanation"})


@dataclass(frozen=True)
class DerivedCase:
    kind: str
    origin: str  # where the question came from: "faq", "how-to", "table", "flag", ...
    question: str
    path: str
    label: str

    def as_json(self, case_id: str) -> dict[str, object]:
        return {
            "id": case_id,
            "kind": self.kind,
            "origin": self.origin,
            "question": self.question,
            "relevant": [self.path],
            "relevant_sections": [self.label],
        }


@dataclass(frozen=True)
class Derivation:
    cases: list[DerivedCase]
    candidates: dict[str, int]  # per kind, after dropping ambiguous and duplicate questions
    dropped_ambiguous: dict[str, int]  # per kind: question texts that came from two places
    rejected_files: int  # files the parser refused


def cases_derive(
    folder: PageFolder,
    *,
    reference_folders: Sequence[str] = (),
    per_kind: int = CASES_PER_KIND,
    seed: int = SAMPLING_SEED,
) -> Derivation:
    candidates = {
        "natural": [case for page in folder.pages for case in _natural(page)],
        "definition": [
            case for page in folder.pages for case in _definitions(page, reference_folders)
        ],
    }
    chosen: list[DerivedCase] = []
    counts: dict[str, int] = {}
    dropped: dict[str, int] = {}
    for kind in KINDS:
        unique, dropped[kind] = _unambiguous(candidates[kind])
        counts[kind] = len(unique)
        chosen.extend(_stratified_sample(unique, per_kind=per_kind, seed=seed))
    return Derivation(
        cases=chosen,
        candidates=counts,
        dropped_ambiguous=dropped,
        rejected_files=len(folder.rejected),
    )


def cases_as_lines(cases: Sequence[DerivedCase]) -> list[dict[str, object]]:
    """The cases in a stable order, numbered per kind: `natural-001`, `definition-001`, ..."""
    lines: list[dict[str, object]] = []
    for kind in KINDS:
        ordered = sorted(
            (case for case in cases if case.kind == kind),
            key=lambda case: (case.path, case.label, case.question),
        )
        lines.extend(
            case.as_json(f"{kind}-{number:03d}") for number, case in enumerate(ordered, start=1)
        )
    return lines


def cases_text(lines: Sequence[dict[str, object]]) -> str:
    """The cases file as `eval_sets build` writes it: one JSON object per line."""
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)


def how_to_question(text: str) -> str | None:
    """ "Installing Argo CD" / "Install Argo CD" / "How to install Argo CD" → "How do I install
    Argo CD?"; None when the text does not start with a how-to verb or names no object."""
    text = clean_inline(text).rstrip(" .:!")
    if text.lower().startswith("how to "):
        text = text[len("how to ") :]
    words = text.split()
    if len(words) < 2:
        return None
    verb = _base_verb(words[0].lower())
    rest = " ".join(words[1:])
    if (
        verb is None
        or rest.lower() in _NON_OBJECTS
        or rest.lower() in GENERIC_HEADINGS
        or words[1].lower() in _NOT_OBJECT_STARTS
    ):
        return None
    return f"How do I {verb} {rest}?"


def clean_inline(text: str) -> str:
    """Markdown inline markup removed: links keep their text, code and emphasis their words."""
    text = _SHORTCODE.sub(" ", text)
    text = _LINK.sub(lambda match: match.group(1) or match.group(2) or "", text)
    text = re.sub(r"<br\s*/?>", " ", text, flags=re.IGNORECASE)
    text = _HTML_TAG.sub("", text)
    text = outside_code_spans(text, lambda prose: _EMPHASIS.sub(r"\2", prose)).replace("`", "")
    text = text.replace("\\|", "|").replace("\\_", "_").replace("\\*", "*")
    return " ".join(text.split())


def question_key(question: str) -> str:
    """Two questions with the same key are the same question."""
    return " ".join(re.sub(r"[^\w\s]", " ", question.lower()).split())


def _base_verb(word: str) -> str | None:
    if word in HOW_TO_VERBS:
        return word
    if word.endswith("ing") and len(word) > 5:
        stem = word[:-3]
        for base in (stem, stem + "e", stem[:-1] if stem[-1:] == stem[-2:-1] else ""):
            if base in HOW_TO_VERBS:
                return base
    return None


def _lead_section(page: Page) -> PageSection | None:
    return page.sections[0] if page.sections else None


def _natural(page: Page) -> Iterator[DerivedCase]:
    for section in page.sections:
        heading = clean_inline(section.section.heading_text)
        if not heading or heading.lower() in GENERIC_HEADINGS:
            continue
        if heading.endswith("?") and len(heading.split()) >= 3:
            yield DerivedCase("natural", "faq", heading, section.path, section.label)
            continue
        question = how_to_question(heading)
        if question is not None:
            yield DerivedCase("natural", "how-to heading", question, section.path, section.label)
    lead = _lead_section(page)
    if lead is None:
        return
    title_question = how_to_question(page.title)
    if title_question is not None:
        yield DerivedCase("natural", "how-to title", title_question, page.path, lead.label)
    description = page.front_matter.get("description")
    if isinstance(description, str):
        question = how_to_question(_first_sentence(clean_inline(description)))
        if question is not None:
            yield DerivedCase("natural", "task description", question, page.path, lead.label)


def _definitions(page: Page, reference_folders: Sequence[str]) -> Iterator[DerivedCase]:
    if any(page.path.startswith(folder) for folder in reference_folders):
        yield from _reference_description(page)
    for section in page.sections:
        for block in section.section.blocks:
            if block.kind is BlockKind.TABLE:
                for text in _table_descriptions(block.text):
                    yield _definition("table", text, section)
            elif block.kind is BlockKind.PARAGRAPH:
                for text in _definition_list_entries(block.text):
                    yield _definition("definition list", text, section)
            elif block.kind is BlockKind.CODE:
                for line in block.text.split("\n"):
                    match = _FLAG_LINE.match(line)
                    if match:
                        yield _definition("flag", match.group("help"), section)
        heading = section.section.heading_text
        if section.section.level >= 2 and _is_option_name(heading):
            first = section.section.blocks[0]
            if first.kind is BlockKind.PARAGRAPH:
                yield _definition("option heading", _first_sentence(first.text), section)


def _definition(origin: str, text: str, section: PageSection) -> DerivedCase:
    question = _LEADING_TYPE.sub("", clean_inline(text)).strip()
    return DerivedCase("definition", origin, question, section.path, section.label)


def _reference_description(page: Page) -> Iterator[DerivedCase]:
    """A function's or command's own description: front matter, else its first paragraph."""
    description = page.front_matter.get("description")
    if isinstance(description, str) and description.strip():
        lead = _lead_section(page)
        if lead is not None:
            yield _definition("reference description", description, lead)
        return
    for section in page.sections:
        for block in section.section.blocks:
            if block.kind is BlockKind.PARAGRAPH:
                yield _definition("reference description", _first_sentence(block.text), section)
                return


def _is_option_name(heading: str) -> bool:
    """`baseURL`, `server.insecure`, `disable_kinds`, `dry-run`: a name, not an English word
    ("Examples") or a hyphenated title ("Non-Goals")."""
    heading = heading.strip()
    if not _OPTION_HEADING.match(heading):
        return False
    if heading.startswith("`") or "." in heading or "_" in heading:
        return True
    return bool(_CAMEL_CASE.search(heading)) or ("-" in heading and heading == heading.lower())


def _table_descriptions(table: str) -> Iterator[str]:
    rows = [line for line in table.split("\n") if line.strip()]
    if len(rows) < 3 or not is_table_delimiter_row(rows[1]):
        return
    header = [clean_inline(cell).lower() for cell in table_cells(rows[0])]
    column = next((n for n, cell in enumerate(header) if cell in _DESCRIPTION_COLUMNS), None)
    if column is None or column == 0:
        return
    for row in rows[2:]:
        cells = table_cells(row)
        if column < len(cells) and cells[0].strip():
            yield cells[column]


def _definition_list_entries(paragraph: str) -> Iterator[str]:
    """`term` on one line, `: definition` on the next (the Markdown definition-list extension)."""
    lines = paragraph.split("\n")
    for number in range(1, len(lines)):
        line = lines[number]
        if line.startswith(": ") and not lines[number - 1].startswith(":"):
            yield line[2:]


def _first_sentence(text: str) -> str:
    return first_sentence(" ".join(text.split()))


def _unambiguous(candidates: Sequence[DerivedCase]) -> tuple[list[DerivedCase], int]:
    """One case per question text that has exactly one (page, section); the rest dropped."""
    places: dict[str, set[tuple[str, str]]] = defaultdict(set)
    first: dict[str, DerivedCase] = {}
    for case in candidates:
        key = question_key(case.question)
        if not key or case.question.lower() in GENERIC_HEADINGS:
            continue
        if case.kind == "definition" and len(key.split()) < MIN_DEFINITION_WORDS:
            continue
        places[key].add((case.path, case.label))
        first.setdefault(key, case)
    occurrences = Counter(question_key(case.question) for case in candidates)
    kept = []
    dropped = 0
    for key, where in places.items():
        definition_repeated = first[key].kind == "definition" and occurrences[key] > 1
        if len(where) > 1 or definition_repeated:
            dropped += 1
            continue
        kept.append(first[key])
    return kept, dropped


def _stratified_sample(
    cases: Sequence[DerivedCase], *, per_kind: int, seed: int
) -> list[DerivedCase]:
    """Up to `per_kind` cases, taken round-robin from each origin's seeded shuffle."""
    by_origin: dict[str, list[DerivedCase]] = defaultdict(list)
    for case in sorted(cases, key=lambda case: (case.path, case.label, case.question)):
        by_origin[case.origin].append(case)
    queues = []
    for origin in sorted(by_origin):
        queue = list(by_origin[origin])
        random.Random(f"{seed}:{origin}").shuffle(queue)
        queues.append(queue)
    chosen: list[DerivedCase] = []
    while len(chosen) < per_kind and any(queues):
        for queue in queues:
            if queue and len(chosen) < per_kind:
                chosen.append(queue.pop(0))
    return chosen
