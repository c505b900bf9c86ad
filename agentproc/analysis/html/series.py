"""The HTML report's figures per agent, and the agents side by side: what the suite
varies, drawn (:mod:`~agentproc.analysis.measures.groupings` decides as for the text tables).

Accuracy against length (a line per look-back) only where the suite has several
lengths, against look-back (a line per length) only where it has several look-backs;
the gap, execution and label mix by length where lengths vary; where the first
divergence happens where either does. A suite of declared workflows gets none of these
(its lengths and look-backs are its workflows'): accuracy by workflow where the report
holds several, by path where a workflow branches. The procedure horizon and the
per-step figures follow, each drawn only where it has something to show.
"""

from __future__ import annotations

from typing import Any

from agentproc.analysis.html.figures import BINS, Figures
from agentproc.analysis.html.group_figure import Series, group_chart
from agentproc.analysis.html.horizon_figure import horizon_figures
from agentproc.analysis.html.steps_figure import step_charts
from agentproc.analysis.html.summary import series_id
from agentproc.analysis.html.svg import Line, Point, esc, heat_map, line_chart, stacked_bars
from agentproc.analysis.measures.cells import CellStats
from agentproc.analysis.measures.groupings import varies, workflow_suite, workflows
from agentproc.analysis.measures.report import AgentReport, Report
from agentproc.analysis.measures.tokens import Price, tokens_text
from agentproc.analysis.stats.binomial import Rate
from agentproc.labelling import LabelKind


def _by_pairs(a: AgentReport, by: str, faithful: bool) -> list[Line]:
    """Lines of accuracy: against length one per look-back (``by="look-back"``) or the reverse."""
    pairs: dict[tuple[int, int], Rate] = {}
    for cell, s in a.by_cell.items():
        rate = pairs.setdefault((cell.steps, cell.lookback), Rate())
        rate.k += s.faithful if faithful else s.first_answer_correct
        rate.n += s.n
    lines: dict[int, list[Point]] = {}
    for (steps, lookback), rate in sorted(pairs.items()):
        key, x = (lookback, steps) if by == "look-back" else (steps, lookback)
        lines.setdefault(key, []).append(Point(x, rate.value, *rate.ci, rate.n))
    prefix = "L=" if by == "look-back" else "N="
    out = [Line(f"{prefix}{k}", pts) for k, pts in sorted(lines.items())]
    # A grid that sweeps one knob at a single value of the other (the reference length
    # sweep at L=3) would add a one-point line per value: keep only real lines then.
    longer = [line for line in out if len(line.points) > 1]
    return longer or out


def _rate_line(name: str, groups: dict[Any, CellStats], rate: str) -> Line:
    pts = []
    for key, s in groups.items():
        if isinstance(key, int) and s.n:
            value, ci = s.rate(rate)
            pts.append(Point(key, value, *ci, s.n))
    return Line(name, pts)


LENGTH = "procedure length N"
_PAIR_CHARTS = (  # (title, knob along x, lines by, faithful?)
    ("First-answer accuracy by length", LENGTH, "look-back", False),
    ("Faithful accuracy by length", LENGTH, "look-back", True),
    ("First-answer accuracy by look-back", "look-back L", "length", False),
    ("Faithful accuracy by look-back", "look-back L", "length", True),
)
_ACCURACY = (("first-answer", "accuracy"), ("faithful", "faithful_accuracy"))
"""The two accuracies a figure by workflow or path shows: series name, rate."""


def _knob_charts(a: AgentReport, name: str, fig: Figures, report: Report) -> list[str]:
    """The figures by length and look-back, those the suite varies (none on a workflow
    suite)."""
    if workflow_suite(report):
        return []
    lengths, lookbacks = varies(report, "length"), varies(report, "lookback")
    charts = [
        line_chart(
            title,
            _by_pairs(a, by, faithful),
            x_label,
            "faithful accuracy" if faithful else "first-answer accuracy",
            by,
        )
        for title, x_label, by, faithful in _PAIR_CHARTS
        if (lengths if x_label == LENGTH else lookbacks)
    ]
    execution = ("exact-step", "under-execution", "over-execution")
    if lengths:
        charts += [
            line_chart(
                "Unfaithful-correct gap by length",
                [_rate_line(name, a.by_length, "unfaithful_correct_rate")],
                LENGTH,
                "accuracy minus faithful accuracy",
            ),
            line_chart(
                "Execution by length",
                [_rate_line(k, a.by_length, f"{k.replace('-', '_')}_rate") for k in execution],
                LENGTH,
                "share of episodes",
            ),
            stacked_bars(
                "Label mix by length",
                {
                    str(n): {k.value: c for k, c in s.label_counts.items() if c}
                    for n, s in a.by_length.items()
                },
                LENGTH,
                [k.value for k in LabelKind],
            ),
        ]
    if lengths or lookbacks:
        charts.append(
            heat_map(
                "Where the first divergence happens",
                fig.divergence.get(name, {}),
                {lookback: s.n for lookback, s in a.by_lookback.items()},
                [f"{100 * i // BINS}%" for i in range(BINS)] + ["ans"],
            )
        )
    return charts


