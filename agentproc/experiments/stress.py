"""Stress-test a workflow prompt: one agent, many presentations, one ranking.

The preset sweep runs the default presentation and every shipped variant (prompt
styles, renderings, tool-set perturbations, guard modes) on the same small suite,
or with ``grid`` every combination of one prompt style, one rendering and one
tool set. It ends in two findings:

- the **ranking**: every variant's paired differences in faithful and first-answer
  accuracy from the default, most harmful first, flagged where either collapses
  (:mod:`agentproc.experiments.ranking`: Holm-corrected across both measures of every
  variant, each interval at the level Holm tested it at, so intervals and verdicts agree);
- the **breaking point** of each variant, by confidence and per value of the other
  knob: along the lengths at each look-back (and apart along the look-backs at each
  length), a value *holds* while the lower bound of faithful accuracy's 95% interval
  is at or above the threshold, and the knob *breaks* at the first value whose upper
  bound is below it; in between nothing is claimed. A difference between two
  variants' breaking points is not claimed here: the paired per-cell differences of
  ``compare`` carry their own intervals.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from agentproc.analysis.compare.result import CompareResult, Rate, clustered_rate
from agentproc.analysis.measures.trials import Outcome, by_scenario
from agentproc.errors import ConfigError
from agentproc.experiments.ranking import Ranked, rank_variants
from agentproc.workflow.variant import (
    DEFAULT_VARIANT,
    Variant,
    load_variant,
    shipped_variants,
    variant_from_json,
)

Axis = Literal["default", "prompt", "rendering", "tools", "guard", "prefill", "mixed"]
"""What a variant changes: the prompt, how the steps are rendered, the tool set, the guard,
the pre-filled steps."""

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
    "prefill": "prefill",
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
        # A slow tool changes the wall time, never what the agent sees, and a pre-fill
        # changes what is measured (the agent's own part): left out unless named.
        chosen = [load_variant(n) for n in shipped_variants()]
        chosen = [v for v in chosen if not v.faults.slow_seconds and v.prefill is None]
    chosen = [v for v in chosen if not v.is_default]
    if not grid:
        return [DEFAULT_VARIANT, *chosen]
    mixed = [v.name for v in chosen if v.prefill is not None]
    if mixed:  # share_grid takes pre-fill variants alone; the grid crosses no pre-fill
        raise ConfigError(
            f"--grid and --variants {','.join(names or [])}: pre-fill variants "
            f"({', '.join(mixed)}) make the grid over their wrong share alone; name only "
            "them, or drop them from this grid"
        )
    if names and len({axis_of(v) for v in chosen} & set(GRID_AXES)) < 2:  # the plain sweep
        raise ConfigError(
            f"--grid and --variants {','.join(names)}: the grid crosses variants of two axes "
            f"or more ({', '.join(GRID_AXES)}); these lie on one (drop --grid or name more)"
        )
    by_axis = {a: [DEFAULT_VARIANT, *(v for v in chosen if axis_of(v) == a)] for a in GRID_AXES}
    return [combine(parts) for parts in itertools.product(*by_axis.values())]


def share_grid(names: Sequence[str] | None) -> list[Variant] | None:
    """The variants of ``--grid`` over the share of wrong pre-filled steps: ``names`` when
    every one has a ``[prefill]`` (``None``: not that grid)."""
    if not names:
        return None
    chosen = [load_variant(n) for n in names]
    return chosen if all(v.prefill is not None for v in chosen) else None


@dataclass(frozen=True, slots=True)
class Walk:
    """One walk along a knob, the other knob held at one value."""

    at: int
    """The other knob's value (the look-back of a walk along lengths, and vice versa)."""
    holds_to: int | None
    """The largest value up to which every value's interval lies at or above the
    threshold (``None``: not even the first)."""
    rate: Rate | None
    """Faithful accuracy at :attr:`holds_to`."""
    breaks_at: int | None
    """The first value whose interval lies below the threshold (``None``: none)."""

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        return {"at": self.at, **_held(self)}


