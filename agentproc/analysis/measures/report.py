"""Aggregate run-file records into per-agent statistics.

Rendering is :mod:`agentproc.analysis.render.report_text`.

Aggregation streams: each record is read once, added to a few counters and
dropped, so memory grows with the number of groups (agents times grid cells) and
of scenarios (a counter per measure each, for the design effect of repeated trials,
and one byte per step of each trial, for the per-step measures of
:mod:`~agentproc.analysis.measures.steps`); records that name no scenario add to counters only.

With several trials per scenario the episodes of one scenario are not independent:
each group's headline and study-measure intervals are Wilson's on the effective
number of episodes, ``n`` over the design effect measured on the group's scenarios
(:func:`~agentproc.analysis.stats.binomial.design_effect`), and the group states its
scenarios.

Within an agent, episodes are grouped per cell, per knob of the grid (length N,
look-back L, input range, op mix, numeric mode) and overall. The headline number
is the unfaithful-correct rate: episodes whose first answer is right although the
monitor found something wrong on the way. It equals first-answer accuracy minus
faithful accuracy. The reference study's own measures are computed beside it
(see :class:`CellStats`).

An episode that an infrastructure failure ended (``stop_reason: "error"``)
counts in no figure: it is counted apart, per kind of failure.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from agentproc.analysis.measures.cells import CellStats
from agentproc.analysis.measures.horizon import Horizons, horizons
from agentproc.analysis.measures.identity import AgentId, agent_id, agent_key, agent_names
from agentproc.analysis.measures.step_names import (
    StepName,
    WorkflowNames,
    agreed,
    is_declared,
    shifted,
    workflow_of,
)
from agentproc.analysis.measures.steps import PerStep, StepTally
from agentproc.analysis.measures.tally import COUNTERS, Tally, clustered_hits, episode_of
from agentproc.analysis.measures.tokens import Tokens
from agentproc.runs import error_kind_of, is_error


class CellKey(NamedTuple):
    """The grid cell a group of episodes comes from; sorts by steps, look-back, id."""

    steps: int
    lookback: int
    cell: str


def _range_key(params: Mapping[str, Any]) -> str:
    if "range" not in params:
        return "?"
    lo, hi = params["range"]
    return f"{float(lo):g}:{float(hi):g}"


KNOBS: dict[str, Any] = {
    "length": lambda p: int(p["steps"]),
    "lookback": lambda p: int(p["lookback"]),
    "range": _range_key,
    "ops": lambda p: str(p.get("ops", "?")),
    "mode": lambda p: str(p.get("mode", "?")),
}
"""The grid's knobs a report can be grouped by (``report --by``): name -> key of ``params``."""
DEFAULT_BY = ("length", "lookback")


@dataclass(frozen=True, slots=True)
class AgentReport:
    """One agent's statistics, overall and per group; groups in ascending key order."""

    agent: str
    overall: CellStats
    by_knob: dict[str, dict[Any, CellStats]]
    """Knob name (see :data:`KNOBS`) -> key -> statistics."""
    by_cell: dict[CellKey, CellStats]
    errors: dict[str, int] = field(default_factory=dict)
    """Episodes an infrastructure failure ended, per kind; they are in no figure above."""
    by_sweep: dict[str, dict[tuple[Any, ...], CellStats]] = field(default_factory=dict)
    """Sweep name (a named block of the suite's grid, from ``params.sweeps``) -> the
    values of every knob (:data:`KNOBS` order) -> statistics; sweeps in the order
    the run first met them, groups in ascending order."""
    cache: tuple[int, int] | None = None
    """With ``run --cache``: model calls of the episodes run with the cache, and those the
    response cache answered (``None``: no episode used it)."""
    tokens: Tokens | None = None
    """Token totals of its model calls (``None``: no episode recorded usage)."""
    horizon: Horizons | None = None
    """The procedure horizon over every length (``None``: one length, or records that do
    not name their scenarios)."""
    horizon_by_lookback: dict[int, Horizons] = field(default_factory=dict)
    """Per look-back, when the run has several."""
    per_step: PerStep | None = None
    """Accuracy by position, survival on the procedure, hazard and observed
    self-conditioning (:mod:`~agentproc.analysis.measures.steps`); ``None``: no scored episode."""
    by_path: dict[tuple[str, str], CellStats] = field(default_factory=dict)
    """A branched workflow's episodes by its workflow and the path its instance takes (its
    conditional steps and exit: ``manager_approval``, ``exit:expired``, ``base``); empty
    otherwise."""
    by_workflow: dict[str, CellStats] = field(default_factory=dict)
    """A declared workflow's episodes by workflow (its scenarios' ``params.cell``); empty
    for a procedure's."""
    declared: bool = False
    """Whether every scored episode is a declared workflow's."""
    step_names: dict[int, StepName] = field(default_factory=dict)
    """The name of each position of the per-step measures and of the divergence steps
    (counted from the agent's own first step) where every episode's workflow names it
    alike (:mod:`~agentproc.analysis.measures.step_names`); empty for a procedure's steps."""
    workflow_steps: dict[str, dict[int, StepName]] = field(default_factory=dict)
    """Per workflow, its steps' names by position, as :attr:`step_names`."""

    @property
    def by_length(self) -> dict[int, CellStats]:
        """Keyed by the number of steps N."""
        return self.by_knob["length"]

    @property
    def by_lookback(self) -> dict[int, CellStats]:
        """Keyed by the look-back L."""
        return self.by_knob["lookback"]

    @property
    def errored(self) -> int:
        """Episodes not scored because of an infrastructure failure."""
        return sum(self.errors.values())


