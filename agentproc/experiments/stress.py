"""Stress-test a workflow prompt: one agent, many presentations, one ranking.

The preset sweep runs the default presentation and every shipped variant (prompt
styles, renderings, tool-set perturbations, guard modes) on the same small suite,
or with ``grid`` every combination of one prompt style, one rendering and one
tool set. It ends in two findings:

- the **ranking**: every variant's paired difference in faithful accuracy from the
  default, most harmful first, McNemar p-values Holm-corrected across variants;
- the **breaking point** of each variant: the longest length (and, apart, the
  largest look-back) up to which faithful accuracy stays at or above a threshold
  at every grid value, with the Wilson interval there.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from agentproc.analysis.compare_result import CompareResult, Rate
from agentproc.analysis.stats import Verdict, holm, verdict
from agentproc.analysis.trials import Outcome
from agentproc.errors import ConfigError
from agentproc.workflow.variant import (
    DEFAULT_VARIANT,
    Variant,
    load_variant,
    shipped_variants,
    variant_from_json,
)

Axis = Literal["default", "prompt", "rendering", "tools", "guard", "mixed"]
"""What a variant changes: the prompt, how the steps are rendered, the tool set, the guard."""

_AXIS_OF_KNOB: dict[str, Axis] = {
    "prompt": "prompt",
    "rendering": "rendering",
    "names": "rendering",
    "order": "rendering",
    "tools": "tools",
    "distractors": "tools",
    "scramble_names": "tools",
    "descriptions": "tools",
    "faults": "tools",
    "guard": "guard",
}

GRID_AXES: tuple[Axis, ...] = ("prompt", "rendering", "tools")
"""The axes the full grid crosses (guard modes are swept one at a time)."""


def axis_of(variant: Variant) -> Axis:
    """The one axis a variant changes (``mixed`` for more than one)."""
    knobs = set(variant.spec()) - {"name", "description", "seed"}
    axes = {_AXIS_OF_KNOB.get(k, "mixed") for k in knobs}
    if not axes:
        return "default"
    return axes.pop() if len(axes) == 1 else "mixed"


def combine(parts: Sequence[Variant]) -> Variant:
    """One variant making every change of ``parts`` (they must change different knobs)."""
    spec: dict[str, Any] = {}
    for part in parts:
        for knob, value in part.spec().items():
            if knob in ("name", "description"):
                continue
            if knob in spec and spec[knob] != value:
                raise ConfigError(f"variants {', '.join(p.name for p in parts)} both set {knob}")
            spec[knob] = value
    names = [p.name for p in parts if not p.is_default]
    spec["name"] = "+".join(names) or DEFAULT_VARIANT.name
    return variant_from_json(spec, "combined variant")


def preset_variants(names: Sequence[str] | None = None, *, grid: bool = False) -> list[Variant]:
    """The variants a stress sweep runs, the default first.

    Args:
        names: Variant names or files (default: every shipped variant but slow tools,
            which change the wall time and nothing the agent sees).
        grid: Every combination of one variant per axis of :data:`GRID_AXES` (each
            axis also at its default) instead of one variant at a time.
    """
    if names:
        chosen = [load_variant(n) for n in names]
    else:
        # A slow tool changes the wall time, never what the agent sees: left out unless named.
        chosen = [load_variant(n) for n in shipped_variants()]
        chosen = [v for v in chosen if not v.faults.slow_seconds]
    chosen = [v for v in chosen if not v.is_default]
    if not grid:
        return [DEFAULT_VARIANT, *chosen]
    by_axis = {a: [DEFAULT_VARIANT, *(v for v in chosen if axis_of(v) == a)] for a in GRID_AXES}
    return [combine(parts) for parts in itertools.product(*by_axis.values())]


@dataclass(frozen=True, slots=True)
class Ranked:
    """One variant's effect on faithful accuracy against the default."""

    variant: str
    axis: Axis
    baseline: float
    faithful: float
    diff: float
    ci: tuple[float, float]
    p: float
    p_holm: float
    verdict: Verdict
    """From the Holm-adjusted p-value."""

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "variant": self.variant,
            "axis": self.axis,
            "baseline": round(self.baseline, 4),
            "faithful_accuracy": round(self.faithful, 4),
            "diff": round(self.diff, 4),
            "ci": [round(x, 4) for x in self.ci],
            "p": self.p,
            "p_holm": self.p_holm,
            "verdict": self.verdict,
        }


@dataclass(frozen=True, slots=True)
class Breaking:
    """How far along one knob faithful accuracy stays at or above the threshold."""

    knob: Literal["length", "lookback"]
    holds_to: int | None
    """The largest value up to which every grid value passes (``None``: not even the first)."""
    rate: Rate | None
    """Faithful accuracy at :attr:`holds_to`."""
    breaks_at: int | None
    """The first value that fails (``None``: none fails)."""

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "holds_to": self.holds_to,
            "faithful_accuracy": None if self.rate is None else self.rate.to_json(),
            "breaks_at": self.breaks_at,
        }


def breaking_point(
    outcomes: Sequence[Outcome], knob: Literal["length", "lookback"], threshold: float
) -> Breaking:
    """Walk the knob's values upwards while faithful accuracy stays >= ``threshold``."""
    groups: dict[int, list[Outcome]] = {}
    for o in outcomes:
        groups.setdefault(o.steps if knob == "length" else o.lookback, []).append(o)
    holds: int | None = None
    rate: Rate | None = None
    for value in sorted(groups):
        r = Rate(sum(o.faithful for o in groups[value]), len(groups[value]))
        if r.value < threshold:
            return Breaking(knob, holds, rate, value)
        holds, rate = value, r
    return Breaking(knob, holds, rate, None)


@dataclass(frozen=True, slots=True)
class StressResult:
    """The comparison of every variant with the default, ranked, and each breaking point."""

    compare: CompareResult
    ranking: list[Ranked]
    """Most harmful first."""
    breaking: dict[str, tuple[Breaking, Breaking]]
    """Variant -> breaking point by length and by look-back."""
    threshold: float

    def to_json(self) -> dict[str, Any]:
        """The JSON form (``agentproc stress --json``)."""
        return {
            "threshold": self.threshold,
            "ranking": [r.to_json() for r in self.ranking],
            "breaking_points": [
                {"variant": name, "length": bl.to_json(), "lookback": bk.to_json()}
                for name, (bl, bk) in self.breaking.items()
            ],
            "compare": self.compare.to_json(),
        }


def stress_result(
    result: CompareResult, variants: Sequence[Variant], threshold: float
) -> StressResult:
    """Rank the variants of a comparison against the default and find their breaking points."""
    axes = {v.name: axis_of(v) for v in variants}
    adjusted = holm({c.arm: c.overall["faithful"].p for c in result.comparisons})
    ranking = []
    for c in result.comparisons:
        f = c.overall["faithful"]
        ranking.append(
            Ranked(
                c.arm,
                axes.get(c.arm, "mixed"),
                f.baseline,
                f.variant,
                f.diff,
                f.ci,
                f.p,
                adjusted[c.arm],
                verdict(f.diff, adjusted[c.arm]),
            )
        )
    ranking.sort(key=lambda r: (r.diff, r.p, r.variant))
    breaking = {
        name: (
            breaking_point(arm.outcomes, "length", threshold),
            breaking_point(arm.outcomes, "lookback", threshold),
        )
        for name, arm in result.arms.items()
    }
    return StressResult(result, ranking, breaking, threshold)
