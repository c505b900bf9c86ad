"""Prove the monitor against ground truth: single-fault episodes from every injector.

Each ``sim:<label>`` agent injects one fault at a seeded random place and knows
the labels it must cause (the fault itself and what it carries downstream). The
monitor's labels are compared with that truth by :meth:`Label.key`: kind, call,
step, cause, argument, self-correction and dependency flag must all agree. The
agents that make no mistake (:data:`~agentproc.agents.sim.faults.FAITHFUL`) run on
every scenario too, and must be faithful on every episode: no label, a right answer.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from agentproc.agents.sim.beliefs import placeable
from agentproc.agents.sim.episode import run_sim_episode
from agentproc.agents.sim.faults import BRANCH_INJECTORS, FAITHFUL, INJECTORS
from agentproc.errors import ConfigError
from agentproc.labelling import LabelKind
from agentproc.labelling.labels import BRANCH_ONLY, DEPENDENCY_ONLY, TEXT_ONLY
from agentproc.labelling.order import OrderPolicy
from agentproc.procedures import Cell, generate_procedure
from agentproc.runs import Episode
from agentproc.workflow import Scenario, build_workflow, scenario_of
from agentproc.workflow.declared.compile import check_applies
from agentproc.workflow.variant import Variant

CAUSES = ("propagated", "lookback_confusion", "stale_output", "other")
"""The ``wrong_argument`` causes a tool-mode episode can have; each is scored on its own."""


_TEXT_ONLY = frozenset(k.value for k in TEXT_ONLY)
"""Kinds no tool-mode injector can cause: they are scored, not required."""
_DEPENDENCY_ONLY = frozenset(k.value for k in DEPENDENCY_ONLY)
"""Kinds only the ``dependency`` order policy gives: under ``listed``, scored, not required."""

GRID: dict[str, tuple[Any, ...]] = {
    "steps": (1, 2, 3, 5, 10, 25, 50, 95),
    "lookback": (1, 2, 3, 5, 7),
    "range": ((0.0, 1.0), (1.0, 10.0), (10.0, 100.0)),
    "mode": ("decimal", "integer"),
}
"""The default self-check grid: 240 cells."""


@dataclass
class KindScore:
    """Agreement for one label kind."""

    truth: int = 0
    predicted: int = 0
    agreed: int = 0

    @property
    def precision(self) -> float:
        """Share of the monitor's labels that are in the truth (1.0 when it made none)."""
        return self.agreed / self.predicted if self.predicted else 1.0

    @property
    def recall(self) -> float:
        """Share of the truth the monitor found (1.0 when there was none)."""
        return self.agreed / self.truth if self.truth else 1.0

    def to_json(self) -> dict[str, Any]:
        """Machine-readable form: the counts, precision and recall."""
        return {**vars(self), "precision": self.precision, "recall": self.recall}


@dataclass
class FaithfulScore:
    """How often an agent that makes no mistake was labelled faithful."""

    episodes: int = 0
    faithful: int = 0

    def to_json(self) -> dict[str, int]:
        """Machine-readable form: the counts."""
        return dict(vars(self))


@dataclass
class SelfCheck:
    """The outcome of a self-check."""

    episodes: int = 0
    scores: dict[str, KindScore] = field(
        default_factory=lambda: {k.value: KindScore() for k in LabelKind if k not in BRANCH_ONLY}
    )
    causes: dict[str, KindScore] = field(default_factory=lambda: {c: KindScore() for c in CAUSES})
    """``wrong_argument`` agreement per cause."""
    faithful: dict[str, FaithfulScore] = field(
        default_factory=lambda: {a: FaithfulScore() for a in FAITHFUL}
    )
    """Each agent that makes no mistake: its episodes (not among :attr:`episodes`), and
    how many of them were labelled faithful."""
    mismatches: list[str] = field(default_factory=list)
    order: OrderPolicy = "listed"
    """The order policy the monitor held the calls to."""
    passed_over: int = 0
    """Calculator mode: procedures passed over because a fault could not be placed where
    it reads one way by values (every step has a twin computing the same operation on
    the same values)."""
    branched: bool = False
    """Whether a branched workflow's instance was checked (its kinds and causes are then
    scored and required)."""

    def branch(self) -> None:
        """Score what only a branched workflow gives from now on."""
        if not self.branched:
            self.branched = True
            self.scores.update({k.value: KindScore() for k in BRANCH_ONLY})

    @property
    def perfect(self) -> bool:
        """True when every label kind a tool call can have under the order policy
        occurred, every kind and every ``wrong_argument`` cause has precision and recall
        1.0, and every episode of an agent that makes no mistake was faithful."""
        optional = _TEXT_ONLY if self.order == "dependency" else _TEXT_ONLY | _DEPENDENCY_ONLY
        kinds = all(s.truth > 0 for k, s in self.scores.items() if k not in optional)
        scores = (*self.scores.values(), *self.causes.values())
        faithful = all(f.faithful == f.episodes for f in self.faithful.values())
        return kinds and faithful and all(s.precision == 1.0 and s.recall == 1.0 for s in scores)

    def to_json(self) -> dict[str, Any]:
        """Machine-readable form."""
        return {
            "episodes": self.episodes,
            "perfect": self.perfect,
            "labels": {k: s.to_json() for k, s in self.scores.items()},
            "causes": {c: s.to_json() for c, s in self.causes.items()},
            "faithful": {a: f.to_json() for a, f in self.faithful.items()},
            "mismatches": self.mismatches[:20],
            **({"passed_over": self.passed_over} if self.passed_over else {}),
        }


