"""Rich tables of a report: a headline per agent, then tables with the agents side by side.

Tables follow the suite's design (:mod:`~agentproc.analysis.measures.groupings`): a table per
sweep of the suite, or per knob of ``--by`` that the suite varies; a declared
workflow's episodes by workflow and by path; a workflow suite's steps one by one
(:mod:`~agentproc.analysis.render.steps_text`). Every table has one column group per agent.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TypeVar

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agentproc.analysis.measures.cells import CellStats
from agentproc.analysis.measures.groupings import Grouping, groupings, realised
from agentproc.analysis.measures.report import KNOBS, AgentReport, Report
from agentproc.analysis.measures.tokens import Price
from agentproc.analysis.render.console_fit import fits, print_wrapped, stack
from agentproc.analysis.render.headline import headline
from agentproc.analysis.render.headline import rate_text as _ci
from agentproc.analysis.render.steps_text import STEP_LEGEND, render_steps, stepwise
from agentproc.errors import unknown_key
from agentproc.labelling import LabelKind

SHORT: dict[LabelKind, str] = {
    LabelKind.HALLUCINATED_CALL: "halluc",
    LabelKind.INVALID_ARGUMENTS: "invalid",
    LabelKind.REPEATED_STEP: "repeat",
    LabelKind.REORDERED: "reorder",
    LabelKind.WRONG_ARGUMENT: "wrong_arg",
    LabelKind.SKIPPED_STEP: "skipped",
    LabelKind.PREMATURE_FINISH: "premature",
    LabelKind.MISSING_ANSWER: "missing",
    LabelKind.WRONG_ANSWER: "wrong_ans",
    LabelKind.ANSWER_REVISED: "revised",
    LabelKind.UNREADABLE: "unread",
    LabelKind.UNRETURNED_VALUE: "unreturned",
    LabelKind.UNNEEDED_STEP: "unneeded",
}
"""Column headers of the label kinds in rendered tables."""


REALISED = "dist"
"""Header of the realised look-back beside ``L`` (four letters: two agents' look-back
tables still fit 120 columns side by side)."""

_RATES: dict[str, Callable[[CellStats], str]] = {
    "first-answer acc": lambda s: _ci(*s.rate("accuracy"), s.n),
    "faithful acc": lambda s: _ci(*s.rate("faithful_accuracy"), s.n),
    "unfaithful-correct": lambda s: _ci(*s.rate("unfaithful_correct_rate"), s.n),
}
"""The rate columns of the rendered tables: header to cell text."""

_TWO_LINES = {
    "first-answer acc": "first-answer\nacc",
    "faithful acc": "faithful\nacc",
    "unfaithful-correct": "unfaithful-\ncorrect",
}
"""Headers set on two lines, so that columns are as narrow as their values."""

_STUDY: dict[str, str] = {
    "exact-step": "exact_step_rate",
    "under-exec": "under_execution_rate",
    "over-exec": "over_execution_rate",
    "no-answer": "missing_answer_rate",
    "early-answer": "premature_answer_rate",
    "self-corr": "self_correction_rate",
}
"""Study-measure columns: header -> :data:`~agentproc.analysis.measures.cells.STUDY_RATES`."""

LEGEND: dict[str, str] = {
    REALISED: "the realised look-back: the farthest any operand variable of the row's "
    "procedures lies from the variable it defines (-: the run file does not record it)",
    "n": "scored episodes (an episode an infrastructure failure ended is in no figure)",
    "first-answer acc": "share of episodes whose first answer is right (the study's headline)",
    "faithful acc": "share whose first answer is right and that carry no label at all",
    "unfaithful-correct": "share right for the wrong reasons: a right first answer with at "
    "least one label; first-answer acc minus faithful acc (the gap)",
    "[a-b]": "95% Wilson interval",
    **{short: f"{kind.value} labels (count)" for kind, short in SHORT.items()},
    "exact-step": "share of episodes that ran every step exactly once and nothing extra",
    "under-exec": "share that ran fewer distinct steps than the procedure has",
    "over-exec": "share with more step runs (repeats, invented steps) than steps",
    "no-answer": "share that ended without an answer",
    "early-answer": "share that answered before the last step had run",
    "self-corr": "share where a wrong value or answer was later corrected",
}
"""Every column header and abbreviation the rendered report may use, explained."""


def _kinds(a: AgentReport) -> list[LabelKind]:
    """Label kinds the agent has at least one label of, in taxonomy order."""
    return [k for k in LabelKind if a.overall.label_counts[k]]


Column = tuple[str, Callable[[CellStats], str]]
Columns = dict[str, list[Column]]
"""Each agent's columns, agents in table order."""
T = TypeVar("T")


