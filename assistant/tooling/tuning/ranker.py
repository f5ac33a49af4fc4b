"""The learned unit ranker's lab (issue #24): LightGBM lambdarank over the units of the quote
dumps (``assistant.tooling.tuning.quotes``), one group per question, trained on calibration
halves only, its hyper-parameters chosen by leave-one-set-out, and judged with the replay
``answer_tuning fit`` uses (facts stated + lead states, less a little for length).

A unit is labelled 1 when it, read with the sentence that follows it when it leads, states one
of the case's facts (``assistant.facts.states``): for an "all" case a unit holding one of the
facts is still the right lead, since the quotes that follow may hold the rest.
"""

from __future__ import annotations

import itertools
import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from assistant.facts import states as fact_stated
from assistant.tooling.tuning.quotes import (
    Orderer,
    QuoteChoice,
    ReplayScore,
    as_quoted,
    dump_half,
    replay_score,
    shortlisted,
)
from assistant.tooling.tuning.unit_ranking import (
    RANKER_FEATURES,
    UnitRanker,
    dumped_ranker_units,
    file_sha256,
    ranker_features,
)
from assistant.units import UnitWeights

SEED = 24


@dataclass(frozen=True)
class RankerParams:
    leaves: int = 3
    rounds: int = 50
    learning_rate: float = 0.1
    min_leaf: int = 20
    # False: the shipped weights' score is hidden from the model (its columns held at 0), so it
    # learns an order of its own from the signals rather than a correction of today's order
    shipped_score: bool = True

    def lightgbm(self) -> dict[str, Any]:
        return {
            "objective": "lambdarank",
            "num_leaves": self.leaves,
            "learning_rate": self.learning_rate,
            "min_data_in_leaf": self.min_leaf,
            "lambdarank_truncation_level": 10,
            "eval_at": [1],
            "seed": SEED,
            "deterministic": True,
            "force_row_wise": True,
            "num_threads": 1,
            "verbosity": -1,
        }


GRID = tuple(
    RankerParams(
        leaves=leaves, rounds=rounds, learning_rate=rate, min_leaf=min_leaf, shipped_score=score
    )
    for score, leaves, rounds, rate, min_leaf in itertools.product(
        (True, False), (3, 7), (20, 60, 150), (0.05, 0.1), (20, 50)
    )
)
SCORE_COLUMNS = [RANKER_FEATURES.index(name) for name in ("score", "score_gap", "score_order")]

# Per dumped row: the row itself (so an id reused by a later dict is never read as it), its
# shortlisted units and their ranker features; every fold of leave-one-set-out reads them.
_GROUPS: dict[int, tuple[dict[str, Any], list[dict[str, Any]], np.ndarray]] = {}


def group(row: dict[str, Any]) -> tuple[list[dict[str, Any]], np.ndarray]:
    """A dumped case's shortlisted units and their ranker features (computed once per row)."""
    cached = _GROUPS.get(id(row))
    if cached is None or cached[0] is not row:
        units, features = shortlisted(row)
        similarities = np.array([unit["similarity"] for unit in units], dtype=np.float32)
        rows = ranker_features(
            question=row["question"],
            units=dumped_ranker_units(units),
            similarities=similarities,
            features=features,
        )
        cached = _GROUPS[id(row)] = (row, units, rows)
    return cached[1], cached[2]


def labels(row: dict[str, Any], units: Sequence[dict[str, Any]]) -> np.ndarray:
    """1 for a unit that, as a lead would be quoted, states one of the case's facts."""
    found = []
    for unit in units:
        text = as_quoted(unit, units, {id(unit)})
        found.append(any(fact_stated(text, fact) for fact in row["facts"]))
    return np.array(found, dtype=np.float32)


def training_groups(
    rows: Sequence[dict[str, Any]],
) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """The answerable, not refused cases with a unit stating a fact and one not: the others
    teach a ranker nothing."""
    features, targets, sizes = [], [], []
    for row in rows:
        if not row["answerable"] or row["refused"]:
            continue
        units, x = group(row)
        y = labels(row, units)
        if len(units) < 2 or y.max() == 0 or y.min() == 1:
            continue
        features.append(x)
        targets.append(y)
        sizes.append(len(units))
    if not sizes:
        return np.zeros((0, len(RANKER_FEATURES))), np.zeros(0), []
    return np.vstack(features), np.concatenate(targets), sizes


def ranker_train(rows: Sequence[dict[str, Any]], params: RankerParams) -> UnitRanker:
    import lightgbm

    x, y, sizes = training_groups(rows)
    if not params.shipped_score:
        x = x.copy()
        x[:, SCORE_COLUMNS] = 0.0  # a constant column: no tree splits on it
    data = lightgbm.Dataset(
        x, label=y, group=sizes, feature_name=list(RANKER_FEATURES), params={"verbosity": -1}
    )
    booster = lightgbm.train(params.lightgbm(), data, num_boost_round=params.rounds)
    return UnitRanker(booster.model_to_string())


