"""What a paired comparison finds (:mod:`agentproc.analysis.compare.arms` computes it): each
arm's rates with their Wilson intervals, each paired difference with its test and the
interval of the same method, the verdict, and their JSON forms (``agentproc compare --json``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from agentproc.analysis.compare.horizon_diff import HorizonDifference
from agentproc.analysis.measures.horizon import Horizon
from agentproc.analysis.measures.trials import Outcome, TrialStats, by_scenario
from agentproc.analysis.render.formats import p_text, pct, round4
from agentproc.analysis.stats.binomial import Rate, design_effect
from agentproc.analysis.stats.exact import ALPHA, Verdict
from agentproc.analysis.stats.paired import MIN_SCENARIOS, Method

ARM_MEASURES: tuple[str, ...] = ("first_answer", "faithful", "unfaithful_correct")
"""The episode-level rates compared: first-answer accuracy, faithful accuracy and the
unfaithful-correct rate (a label's rate is compared the same way)."""
TITLES = {
    "first_answer": "first-answer accuracy",
    "faithful": "faithful accuracy",
    "unfaithful_correct": "unfaithful-correct rate",
}
"""How each compared measure is named in tables and text."""

CellId = tuple[int, int, str]
"""A grid cell: steps, look-back, cell id."""


def has_measure(o: Outcome, measure: str) -> bool:
    """Whether an episode counts for one of :data:`ARM_MEASURES` or, by its kind, a label."""
    return measure_of(measure)(o)


_MEASURED: dict[str, Callable[[Outcome], bool]] = {
    "first_answer": attrgetter("answer"),
    "faithful": attrgetter("faithful"),
    "unfaithful_correct": attrgetter("unfaithful_correct"),
}


def measure_of(measure: str) -> Callable[[Outcome], bool]:
    """:func:`has_measure` of one measure, as a function of the episode (looked up once for
    a pass over many episodes)."""
    found = _MEASURED.get(measure)
    return found if found is not None else lambda o: measure in o.labels


@dataclass(frozen=True, slots=True)
class ArmStats:
    """One arm's rates over a group of episodes."""

    n: int
    rates: dict[str, Rate]
    """Each of :data:`ARM_MEASURES`, then every label kind."""

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        return {"n": self.n, **{name: r.to_json() for name, r in self.rates.items()}}


def clustered_rate(groups: Sequence[Sequence[Outcome]], measure: str) -> Rate:
    """One rate over outcomes grouped by scenario
    (:func:`~agentproc.analysis.measures.trials.by_scenario`), its interval with the design
    effect of the scenarios' trials (episodes of one scenario are not independent)."""
    has = measure_of(measure)
    return _from_clusters([(sum(map(has, g)), len(g)) for g in groups])


def _from_clusters(clusters: list[tuple[int, int]]) -> Rate:
    """A rate from each scenario's ``(successes, trials)``: with trials, its interval
    carries their design effect and the number of scenarios."""
    k, n = sum(y for y, _ in clusters), sum(m for _, m in clusters)
    if n <= len(clusters):
        return Rate(k, n)
    return Rate(k, n, design_effect(clusters), len(clusters))


def measures_of(o: Outcome) -> frozenset[str]:
    """Every measure an episode counts for: those of :data:`ARM_MEASURES` it has, and the kind
    of each of its labels (what :func:`has_measure` is true of)."""
    named = _NAMED[o.answer, o.faithful, o.unfaithful_correct]
    return o.labels | named if named else o.labels


_NAMED = {
    (a, f, u): frozenset(m for m, on in zip(ARM_MEASURES, (a, f, u), strict=True) if on)
    for a in (False, True)
    for f in (False, True)
    for u in (False, True)
}
"""The measures of :data:`ARM_MEASURES` an episode counts for, by its three flags."""


def arm_stats(outcomes: Sequence[Outcome], kinds: Sequence[str]) -> ArmStats:
    """The rates of a group of outcomes (each the :func:`clustered_rate` of its measure),
    counted in one pass over the outcomes."""
    groups = list(by_scenario(outcomes).values())
    counts = [Counter(m for o in g for m in measures_of(o)) for g in groups]
    rates = {}
    for m in [*ARM_MEASURES, *kinds]:
        rates[m] = _from_clusters([(c[m], len(g)) for c, g in zip(counts, groups, strict=True)])
    return ArmStats(len(outcomes), rates)


@dataclass(frozen=True, slots=True)
class Difference:
    """A paired difference of one rate: the arm minus the baseline, on paired episodes."""

    measure: str
    n: int
    """Paired episodes."""
    baseline: float
    variant: float
    diff: float
    """Mean over paired scenarios of the arm's rate minus the baseline's."""
    ci: tuple[float, float] | None
    """95% interval of ``diff`` by the test's own method (``None``: too few scenarios)."""
    gained: int
    """Pairs where only the arm has it (an answer right, or a label present)."""
    lost: int
    """Pairs where only the baseline has it."""
    p: float
    """p-value of :attr:`method`."""
    p_holm: float | None = None
    """Holm-adjusted p-value (labels across label kinds, cells across cells)."""
    method: Method = "exact McNemar"
    """Exact McNemar (one trial per scenario) or the sign-flip permutation test (several)."""
    scenarios: int = 0
    """Paired scenarios (the test's units)."""
    min_p: float = 1.0
    """The smallest p-value this design could give."""
    family: bool = True
    """Whether it could reject at all, so counts in its Holm family (Tarone's rule)."""

    @property
    def significant(self) -> bool:
        """Whether the (adjusted, if any) p-value is below :data:`ALPHA`."""
        return (self.p if self.p_holm is None else self.p_holm) < ALPHA

    @property
    def too_few(self) -> bool:
        """Fewer than :data:`~agentproc.analysis.stats.paired.MIN_SCENARIOS` paired scenarios."""
        return self.ci is None

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        out: dict[str, Any] = {
            "measure": self.measure,
            "n": self.n,
            "baseline": round4(self.baseline),
            "variant": round4(self.variant),
            "diff": round4(self.diff),
            "ci": None if self.ci is None else [round4(x) for x in self.ci],
            "gained": self.gained,
            "lost": self.lost,
            "p": self.p,
            "method": self.method,
            "scenarios": self.scenarios,
        }
        if self.p_holm is not None:
            out["p_holm"] = self.p_holm
            out["tested"] = self.family
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
    errored_keys: frozenset[tuple[str, int]] = frozenset()
    """The scenario and trial of each episode an infrastructure failure ended (and no later
    record scored): the pairs it would have made are lost to errors, not unpaired."""
    horizon: Horizon | None = None
    """The 50% faithful procedure horizon over the arm's scenarios (``None``: not fitted)."""

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
            **({} if self.horizon is None else {"horizon": self.horizon.to_json()}),
        }


