"""Choose the fusion weights by measurement: ``dump`` one eval set's candidates (run it against
the database that indexes that set), then ``fit`` over several dumps with leave-one-set-out
cross-validation, an RRF comparison and the per-question oracle."""

from __future__ import annotations

import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from kb.tooling.outputs import output_prepared
from search.fusion import FusionWeights
from search.results import RetrievalUnavailable
from search.services import retrieve
from search.tooling.evaluation import EvalCaseError, cases_load
from search.tooling.tuning.fusion import (
    WEIGHT_GRID,
    best_policy,
    dump_load,
    dump_write,
    dumped_case,
    leave_one_set_out,
    mean,
    metrics,
    ndcg_table,
    oracle_ndcg,
    page_topic_folds,
    phrase_folds,
    policy_ndcg,
    rrf_ranker,
    z_ranker,
)


class Command(BaseCommand):
    help = "Dump eval candidates with both legs' scores, or fit the fusion weights over dumps."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        dump = actions.add_parser("dump", help="one eval set's candidates, from this database")
        dump.add_argument("cases", type=Path)
        dump.add_argument("--name", required=True, help="the eval set's name in the report")
        dump.add_argument("--output", type=Path, required=True)
        fit = actions.add_parser("fit", help="cross-validated weights over several dumps")
        fit.add_argument("dumps", type=Path, nargs="+")

    def handle(self, *args: object, action: str, **options: object) -> None:
        if action == "dump":
            self._dump(Path(str(options["cases"])), str(options["name"]), options["output"])
        else:
            dumps = options["dumps"]
            assert isinstance(dumps, list)  # nargs="+"
            self._fit([Path(str(path)) for path in dumps])

    def _dump(self, cases_path: Path, name: str, output_option: object) -> None:
        try:
            cases = cases_load(cases_path)
        except (OSError, EvalCaseError) as exc:
            raise CommandError(str(exc)) from exc
        output = output_prepared(str(output_option))  # before the questions, not after
        dumped = []
        for case in tqdm(cases, desc=name, unit="q", file=sys.stderr):
            try:
                result = retrieve(
                    question=case.question,
                    limit=100,
                    candidates=100,
                    rerank=False,
                    weights=FusionWeights(),
                )
            except RetrievalUnavailable as exc:
                raise CommandError(str(exc)) from exc
            dumped.append(dumped_case(case, result, identifier=bool(result.identifier_phrases)))
        dump_write(output, name, dumped)
        self.stdout.write(f"{len(dumped)} cases of {name} written to {output}")

    def _fit(self, paths: list[Path]) -> None:
        sets = dict(dump_load(path) for path in paths)
        write = self.stdout.write
        write("nDCG@10 (page level) by keyword weight w, fused = (1-w) z(cosine) + w z(BM25)")
        header = f"{'w':>5}" + "".join(f"{name[:12]:>13}" for name in sets) + f"{'mean':>13}"
        write(header)
        for weight in WEIGHT_GRID:
            ranker = z_ranker(plain=weight, identifier=weight)
            values = [metrics(cases, ranker)["ndcg@10"] for cases in sets.values()]
            write(
                f"{weight:>5.2f}"
                + "".join(f"{v:>13.3f}" for v in values)
                + f"{mean(values):>13.3f}"
            )
        write("\nweighted RRF (k=60) at its best single weight, for comparison:")
        best_rrf = max(
            WEIGHT_GRID,
            key=lambda w: mean(
                metrics(c, rrf_ranker(keyword_weight=w))["ndcg@10"] for c in sets.values()
            ),
        )
        values = [metrics(c, rrf_ranker(keyword_weight=best_rrf))["ndcg@10"] for c in sets.values()]
        write(
            f"{best_rrf:>5.2f}" + "".join(f"{v:>13.3f}" for v in values) + f"{mean(values):>13.3f}"
        )
        write("\nleave-one-set-out: weights fitted on the other sets, nDCG@10 on the held-out one")
        for fold in leave_one_set_out(sets):
            write(
                f"  {fold.held_out:<14} plain w={fold.plain:.2f} identifier w={fold.identifier:.2f}"
                f"  nDCG@10 {fold.ndcg:.3f}"
            )
        tables = {name: ndcg_table(cases) for name, cases in sets.items()}
        write("\nleave-one-set-out with a per-question policy (coverage, identifier, plain):")
        for held_out in tables:
            training = [t for name, t in tables.items() if name != held_out] or [tables[held_out]]
            policy = best_policy(training)
            write(
                f"  {held_out:<14} plain {policy.plain:.2f} identifier {policy.identifier:.2f} "
                f"quoted {policy.quoted:.2f} at coverage >= {policy.coverage:.2f}  "
                f"nDCG@10 {policy_ndcg(tables[held_out], policy):.3f}"
            )
        write(
            "\npage-topic weight, leave-one-set-out with the shipped keyword weights "
            "(nDCG@10 held out, without the page topic in brackets):"
        )
        folds, topic = page_topic_folds(sets)
        for topic_fold in folds:
            write(
                f"  {topic_fold.held_out:<14} page topic {topic_fold.page_topic:.1f}  "
                f"nDCG@10 {topic_fold.ndcg:.3f} ({topic_fold.without:.3f})"
            )
        write(f"  best on every set: {topic:.1f}")
        write(
            "\nphrase weight for quoting questions, leave-one-set-out with the other weights "
            "shipped (page nDCG@10 and section R@1 held out, without the phrases in brackets):"
        )
        phrase_fold_list, phrase = phrase_folds(sets)
        for phrase_fold in phrase_fold_list:
            section = (
                ""
                if phrase_fold.section_recall is None
                else f"  section R@1 {phrase_fold.section_recall:.3f}"
                f" ({phrase_fold.section_without:.3f})"
            )
            write(
                f"  {phrase_fold.held_out:<14} phrases {phrase_fold.quoted_phrase:.1f}  "
                f"nDCG@10 {phrase_fold.ndcg:.3f} ({phrase_fold.without:.3f}){section}"
            )
        write(f"  best on every set: {phrase:.1f}")
        shipped = best_policy(list(tables.values()))
        write(f"\nfitted on every set: {shipped}")
        for name, table in tables.items():
            write(f"  {name:<14} nDCG@10 {policy_ndcg(table, shipped):.3f}")
        write("\nper-question oracle (each question at its own best weight):")
        for name, cases in sets.items():
            write(f"  {name:<14} nDCG@10 {oracle_ndcg(cases):.3f}")
