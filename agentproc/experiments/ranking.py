"""Rank a stress sweep's variants by faithful and first-answer accuracy, flagging a collapse.

Faithful accuracy alone hides a variant that wrecks the answers of an agent that was
never faithful: at 0% faithful in both arms the faithful difference is 0 whatever the
answers do. So each variant is judged on both measures, with the paired tests the
comparison already ran (:mod:`agentproc.analysis.stats.paired`), Holm-corrected as one
family of two hypotheses per variant. Each measure's interval is recomputed by the
same method at the level Holm tested it at
(:func:`~agentproc.analysis.stats.multiplicity.holm_levels`), so an interval excludes 0
exactly when its verdict is better or worse.

A variant is **flagged** on every measure it significantly lowers; its overall verdict is
``worse`` when one is flagged, ``better`` when one rises and none falls.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from agentproc.analysis.compare.arms import paired_episodes
from agentproc.analysis.compare.rate_diff import paired_test
from agentproc.analysis.compare.result import TITLES, CompareResult, signed, verdict_head
from agentproc.analysis.render.formats import p_text
from agentproc.analysis.stats.exact import Verdict, verdict
from agentproc.analysis.stats.multiplicity import holm, holm_levels
from agentproc.analysis.stats.paired import Method

Measure = Literal["first_answer", "faithful"]
"""A measure the ranking judges a variant on."""

RANKED: tuple[Measure, ...] = ("faithful", "first_answer")
"""The measures of the ranking, in the order they are shown."""


@dataclass(frozen=True, slots=True)
class Effect:
    """A variant's paired difference on one measure, Holm-corrected across the ranking."""

    measure: Measure
    baseline: float
    variant: float
    diff: float
    ci: tuple[float, float] | None
    """Interval at :attr:`level`, by the test's own method (``None``: too few scenarios)."""
    level: float
    """The level Holm tested this hypothesis at: the interval excludes 0 exactly when
    :attr:`verdict` is better or worse."""
    p: float
    p_holm: float
    """Holm-adjusted across both measures of every variant."""
    verdict: Verdict
    method: Method

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "baseline": round(self.baseline, 4),
            "variant": round(self.variant, 4),
            "diff": round(self.diff, 4),
            "ci": None if self.ci is None else [round(x, 4) for x in self.ci],
            "level": round(self.level, 4),
            "p": self.p,
            "p_holm": self.p_holm,
            "verdict": self.verdict,
            "method": self.method,
        }


@dataclass(frozen=True, slots=True)
class Ranked:
    """One variant's effect on faithful and first-answer accuracy against the default."""

    variant: str
    axis: str
    effects: Mapping[Measure, Effect]

    @property
    def faithful(self) -> Effect:
        """The effect on faithful accuracy."""
        return self.effects["faithful"]

    @property
    def first_answer(self) -> Effect:
        """The effect on first-answer accuracy."""
        return self.effects["first_answer"]

    @property
    def flagged(self) -> list[Measure]:
        """The measures this variant significantly lowers (a collapse)."""
        return [m for m in RANKED if self.effects[m].verdict == "worse"]

    @property
    def verdict(self) -> Verdict:
        """``worse`` if a measure falls, else ``better`` if one rises, else no difference."""
        verdicts = {e.verdict for e in self.effects.values()}
        for v in ("worse", "better"):
            if v in verdicts:
                return v  # type: ignore[return-value]
        return "no detectable difference"

    def harm(self) -> tuple[float, float, str]:
        """The sort key, most harmful first: the larger fall of the two, then the smaller
        adjusted p-value, then the name."""
        return (
            min(e.diff for e in self.effects.values()),
            min(e.p_holm for e in self.effects.values()),
            self.variant,
        )

    def line(self, baseline: str) -> str:
        """The one-line verdict on both measures."""
        head = verdict_head(self.variant, self.verdict, baseline)
        flag = (
            f" (collapse in {', '.join(TITLES[m] for m in self.flagged)})" if self.flagged else ""
        )
        parts = [_effect_text(self.effects[m]) for m in RANKED]
        return f"{head}{flag}: {'; '.join(parts)}"

    def to_json(self) -> dict[str, Any]:
        """The JSON form (the top-level figures are faithful accuracy's, as before)."""
        effects: dict[str, Any] = {m: self.effects[m].to_json() for m in RANKED}
        f = effects["faithful"]
        return {
            "variant": self.variant,
            "axis": self.axis,
            "baseline": f["baseline"],
            "faithful_accuracy": f["variant"],
            **{k: f[k] for k in ("diff", "ci", "p", "p_holm")},
            "verdict": self.verdict,
            "method": f["method"],
            "flagged": list(self.flagged),
            **effects,
        }


def _effect_text(e: Effect) -> str:
    interval = "" if e.ci is None else f" [{signed(e.ci[0])}, {signed(e.ci[1])}]"
    return (
        f"{TITLES[e.measure]} {e.baseline * 100:.1f}% -> {e.variant * 100:.1f}% "
        f"({signed(e.diff)}{interval} at {e.level * 100:.3g}%, {e.method} p = {p_text(e.p)}, "
        f"Holm {p_text(e.p_holm)}: {e.verdict})"
    )


def rank_variants(result: CompareResult, axes: Mapping[str, str]) -> list[Ranked]:
    """Every compared variant judged on both measures, most harmful first (``axes``:
    variant -> the axis it changes)."""
    raw = {(c.arm, m): c.overall[m].p for c in result.comparisons for m in RANKED}
    adjusted, levels = holm(raw), holm_levels(raw)
    ranking = []
    for c in result.comparisons:
        pairs = paired_episodes(result.arms[c.baseline], result.arms[c.arm])
        effects: dict[Measure, Effect] = {}
        for m in RANKED:
            d, key = c.overall[m], (c.arm, m)
            test = paired_test(pairs, m, levels[key])
            effects[m] = Effect(
                m,
                d.baseline,
                d.variant,
                d.diff,
                test.ci,
                1 - levels[key],
                d.p,
                adjusted[key],
                verdict(d.diff, adjusted[key]),
                d.method,
            )
        ranking.append(Ranked(c.arm, axes.get(c.arm, "mixed"), effects))
    return sorted(ranking, key=Ranked.harm)