def _cell_json(cell: CellId, body: dict[str, Any]) -> dict[str, Any]:
    return {"cell": cell[2], "steps": cell[0], "lookback": cell[1], **body}


@dataclass(frozen=True, slots=True)
class Comparison:
    """One arm against the baseline, on the scenarios both ran."""

    arm: str
    baseline: str
    scenarios: int
    """Paired scenarios (the paired tests' units)."""
    pairs: int
    """Paired episodes (scenario and trial)."""
    unpaired: int
    """Episodes of either arm whose partner was never run (left out)."""
    overall: dict[str, Difference]
    """Each of :data:`ARM_MEASURES`."""
    cells: dict[CellId, dict[str, Difference]]
    labels: list[Difference]
    """Every label kind, Holm-corrected across the kinds that can reject (Tarone)."""
    mde: float
    """Minimum detectable effect on faithful accuracy for this design (scenarios, trials)."""
    mde_answer: float
    """The same on first-answer accuracy."""
    verdict: Verdict
    """On faithful accuracy (Holm-corrected across arms when there are several)."""
    verdict_ci: tuple[float, float] | None = None
    """The faithful difference's interval at :attr:`level`: it excludes 0 exactly when the
    verdict is better or worse."""
    level: float = 1 - ALPHA
    """The level of :attr:`verdict_ci` (below 95% of error rate when Holm corrects across
    arms: the level Holm tested this arm at)."""
    p_holm: float | None = None
    """The faithful p-value Holm-adjusted across arms (``None``: one comparison)."""
    balanced: bool = True
    """Every paired scenario has as many paired trials (then a mean over scenarios is also
    the share of episodes)."""
    lost_to_errors: int = 0
    """Pairs both arms ran that an infrastructure failure of either ended, so they count
    in no figure (counted as :attr:`pairs` are: by scenario when both arms are
    deterministic); more than none changes the design the comparison was run for."""
    horizon: HorizonDifference | None = None
    """The paired difference of the 50% faithful horizons (``None``: not fitted)."""

    def line(self) -> str:
        """The one-line verdict, naming the method its interval and p-value come from."""
        f, a = self.overall["faithful"], self.overall["first_answer"]
        design = f"{self.scenarios} scenarios" + (
            f" x {self.pairs / self.scenarios:.3g} trials" if self.pairs > self.scenarios else ""
        )
        head = verdict_head(self.arm, self.verdict, self.baseline)
        if self.verdict == "no detectable difference":
            head += f" at {design}"
        if f.too_few:
            head = (
                f"{self.arm}: too few scenarios to compare with {self.baseline} "
                f"({self.scenarios} paired, at least {MIN_SCENARIOS} needed)"
            )
        moved = [
            f"{d.measure} {'rose' if d.diff > 0 else 'fell'}" for d in self.labels if d.significant
        ]
        ci = self.verdict_ci
        interval = "" if ci is None else f" [{signed(ci[0])}, {signed(ci[1])}]"
        if ci is not None and self.p_holm is not None:
            interval += f" at {self.level * 100:.3g}%"
        holm = "" if self.p_holm is None else f", Holm across arms {p_text(self.p_holm)}"
        means = "" if self.balanced else " (means over scenarios: unequal trials)"
        return (
            f"{head}: faithful accuracy {pct(f.baseline)} -> {pct(f.variant)}{means} "
            f"({signed(f.diff)}{interval}, {f.method} p = {p_text(f.p)}{holm}); "
            f"first-answer accuracy {signed(a.diff)} (p = {p_text(a.p)})"
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
            "lost_to_errors": self.lost_to_errors,
            "overall": {m: d.to_json() for m, d in self.overall.items()},
            "cells": [
                _cell_json(c, {m: d.to_json() for m, d in ds.items()})
                for c, ds in self.cells.items()
            ],
            "labels": [d.to_json() for d in self.labels],
            "min_detectable_effect": round4(self.mde),
            "min_detectable_effect_answer": round4(self.mde_answer),
            "verdict": self.verdict,
            "method": self.overall["faithful"].method,
            "verdict_ci": None if self.verdict_ci is None else [round4(x) for x in self.verdict_ci],
            "verdict_level": round4(self.level),
            "p_holm": self.p_holm,
            "line": self.line(),
            **({} if self.horizon is None else {"horizon": self.horizon.to_json()}),
        }


_VERDICT_WORDS: dict[Verdict, str] = {
    "better": "better than",
    "worse": "worse than",
    "no detectable difference": "no detectable difference from",
}


def verdict_head(arm: str, verdict: Verdict, baseline: str) -> str:
    """``ARM: better than BASELINE`` (or worse than, or no detectable difference from)."""
    return f"{arm}: {_VERDICT_WORDS[verdict]} {baseline}"


def signed(x: float) -> str:
    """A difference of shares in points, signed: ``+4.2``."""
    return f"{x * 100:+.1f}"


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
