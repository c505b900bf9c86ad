"""What a paired comparison finds (:mod:`agentproc.analysis.compare` computes it): each
arm's rates with their Wilson intervals, each paired difference with its bootstrap interval
and McNemar test, the verdict, and their JSON forms (``agentproc compare --json``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agentproc.analysis.cell_stats import Rate
from agentproc.analysis.stats import ALPHA, Verdict
from agentproc.analysis.trials import Outcome, TrialStats

MEASURES: tuple[str, ...] = ("first_answer", "faithful", "unfaithful_correct")
"""The episode-level rates compared: first-answer accuracy, faithful accuracy and the
unfaithful-correct rate (a label's rate is compared the same way)."""

CellId = tuple[int, int, str]
"""A grid cell: steps, look-back, cell id."""


def has_measure(o: Outcome, measure: str) -> bool:
    """Whether an episode counts for one of :data:`MEASURES` or, by its kind, a label."""
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
    return ArmStats(n, {m: Rate(sum(has_measure(o, m) for o in outcomes), n) for m in names})


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