def _rate_columns(a: AgentReport, labels: bool) -> list[Column]:
    cols: list[Column] = [("n", lambda s: str(s.n))]
    cols += list(_RATES.items())
    if labels:
        cols += _label_columns(a)
    return cols


def _label_columns(a: AgentReport) -> list[Column]:
    return [(SHORT[k], _label_cell(k)) for k in _kinds(a)]


def _label_cell(kind: LabelKind) -> Callable[[CellStats], str]:
    return lambda s: str(s.label_counts[kind])


def _study_cell(name: str, intervals: bool) -> Callable[[CellStats], str]:
    if intervals:
        return lambda s: _pct(*s.rate(name))
    return lambda s: f"{100 * s.rate(name)[0]:.0f}%"


def _pct(value: float, ci: tuple[float, float]) -> str:
    return f"{100 * value:.0f}% [{100 * ci[0]:.0f}-{100 * ci[1]:.0f}]"


def _study_columns(intervals: bool) -> list[Column]:
    cols: list[Column] = [("n", lambda s: str(s.n))]
    return cols + [(header, _study_cell(name, intervals)) for header, name in _STUDY.items()]


def _table(g: Grouping, agents: list[str], columns: Columns) -> Table:
    """One row per key; one column group per agent, headed by the agent's name."""
    table = Table()
    for h in [*g.headers, REALISED] if g.realised else g.headers:
        table.add_column(h, justify="right", no_wrap=True)
    for name in agents:
        for i, (header, _) in enumerate(columns[name]):
            top = name if i == 0 and g.named else ""
            text = _TWO_LINES.get(header, header)
            table.add_column(f"{top}\n{text}" if g.named else text, justify="right", no_wrap=True)
    for r, key in enumerate(g.rows):
        cells = [str(v) for v in key]
        if g.realised:
            cells.append(realised(g, key, agents))
        for name in agents:
            s = g.stats[name].get(key)
            cells += [fn(s) if s is not None else "-" for _, fn in columns[name]]
        table.add_row(*cells, end_section=g.total and r == len(g.rows) - 2)
    return table


def _packed(
    console: Console, items: Sequence[T], table_of: Callable[[list[T]], Table]
) -> list[Table] | None:
    """Tables of ``items`` in runs, in order: each run grows while its table fits the
    console (agents side by side, or one agent's columns); ``None`` if one item alone
    does not fit."""
    runs: list[list[T]] = []
    for item in items:
        if runs and fits(console, table_of([*runs[-1], item])):
            runs[-1].append(item)
        else:
            runs.append([item])
    tables = [table_of(run) for run in runs]
    return tables if all(fits(console, t) for t in tables) else None


def _print_tables(console: Console, title: str, tables: list[Table]) -> None:
    for t in tables:
        console.print(Text(title))
        console.print(t)


def _split(console: Console, title: str, g: Grouping, cols: Columns) -> None:
    """For a console too narrow for one agent's table: the agent's columns split over as
    many tables as it takes, or, where even one column does not fit, each row a block of
    ``header: value`` lines (nothing is dropped or cut)."""
    for name, columns in cols.items():
        # _packed calls it at once, while ``name`` is this agent
        tables = _packed(console, columns, lambda run: _table(g, [name], {name: run}))  # noqa: B023
        if tables is not None:
            _print_tables(console, title, tables)
            continue
        print_wrapped(console, f"{title}: {name}")
        alone = dataclasses.replace(g, named=False)
        stack(console, _table(alone, [name], {name: columns}), keys=g.keys)


