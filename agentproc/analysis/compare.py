"""Paired comparison of arms (variants, or agents) run on the same scenarios.

An *arm* is every scored episode of one agent, mode and variant. The first arm
(or the one named) is the baseline; every other arm is compared with it on the
scenarios both ran, pairing episodes by scenario and trial:

- per arm, overall and per grid cell: first-answer accuracy, faithful accuracy,
  the unfaithful-correct rate (each with a Wilson interval) and every label's
  rate (episodes carrying it);
- per other arm: the paired difference of each of those rates with a 95%
  percentile bootstrap interval (scenarios resampled, trials kept together) and
  an exact McNemar test; label tests Holm-corrected across labels;
- a verdict on faithful accuracy (better, worse, no detectable difference) with
  the minimum detectable effect at this sample size;
- with trials: pass^k, label stability and whether the arm is deterministic.

Trials of a deterministic arm are copies, not evidence: when both arms are
deterministic, McNemar counts each scenario once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentproc.analysis.cell_stats import wilson
from agentproc.analysis.stats import (
    ALPHA,
    Verdict,
    bootstrap_ci,
    holm,
    mcnemar,
    min_detectable_effect,
    verdict,
)
from agentproc.analysis.trials import Outcome, TrialStats, outcome_of, trial_stats
from agentproc.errors import ConfigError
from agentproc.labelling import LabelKind
from agentproc.runs import (
    ReadReport,
    error_kind_of,
    is_error,
    latest_records,
    record_mode,
    record_variant,
)

MEASURES: tuple[str, ...] = ("first_answer", "faithful", "unfaithful_correct")
"""The episode-level rates compared: first-answer accuracy, faithful accuracy and the
unfaithful-correct rate (a label's rate is compared the same way)."""

CellId = tuple[int, int, str]
"""A grid cell: steps, look-back, cell id."""


def _value(o: Outcome, measure: str) -> bool:
    if measure == "first_answer":
        return o.answer
    if measure == "faithful":
        return o.faithful
    if measure == "unfaithful_correct":
        return o.unfaithful_correct
    return measure in o.labels


def _r(x: float) -> float:
    return round(x, 4)


@dataclass(frozen=True, slots=True)
class Rate:
    """A share of episodes with its Wilson 95% interval."""

    k: int
    n: int

    @property
    def value(self) -> float:
        """The share (0 with no episodes)."""
        return self.k / self.n if self.n else 0.0

    @property
    def ci(self) -> tuple[float, float]:
        """Wilson 95% interval."""
        return wilson(self.k, self.n)

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        return {"value": _r(self.value), "ci": [_r(x) for x in self.ci], "k": self.k, "n": self.n}


@dataclass(frozen=True, slots=True)
class ArmStats:
    """One arm's rates over a group of episodes."""

    n: int
    rates: dict[str, Rate]
    """Each of :data:`MEASURES`, then every label kind."""

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        return {"n": self.n, **{name: r.to_json() for name, r in self.rates.items()}}


def arm_stats(outcomes: Sequence[Outcome], kinds: Sequence[str]) -> ArmStats:
    """The rates of a group of outcomes."""
    n = len(outcomes)
    names = [*MEASURES, *kinds]
    return ArmStats(n, {m: Rate(sum(_value(o, m) for o in outcomes), n) for m in names})


@dataclass(frozen=True, slots=True)
class Difference:
    """A paired difference of one rate: the arm minus the baseline, on paired episodes."""

    measure: str
    n: int
    """Paired episodes."""
    baseline: float
    variant: float
    diff: float
    ci: tuple[float, float]
    """95% paired bootstrap interval of ``diff``."""
    gained: int
    """Pairs where only the arm has it (an answer right, or a label present)."""
    lost: int
    """Pairs where only the baseline has it."""
    p: float
    """Exact McNemar p-value."""
    p_holm: float | None = None
    """Holm-adjusted p-value (labels, across labels)."""

    @property
    def significant(self) -> bool:
        """Whether the (adjusted, if any) p-value is below :data:`ALPHA`."""
        return (self.p if self.p_holm is None else self.p_holm) < ALPHA

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        out: dict[str, Any] = {
            "measure": self.measure,
            "n": self.n,
            "baseline": _r(self.baseline),
            "variant": _r(self.variant),
            "diff": _r(self.diff),
            "ci": [_r(x) for x in self.ci],
            "gained": self.gained,
            "lost": self.lost,
            "p": self.p,
        }
        if self.p_holm is not None:
            out["p_holm"] = self.p_holm
        out["significant"] = self.significant
        return out


@dataclass(frozen=True, slots=True)
class Arm:
    """Every scored episode of one agent, mode and variant."""

    name: str
    agent: str
    mode: str
    variant: str
    outcomes: list[Outcome]
    errored: dict[str, int]
    overall: ArmStats
    cells: dict[CellId, ArmStats]
    trials: TrialStats

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "name": self.name,
            "agent": self.agent,
            "mode": self.mode,
            "variant": self.variant,
            "episodes": len(self.outcomes),
            "errored": self.errored,
            "overall": self.overall.to_json(),
            "cells": [_cell_json(c, s.to_json()) for c, s in self.cells.items()],
            "trials": self.trials.to_json(),
        }


