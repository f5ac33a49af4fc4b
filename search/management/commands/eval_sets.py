from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from search.tooling.evalsets.cases import KINDS, cases_as_lines, cases_derive, cases_text
from search.tooling.evalsets.pages import pages_read
from search.tooling.evalsets.sources import (
    SOURCES_FILE,
    EvalSourceError,
    source_stage,
    sources_load,
    staged_verify,
)


class Command(BaseCommand):
    help = (
        "External eval sets: 'stage NAME --repo GIT_DIR_OR_URL' copies the pinned pages into "
        ".data/eval-sources/NAME; 'build NAME' derives corpus/eval-sets/NAME.jsonl from them."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["stage", "build"])
        parser.add_argument("name", help="a set named in corpus/eval-sets/sources.json")
        parser.add_argument("--repo", help="stage: a local git directory or a URL to clone")
        parser.add_argument(
            "--record",
            action="store_true",
            help="stage: write the staged tree's checksum into sources.json (a deliberate re-pin)",
        )

    def handle(self, *args: object, action: str, name: str, **options: object) -> None:
        sources = sources_load()
        if name not in sources:
            raise CommandError(f"unknown set {name!r}; sources.json has {', '.join(sources)}")
        source = sources[name]
        try:
            if action == "stage":
                repo = str(options["repo"] or source.repository)
                record_in = SOURCES_FILE if options["record"] else None
                folder = source_stage(source, repo=repo, record_in=record_in)
                pages = sum(1 for path in folder.rglob("*") if path.is_file())
                self.stdout.write(f"staged {pages} pages of {name} at {source.commit} in {folder}")
                return
            folder = staged_verify(source)
        except EvalSourceError as exc:
            raise CommandError(str(exc)) from exc

        derivation = cases_derive(pages_read(folder), reference_folders=source.reference_folders)
        target = SOURCES_FILE.parent / f"{name}.jsonl"
        lines = cases_as_lines(derivation.cases)
        target.write_text(cases_text(lines), encoding="utf-8")
        for kind in KINDS:
            written = sum(1 for line in lines if line["kind"] == kind)
            self.stdout.write(
                f"{kind}: {written} cases of {derivation.candidates[kind]} candidates "
                f"({derivation.dropped_ambiguous[kind]} ambiguous questions dropped)"
            )
        self.stdout.write(
            f"{derivation.rejected_files} files refused by the parser; wrote {len(lines)} cases "
            f"to {target}"
        )
