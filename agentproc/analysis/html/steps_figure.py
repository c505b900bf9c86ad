"""The per-step figures of an agent in the HTML report: accuracy of a step by its
position, the Kaplan-Meier curve of still being on the procedure (a staircase, with its
log-log band), the hazard per step, and the observed self-conditioning by position bin
(:mod:`~agentproc.analysis.measures.steps`).

Drawn with the report's chart engine (:class:`~agentproc.analysis.html.svg.Plot`), not
:func:`~agentproc.analysis.html.svg.line_chart`, whose x axis labels every value: a
procedure of 95 steps needs its ticks thinned, a survival curve is a staircase, and a
small rate gets a short y axis. A declared workflow's steps are labelled
by the variable each defines (slanted, up to :data:`NAMED` of them), and each point's
tooltip names the step by its tool too. Each point carries a ``<title>`` with its
value, interval and count; every text is escaped.
"""

# ruff: noqa: E501 (markup strings read better whole than split mid-attribute)

from __future__ import annotations

from agentproc.analysis.html.svg import (
    DASHES,
    H,
    Line,
    Plot,
    Point,
    _frame,
    _legend,
    _line_swatch,
    esc,
    span,
    ticks,
)
from agentproc.analysis.measures.report import AgentReport
from agentproc.analysis.measures.step_names import StepNames, median_text, step_text
from agentproc.analysis.measures.steps import PerStep
from agentproc.analysis.render.formats import pct

NAMED = 30
"""A workflow of at most this many steps has each labelled by name (more: by number)."""
SLANT = 50
"""Pixels a chart grows by below its axis to hold slanted names."""
NAME_CHARS = 14
"""Characters of a name on an axis (a longer one is cut with an ellipsis; its tooltip
has it whole)."""


SCALES = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
"""The tops a rate's y axis may have: small rates (a hazard of 2%) get a short axis."""


def y_top(lines: list[Line], fit: bool) -> float:
    """The top of the y axis: 100%, or with ``fit`` the least of :data:`SCALES` that holds
    every point's upper bound.

    >>> y_top([Line("a", [Point(1, 0.01, 0.0, 0.03, 9)])], fit=True)
    0.05
    """
    if not fit:
        return 1.0
    high = max((p.hi for line in lines for p in line.points), default=1.0)
    return next(top for top in SCALES if top >= high - 1e-12)


def chart(
    title: str,
    lines: list[Line],
    x_label: str,
    y_label: str,
    caption: str,
    staircase: bool = False,
    fit: bool = False,
    names: dict[float, str] | None = None,
    slanted: bool = False,
    tips: dict[float, str] | None = None,
) -> str:
    """Lines (or staircases) each with its shaded 95% band, over a 0-100% axis (with
    ``fit``, over 0 to the least of :data:`SCALES` that holds them); ``names``: the x
    values' tick labels, when they are categories (``slanted``: set at an angle, the
    chart taller to hold them); ``tips``: how a point's tooltip names its x value."""
    xs = [p.x for line in lines for p in line.points]
    plot = Plot(*span(xs), top=y_top(lines, fit), height=H + SLANT if slanted else H, whole=True)
    if names is None:
        at = [(x, f"{x:g}") for x in (ticks(min(xs), max(xs)) if xs else [])]
    else:
        at = [(x, esc(_cut(names[x]) if slanted else names[x])) for x in sorted(names)]
    body = [plot.axes(at, x_label, y_label, slanted, names is not None)]
    for i, line in enumerate(lines):
        pts = sorted(line.points, key=lambda p: p.x)
        band = [(p.x, p.y, p.lo, p.hi) for p in pts]
        body.append(plot.line(i, band, DASHES[i % len(DASHES)], staircase=staircase) if pts else "")
        for p in pts:
            where = (tips or names or {}).get(p.x, f"{p.x:g}")
            tip = f"{line.name}, {x_label} {where}: {pct(p.y)} [{pct(p.lo)}, {pct(p.hi)}], n={p.n}"
            body.append(plot.dot(i, tip, p.x, p.y, 2.5 if len(pts) > 30 else 3.5))
    keys = _legend([(i, line.name) for i, line in enumerate(lines) if line.points], _unmarked)
    label = f"{title}: {', '.join(line.name for line in lines)}"
    return _frame(title, "".join(body), label, f"{keys}<br>{esc(caption)}", plot.height)