def _cell_json(cell: CellId, body: dict[str, Any]) -> dict[str, Any]:
    return {"cell": cell[2], "steps": cell[0], "lookback": cell[1], **body}


@dataclass(frozen=True, slots=True)
class Comparison:
    """One arm against the baseline, on the scenarios both ran."""

    arm: str
    baseline: str
    scenarios: int
    """Paired scenarios (the bootstrap's units)."""
    pairs: int
    """Paired episodes (scenario and trial)."""
    unpaired: int
    """Episodes of either arm without a partner (left out)."""
    overall: dict[str, Difference]
    """Each of :data:`MEASURES`."""
    cells: dict[CellId, dict[str, Difference]]
    labels: list[Difference]
    """Every label kind, Holm-corrected across kinds."""
    mde: float
    """Minimum detectable effect on faithful accuracy at this sample size."""
    mde_answer: float
    """The same on first-answer accuracy."""
    verdict: Verdict
    """On faithful accuracy."""

    def line(self) -> str:
        """The one-line verdict."""
        f, a = self.overall["faithful"], self.overall["first_answer"]
        head = {
            "better": f"{self.arm}: better than {self.baseline}",
            "worse": f"{self.arm}: worse than {self.baseline}",
            "no detectable difference": f"{self.arm}: no detectable difference from "
            f"{self.baseline} at {self.scenarios} scenarios",
        }[self.verdict]
        moved = [
            f"{d.measure} {'rose' if d.diff > 0 else 'fell'}" for d in self.labels if d.significant
        ]
        return (
            f"{head}: faithful accuracy {_pct(f.baseline)} -> {_pct(f.variant)} "
            f"({_signed(f.diff)} [{_signed(f.ci[0])}, {_signed(f.ci[1])}], McNemar p = {_p(f.p)}); "
            f"first-answer accuracy {_signed(a.diff)} (p = {_p(a.p)})"
            + (f"; {', '.join(moved)}" if moved else "")
            + (
                f"; minimum detectable effect {self.mde * 100:.1f} points"
                if self.verdict == "no detectable difference"
                else ""
            )
        )

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "arm": self.arm,
            "baseline": self.baseline,
            "scenarios": self.scenarios,
            "pairs": self.pairs,
            "unpaired": self.unpaired,
            "overall": {m: d.to_json() for m, d in self.overall.items()},
            "cells": [
                _cell_json(c, {m: d.to_json() for m, d in ds.items()})
                for c, ds in self.cells.items()
            ],
            "labels": [d.to_json() for d in self.labels],
            "min_detectable_effect": _r(self.mde),
            "min_detectable_effect_answer": _r(self.mde_answer),
            "verdict": self.verdict,
            "line": self.line(),
        }


def _pct(x: float) -> str:
    return f"{x * 100:.1f}%"


def _signed(x: float) -> str:
    return f"{x * 100:+.1f}"


