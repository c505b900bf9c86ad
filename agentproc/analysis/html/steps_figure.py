"""The per-step figures of an agent in the HTML report: accuracy of a step by its
position, the Kaplan-Meier curve of still being on the procedure (a staircase, with its
log-log band), the hazard per step, and the observed self-conditioning by position bin
(:mod:`~agentproc.analysis.measures.steps`).

Drawn here rather than with :func:`~agentproc.analysis.html.svg.line_chart`, whose
x axis labels every value: a procedure of 95 steps needs its ticks thinned, and a
survival curve is a staircase, not a polyline. A declared workflow's steps are labelled
by the variable each defines (slanted, up to :data:`NAMED` of them), and each point's
tooltip names the step by its tool too. Each point carries a ``<title>`` with its
value, interval and count; every text is escaped.
"""

# ruff: noqa: E501 (markup strings read better whole than split mid-attribute)

from __future__ import annotations

import math

from agentproc.analysis.html.svg import (
    BOTTOM,
    DASHES,
    LEFT,
    PALETTE,
    PH,
    PW,
    RIGHT,
    TOP,
    H,
    Line,
    Point,
    W,
    esc,
)
from agentproc.analysis.measures.report import AgentReport
from agentproc.analysis.measures.step_names import StepNames, median_text, step_text
from agentproc.analysis.measures.steps import PerStep
from agentproc.analysis.render.formats import pct

TICKS = 8
"""At most about this many labelled ticks along x."""
NAMED = 30
"""A workflow of at most this many steps has each labelled by name (more: by number)."""
SLANT = 50
"""Pixels a chart grows by below its axis to hold slanted names."""
NAME_CHARS = 14
"""Characters of a name on an axis (a longer one is cut with an ellipsis; its tooltip
has it whole)."""


def ticks(first: float, last: float) -> list[float]:
    """Round x values from ``first`` to ``last``, at most about :data:`TICKS` of them.

    >>> ticks(1, 95)
    [1, 20, 40, 60, 80]
    >>> ticks(1, 5)
    [1, 2, 3, 4, 5]
    """
    span = last - first
    if span <= TICKS:
        return [first + i for i in range(int(span) + 1)]
    raw = span / TICKS
    step = min(
        m * 10**e for e in range(int(math.log10(raw)) + 2) for m in (1, 2, 5) if m * 10**e >= raw
    )
    out = [first] + [x for x in range(int(step), int(last) + 1, int(step)) if x - first >= step / 2]
    return out


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
    height = H + SLANT if slanted else H
    xs = [p.x for line in lines for p in line.points]
    x0, x1 = (min(xs), max(xs)) if xs else (0.0, 1.0)
    if x0 == x1:
        x0, x1 = x0 - 1, x1 + 1
    top = y_top(lines, fit)

    def sx(x: float) -> float:
        return LEFT + (x - x0) / (x1 - x0) * PW

    def sy(y: float) -> float:
        return TOP + (1 - y / top) * PH

    body = []
    for t in range(6):
        y = sy(top * t / 5)
        body.append(
            f'<line x1="{LEFT}" y1="{y:.1f}" x2="{W - RIGHT}" y2="{y:.1f}" class="grid"/>'
            f'<text x="{LEFT - 4}" y="{y + 3:.1f}" class="tick" text-anchor="end">{100 * top * t / 5:g}%</text>'
        )
    where = sorted(names) if names is not None else ticks(min(xs), max(xs)) if xs else []
    for x in where:
        text = esc(_cut(names[x]) if slanted else names[x]) if names is not None else f"{x:g}"
        if slanted:  # read from the tick down to the left
            y = H - BOTTOM + 10
            body.append(
                f'<text x="{sx(x):.1f}" y="{y}" class="tick" text-anchor="end" '
                f'transform="rotate(-40 {sx(x):.1f} {y})">{text}</text>'
            )
            continue
        anchor = "end" if names is not None and x == x1 and len(where) > 1 else "middle"
        body.append(
            f'<text x="{sx(x):.1f}" y="{H - BOTTOM + 14}" class="tick" text-anchor="{anchor}">{text}</text>'
        )
    body.append(
        f'<text x="{LEFT + PW / 2:.1f}" y="{height - BOTTOM + 30}" class="axis" text-anchor="middle">{esc(x_label)}</text>'
        f'<text x="12" y="{TOP + PH / 2}" class="axis" text-anchor="middle" transform="rotate(-90 12 {TOP + PH / 2})">{esc(y_label)}</text>'
    )
    keys = []
    for i, line in enumerate(lines):
        colour, pts = PALETTE[i % len(PALETTE)], sorted(line.points, key=lambda p: p.x)
        if not pts:
            continue

        def path(values: list[tuple[float, float]]) -> str:
            out = []
            for j, (x, y) in enumerate(values):
                if staircase and j:  # hold the previous value up to this step
                    out.append(f"{sx(x):.1f},{sy(values[j - 1][1]):.1f}")
                out.append(f"{sx(x):.1f},{sy(y):.1f}")
            return " ".join(out)

        upper = path([(p.x, p.hi) for p in pts])
        lower = " ".join(reversed(path([(p.x, p.lo) for p in pts]).split(" ")))
        body.append(
            f'<polygon points="{upper} {lower}" fill="{colour}" fill-opacity="0.12" class="band"/>'
        )
        body.append(
            f'<polyline points="{path([(p.x, p.y) for p in pts])}" fill="none" stroke="{colour}" '
            f'stroke-width="2" stroke-dasharray="{DASHES[i % len(DASHES)]}" class="series"/>'
        )
        for p in pts:
            at = (tips or names or {}).get(p.x, f"{p.x:g}")
            tip = f"{line.name}, {x_label} {at}: {pct(p.y)} [{pct(p.lo)}, {pct(p.hi)}], n={p.n}"
            body.append(
                f'<g class="point"><title>{esc(tip)}</title><circle cx="{sx(p.x):.1f}" cy="{sy(p.y):.1f}" '
                f'r="{2.5 if len(pts) > 30 else 3.5}" fill="{colour}"/></g>'
            )
        keys.append(
            f'<span class="key"><svg width="34" height="12" aria-hidden="true"><line x1="1" y1="6" x2="33" y2="6" '
            f'stroke="{colour}" stroke-width="2" stroke-dasharray="{DASHES[i % len(DASHES)]}"/></svg> {esc(line.name)}</span>'
        )
    label = f"{title}: {', '.join(line.name for line in lines)}"
    return (
        f'<figure class="chart"><svg role="img" aria-label="{esc(label)}" viewBox="0 0 {W} {height}" '
        f'width="{W}" height="{height}" xmlns="http://www.w3.org/2000/svg">'
        f'<text x="{LEFT}" y="16" class="title">{esc(title)}</text>{"".join(body)}</svg>'
        f"<figcaption>{' '.join(keys)}<br>{esc(caption)}</figcaption></figure>"
    )


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