@dataclass(frozen=True, slots=True)
class Report:
    """Every agent's statistics, agents sorted by name."""

    agents: dict[str, AgentReport]
    names: dict[AgentId, str] = field(default_factory=dict)
    """Each agent's identity (:mod:`~agentproc.analysis.measures.identity`) -> its name above."""
    notes: list[str] = field(default_factory=list)
    """One line per name that the episodes of several agents share (shown apart)."""

    def agent_of(self, rec: Mapping[str, Any]) -> str:
        """The name a record's agent is shown under in this report."""
        return self.names.get(agent_id(rec)) or agent_key(rec)

    @property
    def episodes(self) -> int:
        """Number of scored episodes aggregated."""
        return sum(a.overall.n for a in self.agents.values())

    @property
    def errored(self) -> int:
        """Episodes not scored because of an infrastructure failure."""
        return sum(a.errored for a in self.agents.values())


@dataclass(slots=True)
class _AgentTally:
    overall: Tally = field(default_factory=Tally)
    by_knob: dict[str, defaultdict[Any, Tally]] = field(
        default_factory=lambda: {k: defaultdict(Tally) for k in KNOBS}
    )
    by_cell: defaultdict[CellKey, Tally] = field(default_factory=lambda: defaultdict(Tally))
    errors: dict[str, int] = field(default_factory=dict)
    by_sweep: defaultdict[str, defaultdict[tuple[Any, ...], Tally]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(Tally))
    )
    scenarios: dict[str, _Scenario] = field(default_factory=dict)
    """Per scenario (when records name it): where it is grouped and its counters."""
    cache: tuple[int, int] | None = None
    tokens: Tokens = field(default_factory=Tokens)
    steps: StepTally = field(default_factory=StepTally)
    by_path: defaultdict[tuple[str, str], Tally] = field(default_factory=lambda: defaultdict(Tally))
    by_workflow: defaultdict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    workflows: dict[str, set[int]] = field(default_factory=dict)
    """Declared workflow -> the pre-filled steps its episodes start after."""
    procedures: int = 0
    """Scored episodes of no declared workflow."""

    def add(self, rec: Mapping[str, Any]) -> None:
        self.tokens.add(rec)  # an errored episode's tokens were spent too
        usage = rec.get("usage")
        if isinstance(usage, dict) and isinstance(usage.get("cache_hits"), int):
            calls, hits = self.cache or (0, 0)
            self.cache = (calls + int(usage.get("model_calls") or 0), hits + usage["cache_hits"])
        if is_error(rec):  # type: ignore[arg-type]
            kind = error_kind_of(rec)  # type: ignore[arg-type]
            self.errors[kind] = self.errors.get(kind, 0) + 1
            return
        ep, params = episode_of(rec), rec["params"]
        key = CellKey(int(params["steps"]), int(params["lookback"]), str(rec["cell"]))
        values = tuple(of(params) for of in KNOBS.values())
        sweeps = params.get("sweeps")
        names = tuple(str(n) for n in sweeps) if isinstance(sweeps, list) else ()
        self.overall.add(ep)
        self.steps.add(rec)
        for knob, value in zip(KNOBS, values, strict=True):
            self.by_knob[knob][value].add(ep)
        self.by_cell[key].add(ep)
        mine: list[Tally] = []  # its workflow's groups
        if is_declared(rec):
            wf = workflow_of(rec)
            self.workflows.setdefault(wf, set()).add(int(rec["metrics"].get("given_steps", 0)))
            mine.append(self.by_workflow[wf])
            path = rec["metrics"].get("path")
            if path is not None:
                mine.append(self.by_path[(wf, str(path))])
        else:
            self.procedures += 1
        for group in mine:
            group.add(ep)
        for name in names:
            self.by_sweep[name][values].add(ep)
        sid = rec.get("scenario_id")
        if sid is not None:
            sc = self.scenarios.get(str(sid))
            if sc is None:  # the groups it is in, as this record's
                groups = [self.overall, self.by_cell[key]]
                groups += [self.by_knob[k][v] for k, v in zip(KNOBS, values, strict=True)]
                groups += [self.by_sweep[name][values] for name in names]
                groups += mine
                own = key.steps - int(rec["metrics"].get("given_steps", 0))  # after a pre-fill
                sc = self.scenarios[str(sid)] = _Scenario(groups, [0] * COUNTERS, own, key.lookback)
            for i, hit in enumerate((1, *clustered_hits(ep))):
                sc.counts[i] += hit

    def report(self, agent: str, names: WorkflowNames | None = None) -> AgentReport:
        """The statistics, once every record is read (each group gets its scenarios), its
        steps named by ``names`` where they are a declared workflow's."""
        for sc in self.scenarios.values():
            for group in sc.groups:
                group.clusters.append(tuple(sc.counts))
        steps = {
            wf: agreed(shifted(names.of(wf), g) for g in given) if names is not None else {}
            for wf, given in sorted(self.workflows.items())
        }
        return AgentReport(
            agent,
            self.overall.stats(),
            {
                k: {g: t[g].stats() for g in sorted(t, key=group_order)}
                for k, t in self.by_knob.items()
            },
            {k: self.by_cell[k].stats() for k in sorted(self.by_cell)},
            dict(sorted(self.errors.items())),
            {
                name: {g: t[g].stats() for g in sorted(t, key=tuple_order)}
                for name, t in self.by_sweep.items()
            },
            self.cache,
            self.tokens.counted(),
            *self._horizons(),
            per_step=self.steps.result(),
            by_path={p: self.by_path[p].stats() for p in sorted(self.by_path)},
            by_workflow={w: self.by_workflow[w].stats() for w in sorted(self.by_workflow)},
            declared=bool(self.workflows) and not self.procedures,
            step_names={} if self.procedures else agreed(steps.values()),
            workflow_steps=steps,
        )

    def _horizons(self) -> tuple[Horizons | None, dict[int, Horizons]]:
        """The horizon overall and per look-back (each scenario a row of its trials)."""
        by_lookback: dict[int, list[_Scenario]] = {}
        for sc in self.scenarios.values():
            by_lookback.setdefault(sc.lookback, []).append(sc)
        per = {}
        if len(by_lookback) > 1:
            for lb in sorted(by_lookback):
                h = horizons(_rows(by_lookback[lb]))
                if h is not None:
                    per[lb] = h
        return horizons(_rows(list(self.scenarios.values()))), per