def _p(p: float) -> str:
    return f"{p:.3g}" if p >= 0.001 else f"{p:.1e}"


@dataclass(frozen=True, slots=True)
class CompareResult:
    """Every arm and every comparison with the baseline."""

    baseline: str
    arms: dict[str, Arm]
    comparisons: list[Comparison] = field(default_factory=list)
    seed: int = 0

    def to_json(self) -> dict[str, Any]:
        """The JSON form (``agentproc compare --json``)."""
        return {
            "baseline": self.baseline,
            "seed": self.seed,
            "alpha": ALPHA,
            "arms": [a.to_json() for a in self.arms.values()],
            "comparisons": [c.to_json() for c in self.comparisons],
        }


ArmKey = tuple[str, str, str]
"""Agent, mode and variant."""


def _names(keys: Sequence[ArmKey]) -> dict[ArmKey, str]:
    """Short, distinct arm names: the variant when only variants differ, the agent (marked
    ``[text]`` in text mode) when only agents differ, else ``agent/variant``."""

    def agent(k: ArmKey) -> str:
        return f"{k[0]} [text]" if k[1] == "text" else k[0]

    if len({agent(k) for k in keys}) == 1:
        return {k: k[2] for k in keys}
    if len({k[2] for k in keys}) == 1:
        return {k: agent(k) for k in keys}
    return {k: f"{agent(k)}/{k[2]}" for k in keys}


def compare_records(
    records: Iterable[Mapping[str, Any]],
    *,
    baseline: str | None = None,
    seed: int = 0,
) -> CompareResult:
    """Compare every arm of the records with the baseline (the first arm, or ``baseline``).

    Raises:
        ConfigError: fewer than two arms, or no arm of that name.
    """
    outcomes: dict[ArmKey, list[Outcome]] = {}
    errored: dict[ArmKey, dict[str, int]] = {}
    for rec in records:
        key = (str(rec["agent"]), record_mode(rec), record_variant(rec))  # type: ignore[arg-type]
        outcomes.setdefault(key, [])
        errored.setdefault(key, {})
        if is_error(rec):  # type: ignore[arg-type]
            kind = error_kind_of(rec)  # type: ignore[arg-type]
            errored[key][kind] = errored[key].get(kind, 0) + 1
        else:
            outcomes[key].append(outcome_of(rec))
    names = _names(list(outcomes))
    if len(names) < 2:
        found = ", ".join(names.values()) or "none"
        raise ConfigError(
            f"compare needs episodes of at least two variants or agents (found: {found})"
        )
    kinds = _kinds(o for group in outcomes.values() for o in group)
    arms = {names[k]: _arm(names[k], k, group, errored[k], kinds) for k, group in outcomes.items()}
    base = baseline if baseline is not None else next(iter(arms))
    if base not in arms:
        raise ConfigError(f"--baseline: no arm named {base!r} (arms: {', '.join(arms)})")
    comparisons = [
        compare_arms(arms[base], arm, kinds, seed=seed)
        for name, arm in arms.items()
        if name != base
    ]
    return CompareResult(base, arms, comparisons, seed)


def _kinds(outcomes: Iterable[Outcome]) -> list[str]:
    known = [k.value for k in LabelKind]
    extra = sorted({k for o in outcomes for k in o.labels} - set(known))
    return known + extra


def _arm(
    name: str, key: ArmKey, outcomes: list[Outcome], errored: dict[str, int], kinds: list[str]
) -> Arm:
    cells: dict[CellId, list[Outcome]] = {}
    for o in outcomes:
        cells.setdefault((o.steps, o.lookback, o.cell), []).append(o)
    return Arm(
        name=name,
        agent=key[0],
        mode=key[1],
        variant=key[2],
        outcomes=outcomes,
        errored=dict(sorted(errored.items())),
        overall=arm_stats(outcomes, kinds),
        cells={c: arm_stats(cells[c], kinds) for c in sorted(cells)},
        trials=trial_stats(outcomes),
    )


Pair = tuple[Outcome, Outcome]


