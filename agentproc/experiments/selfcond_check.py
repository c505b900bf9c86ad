"""Does the induced measure recover a known self-conditioning effect?

``agentproc selfcheck --selfcond`` runs :mod:`sim:selfcond
<agentproc.agents.sim.conditioning>` (slip chance ``base`` a step with a clean history,
``base + lift`` once it holds an error) on a grid of procedures under a clean pre-fill
and a wrong one, and reads its own error rate back
(:func:`~agentproc.analysis.measures.induced.own_error_rate`): the clean pre-fill's interval
must cover ``base``, the wrong pre-fill's ``base + lift``, and their difference's
interval ``lift``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentproc.agents.sim.conditioning import SELFCOND, self_conditioning
from agentproc.agents.sim.episode import run_sim_episode
from agentproc.analysis.measures.induced import own_error_rate
from agentproc.analysis.stats.binomial import Rate
from agentproc.analysis.stats.clustered import difference_interval
from agentproc.procedures import Cell, generate_procedure
from agentproc.workflow import scenario_of
from agentproc.workflow.variant import Variant, load_variant

CELLS = tuple(Cell(steps=n, lookback=lb) for n in (10, 25, 50) for lb in (1, 3))
"""The procedures of the check: three lengths at two look-backs."""
ARMS = ("prefill-clean", "prefill-wrong-50")
"""The shipped variants it runs: a clean pre-fill and one with half its calls wrong."""


@dataclass(frozen=True, slots=True)
class SelfCondCheck:
    """What the check read back, against the agent's parameters."""

    base: float
    lift: float
    clean: Rate
    """The own error rate under the clean pre-fill (truth: ``base``)."""
    wrong: Rate
    """The own error rate under the wrong pre-fill (truth: ``base + lift``)."""
    episodes: int

    @property
    def lift_ci(self) -> tuple[float, float]:
        """The interval of the difference (truth: ``lift``)."""
        return difference_interval(self.wrong, self.clean)

    @property
    def recovered(self) -> bool:
        """Whether each interval covers its truth."""
        lo, hi = self.lift_ci
        return (
            _covers(self.clean, self.base)
            and _covers(self.wrong, self.base + self.lift)
            and lo <= self.lift <= hi
        )

    def to_json(self) -> dict[str, Any]:
        """The JSON form (``selfcheck --selfcond --json``)."""
        lo, hi = self.lift_ci
        return {
            "episodes": self.episodes,
            "recovered": self.recovered,
            "base": {"truth": self.base, **self.clean.to_json()},
            "base_plus_lift": {"truth": round(self.base + self.lift, 6), **self.wrong.to_json()},
            "lift": {
                "truth": self.lift,
                "value": round(self.wrong.value - self.clean.value, 4),
                "ci": [round(lo, 4), round(hi, 4)],
            },
        }


def _covers(rate: Rate, truth: float) -> bool:
    lo, hi = rate.ci
    return lo <= truth <= hi


def run_selfcond_check(
    count: int = 50,
    seed: int = 0,
    base: float = SELFCOND["base"],
    lift: float = SELFCOND["lift"],
    on_episode: Callable[[], None] | None = None,
    arms: tuple[Variant, Variant] | None = None,
) -> SelfCondCheck:
    """Run the self-conditioning agent on ``count`` procedures of every cell under a clean
    and a wrong pre-fill (``arms``, default :data:`ARMS`) and read its rates back."""
    factory = self_conditioning(base, lift)
    clean, wrong = arms or (load_variant(ARMS[0]), load_variant(ARMS[1]))
    records: dict[str, list[dict[str, Any]]] = {clean.name: [], wrong.name: []}
    for cell in CELLS:
        for index in range(count):
            scenario = scenario_of(generate_procedure(cell, seed, index))
            for variant in (clean, wrong):
                ep = run_sim_episode(
                    scenario, "sim:selfcond", seed=seed, variant=variant, factory=factory
                )
                records[variant.name].append({"scenario_id": scenario.id, "metrics": ep.metrics})
                if on_episode is not None:
                    on_episode()
    return SelfCondCheck(
        base,
        lift,
        own_error_rate(records[clean.name]),
        own_error_rate(records[wrong.name]),
        sum(map(len, records.values())),
    )
