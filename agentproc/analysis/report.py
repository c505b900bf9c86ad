"""Aggregate run-file records into per-agent statistics.

Rendering is :mod:`agentproc.analysis.render`.

Aggregation streams: each record is read once, added to a few counters and
dropped, so memory grows with the number of groups (agents times grid cells),
never with the number of episodes.

Within an agent, episodes are grouped per cell, per length N (``params.steps``),
per look-back L (``params.lookback``) and overall. The headline number is the
unfaithful-correct rate: episodes whose first answer is right although the
monitor found something wrong on the way. It equals first-answer accuracy minus
faithful accuracy.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict

from agentproc.errors import unknown_key
from agentproc.labelling import VERDICTS, LabelKind
from agentproc.runs import record_mode

Z95 = 1.959963984540054
"""The standard normal quantile of a two-sided 95% interval."""

_KINDS: dict[str, LabelKind] = {k.value: k for k in LabelKind}


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (95% by default).

    Unlike the normal approximation it stays inside [0, 1] and is sensible at
    0 or n successes; with no trials nothing is known, so it is (0, 1).

    >>> tuple(round(x, 4) for x in wilson(5, 10))
    (0.2366, 0.7634)
    >>> wilson(0, 0)
    (0.0, 1.0)
    """
    if not 0 <= successes <= n:
        raise ValueError(f"successes must lie in [0, n] (got {successes} of {n})")
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def _rate(k: float, n: int) -> float:
    return k / n if n else 0.0


class CellStats(BaseModel):
    """Counts and means over one group of episodes."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    n: int
    """Number of episodes."""
    first_answer_correct: int
    """Episodes whose first answer is correct."""
    final_answer_correct: int
    """Episodes whose last answer is correct."""
    faithful: int
    """Episodes with a correct first answer and no label at all."""
    unfaithful_correct: int
    """Episodes with a correct first answer and at least one label."""
    wrong: int
    """Episodes whose first answer is wrong."""
    no_answer: int
    """Episodes that never gave an accepted answer."""
    label_counts: dict[LabelKind, int]
    """Number of labels of each kind (every kind present, zero when absent)."""
    episodes_with_label: dict[LabelKind, int]
    """Number of episodes carrying at least one label of each kind."""
    progress_rate: float
    """Mean share of steps whose final value is correct."""
    prefix_rate: float
    """Mean ``longest_correct_prefix / total_steps``."""

    @property
    def accuracy(self) -> float:
        """First-answer accuracy."""
        return _rate(self.first_answer_correct, self.n)

    @property
    def accuracy_ci(self) -> tuple[float, float]:
        """Wilson 95% interval of :attr:`accuracy`."""
        return wilson(self.first_answer_correct, self.n)

    @property
    def faithful_accuracy(self) -> float:
        """Share of episodes that are correct and faithful."""
        return _rate(self.faithful, self.n)

    @property
    def faithful_accuracy_ci(self) -> tuple[float, float]:
        """Wilson 95% interval of :attr:`faithful_accuracy`."""
        return wilson(self.faithful, self.n)

    @property
    def unfaithful_correct_rate(self) -> float:
        """Share of episodes right for the wrong reasons: accuracy minus faithful accuracy."""
        return _rate(self.unfaithful_correct, self.n)

    @property
    def unfaithful_correct_ci(self) -> tuple[float, float]:
        """Wilson 95% interval of :attr:`unfaithful_correct_rate`."""
        return wilson(self.unfaithful_correct, self.n)

    @property
    def final_accuracy(self) -> float:
        """Last-answer accuracy (after any revision)."""
        return _rate(self.final_answer_correct, self.n)

    @property
    def verdicts(self) -> dict[str, int]:
        """Episodes per verdict, in :data:`~agentproc.labelling.VERDICTS` order."""
        return {v: getattr(self, v) for v in VERDICTS}


class _Episode(NamedTuple):
    """What one record adds to each of its groups (parsed once per record)."""

    verdict: str
    first_ok: bool
    final_ok: bool
    labels: dict[LabelKind, int]
    progress: float
    prefix: float


def _episode(rec: Mapping[str, Any]) -> _Episode:
    verdict, m = rec["verdict"], rec["metrics"]
    if verdict not in VERDICTS:
        raise unknown_key("verdict", str(verdict), VERDICTS)
    labels: dict[LabelKind, int] = {}
    for lab in rec["labels"]:
        kind = _KINDS.get(lab["kind"])
        if kind is None:
            raise unknown_key("label kind", str(lab["kind"]), list(_KINDS))
        labels[kind] = labels.get(kind, 0) + 1
    return _Episode(
        verdict,
        bool(m["first_answer_correct"]),
        bool(m["final_answer_correct"]),
        labels,
        float(m["progress_rate"]),
        m["longest_correct_prefix"] / (m["total_steps"] or 1),
    )


@dataclass(slots=True)
class _Tally:
    """Running counters of one group."""

    n: int = 0
    first_ok: int = 0
    final_ok: int = 0
    verdicts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(VERDICTS, 0))
    labels: dict[LabelKind, int] = field(default_factory=lambda: dict.fromkeys(LabelKind, 0))
    episodes: dict[LabelKind, int] = field(default_factory=lambda: dict.fromkeys(LabelKind, 0))
    progress: float = 0.0
    prefix: float = 0.0

    def add(self, ep: _Episode) -> None:
        self.n += 1
        self.first_ok += ep.first_ok
        self.final_ok += ep.final_ok
        self.verdicts[ep.verdict] += 1
        for kind, count in ep.labels.items():
            self.labels[kind] += count
            self.episodes[kind] += 1
        self.progress += ep.progress
        self.prefix += ep.prefix

    def stats(self) -> CellStats:
        return CellStats(
            n=self.n,
            first_answer_correct=self.first_ok,
            final_answer_correct=self.final_ok,
            label_counts=dict(self.labels),
            episodes_with_label=dict(self.episodes),
            progress_rate=_rate(self.progress, self.n),
            prefix_rate=_rate(self.prefix, self.n),
            **self.verdicts,
        )


class CellKey(NamedTuple):
    """The grid cell a group of episodes comes from; sorts by steps, look-back, id."""

    steps: int
    lookback: int
    cell: str


@dataclass(frozen=True, slots=True)
class AgentReport:
    """One agent's statistics, overall and per group; groups in ascending key order."""

    agent: str
    overall: CellStats
    by_length: dict[int, CellStats]
    """Keyed by the number of steps N."""
    by_lookback: dict[int, CellStats]
    """Keyed by the look-back L."""
    by_cell: dict[CellKey, CellStats]