def orderer_of(ranker: UnitRanker) -> Orderer:
    def order(
        row: dict[str, Any], units: list[dict[str, Any]], _: np.ndarray, __: np.ndarray
    ) -> np.ndarray:
        return ranker.score(group(row)[1])

    return order


SHIPPED = QuoteChoice(weights=UnitWeights())


def loso_choose(
    calibration: Mapping[str, list[dict[str, Any]]], grid: Sequence[RankerParams] = GRID
) -> tuple[RankerParams, list[str]]:
    """The parameters whose models, each trained on all calibration halves but one set's,
    score best on the left-out set's calibration half (mean over sets)."""
    lines, best, chosen = [], -1e9, grid[0]
    today = statistics.fmean(replay_score(rows, SHIPPED).objective for rows in calibration.values())
    lines.append(f"  shipped weights: calibration objective {today:.4f} (the bar)")
    for params in grid:
        scores = []
        for name in calibration:
            others = [row for other, rows in calibration.items() if other != name for row in rows]
            scores.append(
                replay_score(
                    calibration[name], SHIPPED, orderer=orderer_of(ranker_train(others, params))
                ).objective
            )
        mean = statistics.fmean(scores)
        lines.append(f"  {params}: LOSO calibration objective {mean:.4f}")
        if mean > best + 1e-9:
            best, chosen = mean, params
    return chosen, lines


def _row(name: str, label: str, score: ReplayScore) -> str:
    return (
        f"{name:<28}{label:<10}{score.stated:>4}/{score.answerable:<4}{score.states_fact:>7.1%}"
        f"{score.lead:>5}{score.lead_states_fact:>7.1%}{score.median_words:>7.0f}"
        f"{score.objective:>9.4f}"
    )


def ranker_report(
    dumps: Mapping[str, list[dict[str, Any]]],
    *,
    held_out: Mapping[str, list[dict[str, Any]]],
    grid: Sequence[RankerParams] = GRID,
) -> tuple[UnitRanker, RankerParams, list[str]]:
    """Choose the parameters by leave-one-set-out on the calibration halves of ``dumps``,
    train on all of them, and score every report half (and every case of ``held_out``)
    against the shipped weights' order."""
    calibration = dump_half(dumps, "calibration")
    report = dump_half(dumps, "report")
    params, lines = loso_choose(calibration, grid)
    lines.append(f"chosen by leave-one-set-out: {params}")
    final = ranker_train([row for rows in calibration.values() for row in rows], params)
    lines.append(
        f"{'set':<28}{'order':<10}{'stated':>9}{'':>7}{'lead':>5}{'':>7}{'words':>7}{'obj.':>9}"
    )
    for name in dumps:
        others = [row for other, rows in calibration.items() if other != name for row in rows]
        loso = ranker_train(others, params)
        for label, orderer in (
            ("weights", None),
            ("LOSO", orderer_of(loso)),
            ("ranker", orderer_of(final)),
        ):
            lines.append(
                _row(
                    f"{name} (report)", label, replay_score(report[name], SHIPPED, orderer=orderer)
                )
            )
        # the model trained without this set never saw any of its cases: both halves count
        for label, orderer in (("weights", None), ("LOSO", orderer_of(loso))):
            lines.append(
                _row(f"{name} (all)", label, replay_score(dumps[name], SHIPPED, orderer=orderer))
            )
        reachable = sum(
            bool(labels(row, group(row)[0]).max(initial=0))
            for row in report[name]
            if row["answerable"] and not row["refused"]
        )
        lines.append(
            f"  {name} (report): a shortlisted unit could lead with a fact for {reachable}"
        )
    for name, rows in held_out.items():
        for label, orderer in (("weights", None), ("ranker", orderer_of(final))):
            lines.append(
                _row(f"{name} (all, held out)", label, replay_score(rows, SHIPPED, orderer=orderer))
            )
    importance = final.booster.feature_importance(importance_type="gain")
    ranked = sorted(zip(RANKER_FEATURES, importance, strict=True), key=lambda pair: -pair[1])
    lines.append("gain: " + ", ".join(f"{name} {gain:.1f}" for name, gain in ranked[:12]))
    return final, params, lines


def ranker_save(
    ranker: UnitRanker,
    params: RankerParams,
    *,
    output: Path,
    command: str,
    data: Sequence[Path],
) -> None:
    """The model as LightGBM's text, and beside it what it was trained on and how."""
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(ranker.booster.model_to_string(), encoding="utf-8")
    metadata = {
        "features": list(RANKER_FEATURES),
        "params": {**params.lightgbm(), "num_boost_round": params.rounds},
        "command": command,
        "training_data": {path.name: file_sha256(path) for path in data},
        "training_rows": "the calibration half of each dump",
        "model_sha256": file_sha256(output),
    }
    output.with_suffix(".json").write_text(json.dumps(metadata, indent=2) + "\n", encoding="utf-8")
