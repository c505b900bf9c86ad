"""How ``check`` names where episodes went wrong: a label or first divergence and its
step (``skipped_step at step 4``; on a declared workflow ``skipped_step at step 4
(late_penalty → late_days)``, :mod:`~agentproc.analysis.measures.step_names`), grouped over
scenarios, most frequent first, in one line.
"""

from __future__ import annotations

from collections.abc import Iterable

from agentproc.analysis.measures.step_names import NO_NAMES, StepNames, step_text

SHOWN = 5
"""Scenarios named per divergence in a failure line (the rest are counted)."""
GROUPS = 3
"""Kinds of divergence named per failure line (the rest are counted)."""

Place = tuple[str, str] | None
"""A divergence or a label: its kind and where (``step 4``, ``the answer``, or ``""``);
``None`` for an episode that never left the procedure."""


def scenario_list(ids: Iterable[str]) -> str:
    """The first :data:`SHOWN` scenario ids, sorted, and how many more."""
    ids = sorted(set(ids))
    shown = ", ".join(ids[:SHOWN])
    return shown + (f", and {len(ids) - SHOWN} more" if len(ids) > SHOWN else "")


def at(step: int | None, otherwise: str = "", names: StepNames = NO_NAMES) -> str:
    """Where a step is: ``step 4``, named on a declared workflow; ``otherwise`` for none."""
    return otherwise if step is None else step_text(step, names)


def place_text(place: Place) -> str:
    if place is None:
        return "no divergence (a wrong or missing answer)"
    label, where = place
    return f"{label} at {where}" if where else label


def grouped(places: Iterable[tuple[str, Place]], prefix: str = "") -> str:
    """``skipped_step at step 4 in 7 scenarios (a, b, ...)``, most frequent first."""
    groups: dict[Place, set[str]] = {}
    for sid, place in places:
        groups.setdefault(place, set()).add(sid)
    ranked = sorted(groups.items(), key=lambda kv: (-len(kv[1]), place_text(kv[0])))
    parts = [
        f"{prefix}{place_text(p)} in {len(ids)} scenario{'s' * (len(ids) != 1)} "
        f"({scenario_list(ids)})"
        for p, ids in ranked[:GROUPS]
    ]
    if len(ranked) > GROUPS:
        parts.append(f"{len(ranked) - GROUPS} other divergences")
    return "; ".join(parts)