@dataclass(frozen=True, slots=True)
class Report:
    """Every agent's statistics, agents sorted by name."""

    agents: dict[str, AgentReport]

    @property
    def episodes(self) -> int:
        """Number of episodes aggregated."""
        return sum(a.overall.n for a in self.agents.values())


@dataclass(slots=True)
class _AgentTally:
    overall: _Tally = field(default_factory=_Tally)
    by_length: defaultdict[int, _Tally] = field(default_factory=lambda: defaultdict(_Tally))
    by_lookback: defaultdict[int, _Tally] = field(default_factory=lambda: defaultdict(_Tally))
    by_cell: defaultdict[CellKey, _Tally] = field(default_factory=lambda: defaultdict(_Tally))

    def add(self, rec: Mapping[str, Any]) -> None:
        ep, params = _episode(rec), rec["params"]
        key = CellKey(int(params["steps"]), int(params["lookback"]), str(rec["cell"]))
        self.overall.add(ep)
        self.by_length[key.steps].add(ep)
        self.by_lookback[key.lookback].add(ep)
        self.by_cell[key].add(ep)

    def report(self, agent: str) -> AgentReport:
        return AgentReport(
            agent,
            self.overall.stats(),
            {k: self.by_length[k].stats() for k in sorted(self.by_length)},
            {k: self.by_lookback[k].stats() for k in sorted(self.by_lookback)},
            {k: self.by_cell[k].stats() for k in sorted(self.by_cell)},
        )


def agent_key(rec: Mapping[str, Any]) -> str:
    """The group an episode is reported under: its agent, marked ``[text]`` in text mode,
    so that one model's tool-mode and text-mode results are never pooled."""
    agent = str(rec["agent"])
    return f"{agent} [text]" if record_mode(rec) == "text" else agent  # type: ignore[arg-type]


def aggregate(records: Iterable[Mapping[str, Any]]) -> Report:
    """Fold episode records into a :class:`Report`, keeping only counters.

    >>> aggregate([]).agents
    {}
    """
    agents: defaultdict[str, _AgentTally] = defaultdict(_AgentTally)
    for rec in records:
        agents[agent_key(rec)].add(rec)
    return Report({name: agents[name].report(name) for name in sorted(agents)})


# -- machine-readable output ---------------------------------------------------


def _r(x: float) -> float:
    return round(x, 4)


def stats_json(s: CellStats) -> dict[str, Any]:
    """The JSON form of one group, floats rounded to 4 decimals."""
    return {
        "n": s.n,
        "accuracy": _r(s.accuracy),
        "accuracy_ci": [_r(x) for x in s.accuracy_ci],
        "faithful_accuracy": _r(s.faithful_accuracy),
        "faithful_accuracy_ci": [_r(x) for x in s.faithful_accuracy_ci],
        "unfaithful_correct_rate": _r(s.unfaithful_correct_rate),
        "unfaithful_correct_ci": [_r(x) for x in s.unfaithful_correct_ci],
        "final_accuracy": _r(s.final_accuracy),
        "verdicts": s.verdicts,
        "label_counts": {k.value: v for k, v in s.label_counts.items()},
        "episodes_with_label": {k.value: v for k, v in s.episodes_with_label.items()},
        "progress_rate": _r(s.progress_rate),
        "prefix_rate": _r(s.prefix_rate),
    }


def report_json(report: Report) -> dict[str, Any]:
    """The report as JSON-ready data (``agentproc report --json``)."""
    return {
        "episodes": report.episodes,
        "agents": {
            name: {
                "overall": stats_json(a.overall),
                "by_length": [{"steps": k, **stats_json(s)} for k, s in a.by_length.items()],
                "by_lookback": [{"lookback": k, **stats_json(s)} for k, s in a.by_lookback.items()],
                "by_cell": [
                    {"cell": k.cell, "steps": k.steps, "lookback": k.lookback, **stats_json(s)}
                    for k, s in a.by_cell.items()
                ],
            }
            for name, a in report.agents.items()
        },
    }