@dataclass(frozen=True, slots=True)
class Breaking:
    """How far along one knob faithful accuracy stays at or above the threshold."""

    knob: Literal["length", "lookback"]
    holds_to: int | None
    """The largest value that holds at every value of the other knob (``None``: the
    first value does not hold at some)."""
    rate: Rate | None
    """Faithful accuracy at :attr:`holds_to`, where it is least sure to hold."""
    breaks_at: int | None
    """The first value that breaks at some value of the other knob (``None``: none)."""
    walks: tuple[Walk, ...] = ()
    """One walk per value of the other knob."""

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        return {**_held(self), "per": [w.to_json() for w in self.walks]}


def _held(x: Walk | Breaking) -> dict[str, Any]:
    """Where a walk, or a knob, holds and breaks (the JSON fields both have)."""
    return {
        "holds_to": x.holds_to,
        "faithful_accuracy": None if x.rate is None else x.rate.to_json(),
        "breaks_at": x.breaks_at,
    }


def _walk(at: int, groups: dict[int, list[Outcome]], threshold: float) -> Walk:
    holds: int | None = None
    rate: Rate | None = None
    holding = True
    for value in sorted(groups):
        r = clustered_rate(list(by_scenario(groups[value]).values()), "faithful")
        lo, hi = r.ci
        if hi < threshold:
            return Walk(at, holds, rate, value)
        if holding and lo >= threshold:
            holds, rate = value, r
        else:
            holding = False
    return Walk(at, holds, rate, None)


def breaking_point(
    outcomes: Sequence[Outcome], knob: Literal["length", "lookback"], threshold: float
) -> Breaking:
    """Walk the knob's values upwards at each value of the other knob: a value holds while
    faithful accuracy's 95% interval lies at or above ``threshold``; the knob breaks at the
    first value whose interval lies below it."""
    per: dict[int, dict[int, list[Outcome]]] = {}
    for o in outcomes:
        value, other = (o.steps, o.lookback) if knob == "length" else (o.lookback, o.steps)
        per.setdefault(other, {}).setdefault(value, []).append(o)
    walks = tuple(_walk(at, per[at], threshold) for at in sorted(per))
    if not walks:
        return Breaking(knob, None, None, None)
    holds = [w.holds_to for w in walks]
    binding = None if None in holds else min(walks, key=lambda w: (w.holds_to, w.at))
    breaks = [w.breaks_at for w in walks if w.breaks_at is not None]
    return Breaking(
        knob,
        None if binding is None else binding.holds_to,
        None if binding is None else binding.rate,
        min(breaks) if breaks else None,
        walks,
    )


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
            "compare": self._compare_json(),
        }

    def _compare_json(self) -> dict[str, Any]:
        """The comparison's JSON with one verdict per variant: the ranking's (Holm across
        both measures of every variant), not compare's own (across arms, faithful only)."""
        data = self.compare.to_json()
        ranked = {r.variant: r for r in self.ranking}
        for c in data["comparisons"]:
            r = ranked.get(c["arm"])
            if r is None:
                continue
            f = r.faithful
            c.update(
                verdict=r.verdict,
                verdict_ci=None if f.ci is None else [round(x, 4) for x in f.ci],
                verdict_level=round(f.level, 4),
                p_holm=f.p_holm,
                line=r.line(c["baseline"]),
            )
        return data


def stress_result(
    result: CompareResult, variants: Sequence[Variant], threshold: float
) -> StressResult:
    """Rank the variants of a comparison against the default and find their breaking points."""
    ranking = rank_variants(result, {v.name: axis_of(v) for v in variants})
    breaking = {
        name: (
            breaking_point(arm.outcomes, "length", threshold),
            breaking_point(arm.outcomes, "lookback", threshold),
        )
        for name, arm in result.arms.items()
    }
    return StressResult(result, ranking, breaking, threshold)