def _render_grouping(console: Console, report: Report, g: Grouping, agents: list[str]) -> None:
    """Every agent in one table with its label columns if that fits; else rates and
    labels in tables of their own, agents side by side as far as they fit."""
    table = _table(g, agents, {n: _rate_columns(report.agents[n], True) for n in agents})
    if fits(console, table):
        _print_tables(console, g.title, [table])
        return
    rates = {n: _rate_columns(report.agents[n], False) for n in agents}
    _fitting_or_stacked(console, g.title, g, rates)
    labels = {n: cols for n in agents if (cols := _label_columns(report.agents[n]))}
    if labels:
        _fitting_or_stacked(console, f"{g.title}: labels", g, labels)


def _fitting_or_stacked(console: Console, title: str, g: Grouping, *choices: Columns) -> None:
    """The first of ``choices`` of columns whose tables fit, agents side by side as far as
    they do; else the first split or stacked."""
    for cols in choices:
        tables = _packed(console, list(cols), lambda run: _table(g, run, cols))  # noqa: B023
        if tables is not None:
            _print_tables(console, title, tables)
            return
    _split(console, title, g, choices[0])


def _render_study(console: Console, g: Grouping, agents: list[str]) -> None:
    """With intervals if they fit; else without (they are in --json); else split or
    stacked, with intervals."""
    choices = [dict.fromkeys(agents, _study_columns(intervals)) for intervals in (True, False)]
    _fitting_or_stacked(console, f"execution measures {g.title}", g, *choices)


def _legend(console: Console, report: Report, dist: bool, steps: bool) -> None:
    used = [REALISED] if dist else []
    used += ["n", "first-answer acc", "faithful acc", "unfaithful-correct", "[a-b]"]
    used += [SHORT[k] for k in LabelKind if any(k in _kinds(a) for a in report.agents.values())]
    used += list(_STUDY)
    console.print(Text("legend"))
    legend = {**LEGEND, **STEP_LEGEND}
    for key in dict.fromkeys(used + (list(STEP_LEGEND) if steps else [])):  # each once
        print_wrapped(console, f"  {key}: {legend[key]}")


def render_report(
    report: Report,
    console: Console,
    by: Sequence[str] | None = None,
    price: Price | None = None,
) -> None:
    """Print a headline per agent, tables with the agents side by side, and a legend.

    The headline gives first-answer accuracy, faithful accuracy, the
    unfaithful-correct gap and the errored episodes, each with its 95% Wilson
    interval; then its token totals (and their cost at ``price``, USD per million input
    and output tokens), the verdict counts, ``wrong_argument`` split into mistakes
    carried forward and new ones by cause, and where episodes first left the
    procedure. Tables: one group per sweep of the suite's design when the
    episodes name two or more (keyed by the knobs varying in the sweep), else one
    per knob of ``by`` that varies (``None``: length and look-back, or none on a
    workflow suite), by workflow and by path
    (:func:`~agentproc.analysis.measures.groupings.groupings`); then the study's execution
    measures for the first group, and on a workflow suite its steps one by one. Label
    columns appear only for labels that occur; when they do not fit the console they
    get tables of their own, and agents that do not fit side by side are split over
    several tables.
    """
    for knob in by or ():
        if knob not in KNOBS:
            raise unknown_key("report grouping", knob, list(KNOBS))
    if not report.agents:
        console.print("no episodes")
        return
    for name, a in report.agents.items():
        headline(console, name, a, price)
    agents = [name for name, a in report.agents.items() if a.overall.n]
    if not agents:
        return
    groups = groupings(report, by)
    for g in groups:
        _render_grouping(console, report, g, agents)
    _render_study(console, groups[0], agents)
    steps = stepwise(report)
    if steps:
        render_steps(console, report, steps)
    _legend(console, report, any(g.realised for g in groups), bool(steps))