def cells(grid: dict[str, tuple[Any, ...]] = GRID) -> list[Cell]:
    """The cells of a self-check grid (mixed operations)."""
    axes = grid["steps"], grid["lookback"], grid["range"], grid["mode"]
    return [Cell(steps=n, lookback=lb, range=r, mode=m) for n, lb, r, m in itertools.product(*axes)]


def run_selfcheck(
    count: int = 5,
    seed: int = 0,
    grid: dict[str, tuple[Any, ...]] = GRID,
    on_episode: Callable[[], None] | None = None,
    *,
    variant: Variant | None = None,
    order: OrderPolicy = "listed",
) -> SelfCheck:
    """Run every injector on ``count`` procedures of every cell and score the monitor
    (under ``variant``: the calculator variant proves the calculator aligner; under the
    ``order`` policy, the truth of a swap that breaks no dependency is no label).

    Raises:
        ConfigError: a variant whose guard refuses calls (the injected truth assumes none is).
    """
    _check_guard(variant)
    result = SelfCheck(order=order)
    for cell in cells(grid):
        for index in range(count):
            scenario = _readable(cell, seed, index, variant, result)
            if scenario is not None:
                _check_scenario(result, scenario, seed, variant, on_episode)
    return result


def run_selfcheck_on(
    scenarios: Iterable[Scenario],
    seed: int = 0,
    on_episode: Callable[[], None] | None = None,
    *,
    variant: Variant | None = None,
    order: OrderPolicy = "listed",
) -> SelfCheck:
    """:func:`run_selfcheck` on given scenarios (a suite's: a declared workflow's
    instances, or procedures); in calculator mode a scenario where some fault cannot be
    placed to read one way by values is passed over (and counted).

    Raises:
        ConfigError: a variant whose guard refuses calls, or one that cannot present the
            scenarios (a declared workflow under the calculator, say).
    """
    _check_guard(variant)
    result = SelfCheck(order=order)
    calculator = variant is not None and variant.tools == "calculator"
    for scenario in scenarios:
        check_applies(scenario, "tools", variant)
        if calculator and not placeable(build_workflow(scenario)):
            result.passed_over += 1
            continue
        _check_scenario(result, scenario, seed, variant, on_episode)
    return result


def _check_guard(variant: Variant | None) -> None:
    if variant is not None and variant.guard not in (None, "observe"):
        raise ConfigError(
            f"selfcheck cannot run under variant {variant.name!r}: its guard {variant.guard!r} "
            "refuses calls, and the injected truth assumes none is refused"
        )


def _check_scenario(
    result: SelfCheck,
    scenario: Scenario,
    seed: int,
    variant: Variant | None,
    on_episode: Callable[[], None] | None,
) -> None:
    """Every injector on one scenario, scored into ``result`` (on a branched workflow's
    instance, the branch injectors too), then every agent that makes no mistake."""
    agents = INJECTORS
    if scenario.path is not None:
        result.branch()
        agents = (*INJECTORS, *BRANCH_INJECTORS)
    for agent in (*agents, *FAITHFUL):
        ep = run_sim_episode(scenario, agent, seed=seed, variant=variant, order=result.order)
        if agent in result.faithful:
            _faithful(result, ep, f"{agent} on {scenario.id}")
        else:
            _score(result, ep.labels, ep.injected or [], f"{agent} on {scenario.id}")
            result.episodes += 1
        if on_episode is not None:
            on_episode()


def _faithful(result: SelfCheck, ep: Episode, where: str) -> None:
    """Count an episode of an agent that makes no mistake; one not faithful is a mismatch."""
    score = result.faithful[ep.agent]
    score.episodes += 1
    verdict = ep.metrics.get("verdict")
    if verdict == "faithful" and not ep.labels:
        score.faithful += 1
    elif len(result.mismatches) < 100:
        labels = sorted(lab.key() for lab in ep.labels)
        result.mismatches.append(f"{where}: {verdict}, labels {labels}")


def _readable(
    cell: Cell, seed: int, index: int, variant: Variant | None, result: SelfCheck
) -> Scenario | None:
    """The scenario of one procedure; in calculator mode the first one from ``index`` on
    where every injector can place its fault so that it reads one way by values
    (:func:`~agentproc.agents.sim.beliefs.placeable`; each one passed over is counted)."""
    calculator = variant is not None and variant.tools == "calculator"
    for attempt in range(_ATTEMPTS):
        scenario = scenario_of(generate_procedure(cell, seed, index + attempt * _STRIDE))
        if not calculator or placeable(build_workflow(scenario)):
            return scenario
        result.passed_over += 1
    return None


_ATTEMPTS = 50
_STRIDE = 100_003
"""Calculator mode draws replacements far from the indices of the grid's own procedures."""


def _score(result: SelfCheck, labels: list[Any], truth: list[Any], where: str) -> None:
    got = {lab.key() for lab in labels}
    want = {lab.key() for lab in truth}
    wrong = LabelKind.WRONG_ARGUMENT.value
    for keys, attr in ((got, "predicted"), (want, "truth"), (got & want, "agreed")):
        for key in sorted(keys, key=repr):  # a set's order varies between processes
            scores = [result.scores[key[0]]]
            if key[0] == wrong and key[3] in result.causes:
                scores.append(result.causes[key[3]])
            elif key[3] is not None and result.branched:
                # Every other kind's causes (an unneeded step's, a skipped one's, an
                # answer's), scored apart as ``kind:cause``.
                scores.append(result.causes.setdefault(f"{key[0]}:{key[3]}", KindScore()))
            for score in scores:
                setattr(score, attr, getattr(score, attr) + 1)
    if got != want and len(result.mismatches) < 100:
        result.mismatches.append(
            f"{where}: extra {sorted(got - want)}, missed {sorted(want - got)}"
        )
