"""The ``min_horizon`` condition of ``agentproc check``: the run's 50% faithful procedure
horizon (:mod:`agentproc.analysis.horizon`, as ``report`` gives it) is shown to be at
least ``STEPS`` long.

The condition reads the lower bound of the horizon's 95% interval, never the point
alone, so that a run of few scenarios cannot pass on luck:

- a lower bound of at least ``STEPS`` passes; a lower bound below it fails;
- a horizon below the shortest length tested fails (``below N``);
- a horizon beyond the longest length tested (``beyond N``) whose interval is open below
  (no fall of success with length is seen: every scenario, or nearly, passed) passes when
  ``N >= STEPS``, and fails otherwise: a length past the longest tested is never claimed;
- an interval open below around a horizon within the tested lengths fails (the fall of
  success with length is not told apart from none);
- a run of one length, or of no scored episode, has no horizon: it fails.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentproc.analysis.horizon import Horizon, horizon
from agentproc.analysis.trials import Outcome, by_scenario
from agentproc.errors import ConfigError


def faithful_rows(outcomes: Sequence[Outcome]) -> list[tuple[int, int, int]]:
    """Per scenario: its procedure's steps, its faithful episodes and its trials (the rows
    ``report`` fits its horizon on)."""
    return [
        (group[0].steps, sum(o.faithful for o in group), len(group))
        for group in by_scenario(outcomes).values()
    ]


def min_horizon(outcomes: Sequence[Outcome], least: float) -> tuple[bool, str]:
    """Whether the run's 50% faithful horizon is shown to be at least ``least`` steps, and
    the condition's line.

    Raises:
        ConfigError: ``least`` is not a number of steps above 0.
    """
    if not least > 0:
        raise ConfigError(f"--min-horizon is a number of steps above 0 (not {least:g})")
    if not outcomes:
        return False, "no scored episode: no horizon to hold to --min-horizon"
    h = horizon(faithful_rows(outcomes), 0.5)
    said = f"faithful 50% horizon {h.text()}"
    if not h.fitted:
        return False, f"{said}: two lengths or more give a horizon to hold to --min-horizon"
    passed, why = _verdict(h, least)
    return passed, f"{said}: {why}"


def _verdict(h: Horizon, least: float) -> tuple[bool, str]:
    wanted = f"--min-horizon {least:g}"
    if h.beyond is False:
        return False, f"below the shortest length tested, so below {wanted}"
    if h.low is not None:
        if h.low >= least:
            return True, f"its lower bound {h.low:.3g} is at least {wanted}"
        if least > h.longest:
            return False, f"{wanted} is past the longest length tested ({h.longest})"
        return False, f"its lower bound {h.low:.3g} is below {wanted}"
    if h.beyond is True:
        if h.longest >= least:
            return True, f"success holds above 50% through the longest length, at least {wanted}"
        return False, f"{wanted} is past the longest length tested ({h.longest})"
    return False, (
        f"its interval is open below (the fall of success with length is not told apart "
        f"from none), so it is not shown to be at least {wanted}"
    )
