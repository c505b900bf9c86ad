"""The ``min_horizon`` condition of ``agentproc check``: the run's 50% faithful procedure
horizon (:mod:`agentproc.analysis.measures.horizon`, as ``report`` gives it) is shown to be at
least ``STEPS`` long.

The condition decides on the lower bound of the horizon's 95% interval exactly as the
line prints it (three significant figures), never on the point alone, so that a run of
few scenarios cannot pass on luck:

- a lower bound of at least ``STEPS`` passes, one below it fails; a horizon beyond the
  longest length tested has the lower bound the data give (the longest length itself
  when every length holds above 50%), and a length past the longest tested is never
  claimed;
- a horizon below the shortest length tested fails, and so does an interval open below
  (its lower bound is below the shortest length);
- no horizon fails: success not shown to fall with length (nothing says where it falls
  to 50%), a run of one length, or no scored episode.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentproc.analysis.measures.horizon import Horizon, horizon
from agentproc.analysis.measures.trials import Outcome, faithful_rows
from agentproc.errors import ConfigError


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
    return held(horizon(faithful_rows(outcomes), 0.5), least)


def held(h: Horizon, least: float) -> tuple[bool, str]:
    """Whether the 50% faithful horizon ``h`` is shown to be at least ``least`` steps, and
    the line that says so: it decides on the lower bound as the line prints it."""
    wanted = f"--min-horizon {least:g}"
    if not h.fitted:
        return False, (
            f"faithful 50% horizon {h.text()}: two lengths or more give a horizon to hold "
            "to --min-horizon"
        )
    if not h.claimed:
        return False, (
            f"no faithful 50% horizon: {h.text()}, so nothing says where it falls to 50% "
            f"and no horizon is shown to be at least {wanted}"
        )
    said = f"faithful 50% horizon {h.text()}"
    if h.beyond is False:
        return False, f"{said}: below the shortest length tested, so below {wanted}"
    if h.low is None:
        return False, (
            f"{said}: its lower bound is below the shortest length tested ({h.shortest}), "
            f"so it is not shown to be at least {wanted}"
        )
    low = f"{h.low:.3g}"  # the bound as the line prints it, and the one decided on
    if float(low) >= least:
        return True, f"{said}: its lower bound {low} is at least {wanted}"
    if least > h.longest:
        return False, f"{said}: {wanted} is past the longest length tested ({h.longest})"
    return False, f"{said}: its lower bound {low} is below {wanted}"
