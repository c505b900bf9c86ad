"""The text report's steps of a workflow suite, one row each: every agent's accuracy at
the step, how many episodes ran it and how many first left the procedure there, then
each agent's median step of leaving it (Kaplan-Meier).

The figures are the per-step measures the JSON and HTML reports give
(:class:`~agentproc.analysis.measures.steps.PerStep`, computed once by the report); a step is
named by its tool and output (:mod:`~agentproc.analysis.measures.step_names`). A procedure's
report has no such section: its steps are positions of a generated chain, and the
HTML report draws them.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agentproc.analysis.measures.report import Report
from agentproc.analysis.measures.step_names import StepNames, median_text
from agentproc.analysis.measures.steps import PerStep
from agentproc.analysis.render.console_fit import fits, print_wrapped, stack
from agentproc.analysis.render.headline import rate_text

STEP_LEGEND: dict[str, str] = {
    "ran": "episodes that executed the step (a skipped step is in no accuracy)",
    "step acc": "share of the episodes that ran the step whose first run of it made no new "
    "mistake (a wrong value carried forward from an earlier step counts as right)",
    "left": "episodes that first left the procedure at this step",
}
"""The per-step columns, explained in the legend."""
_COLUMNS = ("ran", "step acc", "left")


def stepwise(report: Report) -> list[str]:
    """The agents whose steps the section shows: those whose scored episodes are all a
    declared workflow's."""
    return [n for n, a in report.agents.items() if a.declared and a.per_step is not None]


def _cells(ps: PerStep) -> dict[int, list[str]]:
    """Per position: the episodes that ran the step, its accuracy, those that left there."""
    left = {t: r.k for t, r in ps.hazard}
    return {
        k: [str(r.n), rate_text(r.value, r.ci, r.n), str(left.get(k, 0))] for k, r, _ in ps.accuracy
    }


def _table(report: Report, agents: Sequence[str], names: StepNames) -> Table:
    """One row per position any of ``agents`` has; one column group per agent."""
    cells = {n: _cells(report.agents[n].per_step) for n in agents}  # type: ignore[arg-type]
    rows = sorted({k for c in cells.values() for k in c})
    table = Table()
    table.add_column("#", justify="right", no_wrap=True)
    if names:
        table.add_column("step", no_wrap=True)
    several = len(agents) > 1
    for name in agents:
        for i, header in enumerate(_COLUMNS):
            top = name if i == 0 and several else ""
            text = header.replace(" ", "\n")  # two lines: the column as narrow as its values
            table.add_column(f"{top}\n{text}" if several else text, justify="right", no_wrap=True)
    for k in rows:
        row = [str(k)] + ([names[k].text() if k in names else ""] if names else [])
        for name in agents:
            row += cells[name].get(k, ["-", "-", "-"])
        table.add_row(*row)
    return table


def _print(
    console: Console, report: Report, agents: list[str], names: StepNames, alone: bool
) -> None:
    """The agents side by side where they fit, else each alone, else stacked (``alone``:
    the section holds no other agent, so the title need not name it)."""
    table = _table(report, agents, names)
    if fits(console, table) or len(agents) == 1:
        console.print(Text("by step" if alone or len(agents) > 1 else f"by step: {agents[0]}"))
        if fits(console, table):
            console.print(table)
        else:
            stack(console, table, keys=2 if names else 1)
        return
    for name in agents:
        _print(console, report, [name], names, False)


def render_steps(console: Console, report: Report, agents: list[str]) -> None:
    """The steps of ``agents`` (:func:`stepwise`): tables of agents whose steps are named
    alike side by side, then each agent's median step of leaving the procedure."""
    alike: dict[tuple[tuple[int, str, str], ...], list[str]] = {}
    for name in agents:
        key = tuple((k, s.tool, s.output) for k, s in report.agents[name].step_names.items())
        alike.setdefault(key, []).append(name)
    for group in alike.values():
        _print(console, report, group, report.agents[group[0]].step_names, len(agents) == 1)
    for name in agents:
        a = report.agents[name]
        if a.overall.diverged and a.per_step is not None:
            median = median_text(a.per_step.survival.median, a.step_names)
            print_wrapped(
                console, f"{name}: median step of leaving the procedure (Kaplan-Meier): {median}"
            )
