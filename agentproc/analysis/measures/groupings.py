"""Which tables a report has, and their rows: the groups the suite's design varies.

When the episodes name two or more sweeps of their suite (``params.sweeps``, the named
blocks of the grid, e.g. the reference preset's length, look-back, range and op sweeps),
each sweep gets its own group, keyed by the knobs that vary within it, so unlike cells
are never pooled. Otherwise there is a group per knob of ``--by`` (by default length
and look-back; none on a suite of declared workflows, whose lengths and look-backs are
the workflows'), each only where the report holds two values of it or more: a suite of
one length has no table by length. A declared workflow's episodes are grouped by
workflow where the report holds several, and a branched workflow's by path. A report
that varies nothing has one group of all its episodes.

The rendered tables (:mod:`~agentproc.analysis.render.report_text`) and the HTML figures
(:mod:`~agentproc.analysis.html`) read these.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentproc.analysis.measures.cells import CellStats
from agentproc.analysis.measures.report import DEFAULT_BY, KNOBS, Report, tuple_order

KNOB_TITLES: dict[str, tuple[str, str]] = {
    "length": ("length", "N"),
    "lookback": ("look-back", "L"),
    "range": ("input range", "range"),
    "ops": ("op mix", "ops"),
    "mode": ("numeric mode", "mode"),
}
"""Knob -> (name in titles, key column header)."""

Key = tuple[Any, ...]


@dataclass(frozen=True)
class Grouping:
    """The rows of one group of tables: key columns, row keys, each agent's stats."""

    title: str
    headers: list[str]
    rows: list[Key]
    stats: dict[str, dict[Key, CellStats]]
    total: bool
    """Whether the last row is each agent's ``all`` (every scored episode)."""
    named: bool
    """Whether column groups are headed by their agent's name (several agents)."""

    @property
    def realised(self) -> bool:
        """Whether the look-back is a key: then a realised look-back column follows the keys."""
        return "L" in self.headers

    @property
    def keys(self) -> int:
        """Columns before the agents' column groups."""
        return len(self.headers) + self.realised


def realised(g: Grouping, key: Key, agents: list[str]) -> str:
    """The farthest realised look-back of a row's episodes, any agent ("-": no episode
    records it, as in older run files)."""
    found = [s.realised_max for name in agents if (s := g.stats[name].get(key)) is not None]
    known = [d for d in found if d is not None]
    return str(max(known)) if known else "-"


def workflow_suite(report: Report) -> bool:
    """Whether every agent's scored episodes are declared workflows'."""
    scored = [a for a in report.agents.values() if a.overall.n]
    return bool(scored) and all(a.declared for a in scored)


def varies(report: Report, knob: str) -> bool:
    """Whether the report's episodes hold two values of ``knob`` or more."""
    return len({k for a in report.agents.values() for k in a.by_knob[knob]}) > 1


def workflows(report: Report) -> list[str]:
    """The declared workflows the report's episodes come from, by name."""
    return sorted({w for a in report.agents.values() for w in a.by_workflow})


def _totalled(
    report: Report, title: str, headers: list[str], stats: dict[str, dict[Key, CellStats]]
) -> Grouping:
    """Rows of every key any agent has, then each agent's ``all`` (under the first key)."""
    rows = sorted({k for groups in stats.values() for k in groups}, key=tuple_order)
    total = ("all",) + ("",) * (len(headers) - 1)
    for name, a in report.agents.items():
        stats[name][total] = a.overall
    return Grouping(title, headers, [*rows, total], stats, True, len(report.agents) > 1)


def knob_grouping(report: Report, knob: str) -> Grouping:
    stats = {
        name: {(k,): s for k, s in a.by_knob[knob].items()} for name, a in report.agents.items()
    }
    title, header = KNOB_TITLES[knob]
    return _totalled(report, f"by {title}", [header], stats)


def sweep_names(report: Report) -> list[str]:
    return list(dict.fromkeys(n for a in report.agents.values() for n in a.by_sweep))


def sweep_grouping(report: Report, sweep: str) -> Grouping:
    """A sweep's cells keyed by the knobs that vary within it (length if none does)."""
    full = {name: a.by_sweep.get(sweep, {}) for name, a in report.agents.items()}
    keys = {k for groups in full.values() for k in groups}
    knobs = list(KNOBS)
    varying = [i for i in range(len(knobs)) if len({k[i] for k in keys}) > 1] or [0]
    stats = {
        name: {tuple(k[i] for i in varying): s for k, s in groups.items()}
        for name, groups in full.items()
    }
    rows = sorted({tuple(k[i] for i in varying) for k in keys}, key=tuple_order)
    names = " and ".join(KNOB_TITLES[knobs[i]][0] for i in varying)
    headers = [KNOB_TITLES[knobs[i]][1] for i in varying]
    named = len(report.agents) > 1
    return Grouping(f"sweep {sweep}: by {names}", headers, rows, stats, False, named)


def workflow_grouping(report: Report) -> Grouping | None:
    """Declared workflows' episodes by workflow (``None``: the report holds fewer than two)."""
    if len(workflows(report)) < 2:
        return None
    stats = {name: {(w,): s for w, s in a.by_workflow.items()} for name, a in report.agents.items()}
    return _totalled(report, "by workflow", ["workflow"], stats)


def path_grouping(report: Report) -> Grouping | None:
    """A branched workflow's episodes by path, and by workflow too where the report holds
    several (``None``: no agent has any)."""
    keys = {k for a in report.agents.values() for k in a.by_path}
    if not keys:
        return None
    several = len({w for w, _ in keys}) > 1 or len(workflows(report)) > 1
    stats = {
        name: {(k if several else k[1:]): s for k, s in a.by_path.items()}
        for name, a in report.agents.items()
    }
    return _totalled(report, "by path", ["workflow", "path"] if several else ["path"], stats)


def overall_grouping(report: Report) -> Grouping:
    """One row of every scored episode, for a report that varies nothing."""
    stats: dict[str, dict[Key, CellStats]] = {n: {} for n in report.agents}
    g = _totalled(report, "all episodes", [""], stats)
    return Grouping(g.title, g.headers, g.rows, g.stats, False, g.named)


def groupings(report: Report, by: Sequence[str] | None = None) -> list[Grouping]:
    """The report's groups of tables, in order (see the module docstring); ``by``: the
    knobs asked for (``None``: length and look-back, or none on a workflow suite)."""
    sweeps = sweep_names(report)
    if len(sweeps) > 1:
        return [sweep_grouping(report, s) for s in sweeps]
    if by is None:
        by = () if workflow_suite(report) else DEFAULT_BY
    out = [knob_grouping(report, k) for k in by if varies(report, k)]
    out += [g for g in (workflow_grouping(report), path_grouping(report)) if g is not None]
    return out or [overall_grouping(report)]
