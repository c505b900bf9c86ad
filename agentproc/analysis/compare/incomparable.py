"""Comparisons that say nothing, refused: an arm whose every episode errored, or two
arms that share no scenario (runs over different suites).

Either would print a verdict over 0 scenarios beside an arm table of real rates; the
command line calls :func:`incomparable` before it renders a comparison.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agentproc.analysis.compare.result import CompareResult

Why = Literal["errored", "disjoint"]


@dataclass(frozen=True)
class Incomparable:
    """Why a comparison is refused, in one line."""

    why: Why
    """``errored``: an arm has no scored episode; ``disjoint``: two arms pair no episode."""
    message: str


def incomparable(result: CompareResult) -> Incomparable | None:
    """Why ``result`` compares nothing, or ``None`` when every arm has scored episodes
    and pairs some with the baseline."""
    for arm in result.arms.values():
        if not arm.outcomes:
            errors = ", ".join(f"{k} {n}" for k, n in arm.errored.items()) or "none"
            return Incomparable(
                "errored",
                f"arm {arm.name!r} has no scored episode (every one errored: {errors}): "
                "nothing to compare; --resume runs them again",
            )
    for c in result.comparisons:
        if c.pairs == 0:
            return Incomparable(
                "disjoint",
                f"arms {c.baseline!r} and {c.arm!r} share no scenario (runs over different "
                "suites?): nothing to compare",
            )
    return None


def lost_to_errors(result: CompareResult) -> list[str]:
    """One line per comparison that lost pairs to errors: its design is not the one it was
    run for (empty: none lost any)."""
    return [
        f"{c.arm} vs {c.baseline}: {c.lost_to_errors} of {c.pairs + c.lost_to_errors} pairs "
        "lost to errors (an infrastructure failure of either arm), so the comparison is "
        f"over {c.pairs}; run the errored episodes again (--resume)"
        for c in result.comparisons
        if c.lost_to_errors
    ]