@dataclass(slots=True)
class _Scenario:
    """One scenario's groups and counters: trials, then each
    :data:`~agentproc.analysis.measures.tally.CLUSTERED` measure."""

    groups: list[Tally]
    counts: list[int]
    steps: int
    lookback: int


def _rows(scenarios: list[_Scenario]) -> dict[str, list[tuple[int, int, int]]]:
    """Each horizon measure's rows: per scenario its steps, successes and trials (the
    counters after trials are :data:`~agentproc.analysis.measures.tally.CLUSTERED`'s: first answer,
    then faithful)."""
    return {
        "faithful": [(sc.steps, sc.counts[2], sc.counts[0]) for sc in scenarios],
        "first_answer": [(sc.steps, sc.counts[1], sc.counts[0]) for sc in scenarios],
    }


def group_order(value: Any) -> tuple[int, float, float, str]:
    """Sort key of a knob's value: numbers and ranges (``LOW:HIGH``) by value, then text."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return (0, float(value), 0.0, "")
    lo, sep, hi = str(value).partition(":")
    try:
        return (0, float(lo), float(hi), "") if sep else (1, 0.0, 0.0, str(value))
    except ValueError:
        return (1, 0.0, 0.0, str(value))


def tuple_order(values: tuple[Any, ...]) -> tuple[tuple[int, float, float, str], ...]:
    """Sort key of a tuple of knobs' values: each by :func:`group_order`."""
    return tuple(group_order(v) for v in values)


def aggregate(records: Iterable[Mapping[str, Any]], steps: WorkflowNames | None = None) -> Report:
    """Fold episode records into a :class:`Report`, keeping only counters; a declared
    workflow's steps are named as ``steps`` has found them once every record is read
    (:meth:`~agentproc.analysis.measures.step_names.WorkflowNames.passing` finds them as the
    records pass).

    >>> aggregate([]).agents
    {}
    """
    agents: defaultdict[AgentId, _AgentTally] = defaultdict(_AgentTally)
    for rec in records:
        agents[agent_id(rec)].add(rec)
    names, notes = agent_names(agents)
    order = sorted(agents, key=names.__getitem__)
    reports = {names[a]: agents[a].report(names[a], steps) for a in order}
    return Report(reports, names, notes)