def _path_groups(a: AgentReport, several: bool) -> dict[str, CellStats]:
    """An agent's episodes by path, each named with its workflow where there are several."""
    return {(f"{w}: {p}" if several else p): s for (w, p), s in a.by_path.items()}


def _group_charts(a: AgentReport, report: Report) -> list[str]:
    """Accuracy by workflow (where the report holds several) and by path."""
    several = len(workflows(report)) > 1
    charts = []
    if several:
        series: list[Series] = [(n, a.by_workflow, r) for n, r in _ACCURACY]
        charts.append(
            group_chart(
                "Accuracy by workflow",
                series,
                "share of episodes",
                "First-answer and faithful accuracy of each workflow's episodes; bars: 95% "
                "Wilson interval.",
            )
        )
    if a.by_path:
        paths = _path_groups(a, several)
        charts.append(
            group_chart(
                "Accuracy by path",
                [(n, paths, r) for n, r in _ACCURACY],
                "share of episodes",
                "A branched workflow's episodes by the path their instance takes; bars: 95% "
                "Wilson interval.",
            )
        )
    return charts


def series_figures(
    position: int, name: str, a: AgentReport, fig: Figures, report: Report, price: Price | None
) -> str:
    """One agent's section: its headline figures, then its charts."""
    charts = _knob_charts(a, name, fig, report) + _group_charts(a, report)
    charts += horizon_figures(a)
    charts += step_charts(a)
    errors = (
        f" · {a.errored} errored ({', '.join(f'{k} {v}' for k, v in a.errors.items())}), "
        "counted in no figure"
        if a.errored
        else ""
    )
    o = a.overall
    head = (
        f"<p class='summary'>{o.n} scored episodes · first-answer accuracy {100 * o.accuracy:.1f}% "
        f"· faithful {100 * o.faithful_accuracy:.1f}% · unfaithful-correct "
        f"{100 * o.unfaithful_correct_rate:.1f}%{esc(errors)}</p>"
        f"<p class='tokens'>{esc(tokens_text(a.tokens, price))}</p>"
    )
    return (
        f"<section class='series' id='{series_id(position)}' aria-label='{esc(name)}'>"
        f"<h3>{esc(name)}</h3>{head}"
        f"<div class='charts'>{''.join(charts)}</div></section>"
    )


def comparison(report: Report) -> str:
    """The agents side by side, one series each: by length where lengths vary (not on a
    workflow suite), by workflow where the report holds several ("": neither, or one
    agent)."""
    if len(report.agents) < 2:
        return ""
    names = list(report.agents)
    charts = []
    if varies(report, "length") and not workflow_suite(report):
        charts += [
            line_chart(
                f"{title} by length",
                [_rate_line(n, report.agents[n].by_length, attr) for n in names],
                LENGTH,
                title.lower(),
                "series",
            )
            for title, attr in (
                ("First-answer accuracy", "accuracy"),
                ("Unfaithful-correct gap", "unfaithful_correct_rate"),
                ("Exact-step execution", "exact_step_rate"),
                ("Under-execution", "under_execution_rate"),
            )
        ]
    if len(workflows(report)) > 1:
        charts += [
            group_chart(
                f"{title} by workflow",
                [(n, report.agents[n].by_workflow, rate) for n in names],
                "share of episodes",
                f"{title} of each workflow's episodes, per agent; bars: 95% Wilson interval.",
            )
            for title, rate in (
                ("First-answer accuracy", "accuracy"),
                ("Faithful accuracy", "faithful_accuracy"),
            )
        ]
    if not charts:
        return ""
    return (
        "<section id='compare'><h2>Runs side by side</h2>"
        f"<div class='charts'>{''.join(charts)}</div></section>"
    )