def _unmarked(i: int) -> str:
    return _line_swatch(i, marked=False)


def _cut(name: str) -> str:
    return name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 1] + "\N{HORIZONTAL ELLIPSIS}"


def _axis(names: StepNames) -> tuple[dict[float, str] | None, dict[float, str] | None]:
    """How the per-step charts label a workflow's steps: the ticks, each the variable its
    step defines, and the tooltips, each the step by its tool too; ``None`` for a
    procedure's steps (by number) or a workflow of more than :data:`NAMED` steps."""
    if not names or len(names) > NAMED:
        return None, None
    ticks = {float(k): n.output for k, n in names.items()}
    return ticks, {float(k): step_text(k, names) for k in names}


def step_charts(a: AgentReport) -> list[str]:
    """The four per-step figures of an agent (none without a scored episode)."""
    ps: PerStep | None = a.per_step
    if ps is None:
        return []
    accuracy = [Point(k, r.value, *r.ci, r.n) for k, r, _ in ps.accuracy]
    start = ps.survival.points[0].at_risk if ps.survival.points else 0
    survival = [Point(0, 1.0, 1.0, 1.0, start)] + [  # every episode is on it before step 1
        Point(
            p.step,
            p.survival,
            p.survival if p.low is None else p.low,
            p.survival if p.high is None else p.high,
            p.at_risk,
        )
        for p in ps.survival.points
    ]
    hazard = [Point(t, r.value, *r.ci, r.n) for t, r in ps.hazard if r.n]
    bins = ps.self_conditioning.bins
    after = [
        Point(i, b.after_error.value, *b.after_error.ci, b.after_error.n)
        for i, b in enumerate(bins)
        if b.after_error.n
    ]
    clean = [
        Point(i, b.clean.value, *b.clean.ci, b.clean.n) for i, b in enumerate(bins) if b.clean.n
    ]
    names = {
        float(i): str(b.first) if b.first == b.last else f"{b.first}-{b.last}"
        for i, b in enumerate(bins)
    }
    ticks, tips = _axis(a.step_names)
    x_label = "step of the procedure" if ticks is None else "step of the workflow"
    band = (
        "Greenwood's"
        if ps.survival.variance == "greenwood"
        else "cluster-robust (scenarios of trials)"
    )
    return [
        chart(
            "Accuracy of a step by its position",
            [Line("first run not in error", accuracy)],
            x_label,
            "share of executed steps",
            "Of the steps that ran at each position; band: 95% Wilson interval.",
            names=ticks,
            slanted=ticks is not None,
            tips=tips,
        ),
        chart(
            "Still on the procedure, by step",
            [Line("Kaplan-Meier", survival)],
            x_label,
            "share still on the procedure",
            f"Censored at the end of shorter procedures; median step of leaving "
            f"{median_text(ps.survival.median, a.step_names)}; band: 95%, log-log, {band}.",
            staircase=True,
            names=ticks,
            slanted=ticks is not None,
            tips=tips,
        ),
        chart(
            "Hazard of leaving the procedure, by step",
            [Line("left at this step", hazard)],
            x_label,
            "share of those still on it",
            "Episodes that left at a step, of those on the procedure until then; band: 95% Wilson interval.",
            fit=True,
            names=ticks,
            slanted=ticks is not None,
            tips=tips,
        ),
        chart(
            "Error rate after an error and after a clean history",
            [Line("after an error", after), Line("clean history", clean)],
            "steps of the procedure",
            "share of steps in error",
            "Observational: episodes that err early may be harder throughout. Band: 95% Wilson interval over scenarios.",
            fit=True,
            names=names,
        ),
    ]