def _difference(pairs: Sequence[Pair], measure: str, seed: int) -> Difference:
    """The paired difference of one rate over pairs (baseline, arm)."""
    n = len(pairs)
    base = sum(_value(b, measure) for b, _ in pairs)
    var = sum(_value(v, measure) for _, v in pairs)
    gained = sum(_value(v, measure) and not _value(b, measure) for b, v in pairs)
    lost = sum(_value(b, measure) and not _value(v, measure) for b, v in pairs)
    return Difference(
        measure=measure,
        n=n,
        baseline=base / n if n else 0.0,
        variant=var / n if n else 0.0,
        diff=(var - base) / n if n else 0.0,
        ci=bootstrap_ci(_unit_diffs(pairs, measure), seed=seed),
        gained=gained,
        lost=lost,
        p=mcnemar(lost, gained),
    )


def _unit_diffs(pairs: Sequence[Pair], measure: str) -> list[float]:
    """Per paired scenario: the arm's rate minus the baseline's, over its paired trials."""
    sums: dict[str, list[int]] = {}
    for b, v in pairs:
        row = sums.setdefault(b.scenario_id, [0, 0])
        row[0] += _value(v, measure) - _value(b, measure)
        row[1] += 1
    return [d / k for d, k in sums.values()]


def compare_arms(base: Arm, arm: Arm, kinds: Sequence[str], *, seed: int = 0) -> Comparison:
    """One arm against the baseline, on their paired episodes."""
    index = {(o.scenario_id, o.trial): o for o in base.outcomes}
    pairs = [
        (index[(o.scenario_id, o.trial)], o)
        for o in arm.outcomes
        if (o.scenario_id, o.trial) in index
    ]
    pairs = _first_trials(pairs) if _both_deterministic(base, arm) else pairs
    paired = len(pairs)
    unpaired = (
        len(base.outcomes)
        + len(arm.outcomes)
        - 2 * len({(b.scenario_id, b.trial) for b, _ in pairs})
    )
    overall = {m: _difference(pairs, m, seed) for m in MEASURES}
    by_cell: dict[CellId, list[Pair]] = {}
    for b, v in pairs:
        by_cell.setdefault((b.steps, b.lookback, b.cell), []).append((b, v))
    cells = {c: {m: _difference(by_cell[c], m, seed) for m in MEASURES} for c in sorted(by_cell)}
    raw = [_difference(pairs, k, seed) for k in kinds]
    adjusted = holm({d.measure: d.p for d in raw})
    labels = [
        Difference(
            d.measure,
            d.n,
            d.baseline,
            d.variant,
            d.diff,
            d.ci,
            d.gained,
            d.lost,
            d.p,
            adjusted[d.measure],
        )
        for d in raw
    ]
    units = _unit_diffs(pairs, "faithful")
    return Comparison(
        arm=arm.name,
        baseline=base.name,
        scenarios=len(units),
        pairs=paired,
        unpaired=max(0, unpaired),
        overall=overall,
        cells=cells,
        labels=labels,
        mde=min_detectable_effect(units),
        mde_answer=min_detectable_effect(_unit_diffs(pairs, "first_answer")),
        verdict=verdict(overall["faithful"].diff, overall["faithful"].p),
    )


def _both_deterministic(a: Arm, b: Arm) -> bool:
    return bool(a.trials.deterministic) and bool(b.trials.deterministic)


def _first_trials(pairs: list[Pair]) -> list[Pair]:
    """Each scenario's first paired trial only (the others are copies of it)."""
    first: dict[str, Pair] = {}
    for b, v in pairs:
        if b.scenario_id not in first or b.trial < first[b.scenario_id][0].trial:
            first[b.scenario_id] = (b, v)
    return list(first.values())


def compare_files(
    paths: Sequence[Path], *, baseline: str | None = None, seed: int = 0
) -> tuple[CompareResult, list[str]]:
    """Compare the arms found in run files; also the files' warnings."""
    reports = [ReadReport() for _ in paths]
    result = compare_records(
        (rec for _, _, rec in latest_records(list(paths), reports)), baseline=baseline, seed=seed
    )
    return result, [w for r in reports for w in r.warnings]
