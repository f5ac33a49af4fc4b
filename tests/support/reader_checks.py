"""Both content defences run over a folder of Markdown, counted by reason: how the false
positives on a real documentation set are measured (``test_content_checks.py`` runs it on a
staged external set; ``python -m tests.support.reader_checks FOLDER DOMAIN...`` prints it)."""

from __future__ import annotations

import sys
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from assistant.injection import HTML_COMMENT, INSTRUCTION_PATTERNS
from kb.content_checks import reader_directed_lines

# Reasons that judge what a sentence asks of the reader; the others flag any address, link or
# site outside ``domains``, which on someone else's documentation is policy, not judgement.
JUDGEMENT_REASONS = ("asks the reader for credentials", "contact on a messaging app")


@dataclass
class FolderFlags:
    pages: int = 0
    lines: int = 0
    flagged_lines: int = 0  # lines the reader check flags, for any reason
    reasons: Counter[str] = field(default_factory=Counter)  # reason (without its detail) -> lines
    judged: list[str] = field(default_factory=list)  # "path:line: text" flagged by judgement
    instruction_lines: list[str] = field(default_factory=list)  # "path:line: text" flagged


def folder_flags(folder: Path, *, domains: tuple[str, ...]) -> FolderFlags:
    flags = FolderFlags()
    for file in sorted(folder.rglob("*.md")):
        path = file.relative_to(folder).as_posix()
        body = file.read_text(encoding="utf-8", errors="replace")
        flags.pages += 1
        flags.lines += len(body.splitlines())
        for line in reader_directed_lines(body, domains=domains):
            flags.flagged_lines += 1
            kinds = {reason.split(":")[0] for reason in line.reasons}
            flags.reasons.update(kinds)
            if any(kind.startswith(JUDGEMENT_REASONS) for kind in kinds):
                flags.judged.append(f"{path}:{line.line_number}: {line.text}")
        # Comments go as neutralise removes them, keeping their line breaks for the numbering.
        shown = HTML_COMMENT.sub(lambda match: "\n" * match.group().count("\n"), body)
        for number, line in enumerate(shown.split("\n"), start=1):
            probe = unicodedata.normalize("NFKC", line)
            if any(pattern.search(probe) for _, pattern in INSTRUCTION_PATTERNS):
                flags.instruction_lines.append(f"{path}:{number}: {line.strip()[:120]}")
    return flags


if __name__ == "__main__":  # pragma: no cover - a measuring aid
    import django

    django.setup()
    found = folder_flags(Path(sys.argv[1]), domains=tuple(sys.argv[2:]))
    print(
        f"{found.pages} pages, {found.lines} lines, {found.flagged_lines} flagged: "
        f"{dict(found.reasons)}; instruction-like lines: {len(found.instruction_lines)}"
    )
    for entry in [*found.judged, *found.instruction_lines]:
        print(" ", entry)
