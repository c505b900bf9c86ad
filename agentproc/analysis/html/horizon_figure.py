"""The procedure horizon as a figure of the HTML report, one per agent and measure.

Success (faithful accuracy, or first-answer accuracy) against the procedure's length on
a log2 axis: the observed rate of each bin of lengths with its 95% interval (Wilson's
on the effective number of episodes, as the report's rates), the fitted curve of
:mod:`agentproc.analysis.measures.horizon` with its pointwise 95% band (the profile of the
penalised likelihood), and the 50% and 80% horizons marked, each with its interval
(where the band crosses the level, when success falls with length). Drawn over the
tested lengths only: a horizon out of them is written, ``beyond N (the longest
tested)`` or ``below N (the shortest tested)``, and where success is not shown to fall
``no horizon``, never drawn past the data.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from agentproc.analysis.html.svg import (
    DASHES,
    PALETTE,
    Plot,
    _frame,
    _legend,
    _line_swatch,
    _marker,
    _text,
    esc,
)
from agentproc.analysis.measures.horizon import MEASURES, Horizon, HorizonFit
from agentproc.analysis.measures.report import AgentReport

SAMPLES = 32
"""Points the fitted curve and its band are drawn through."""
TITLES = {"faithful": "faithful accuracy", "first_answer": "first-answer accuracy"}
LENGTHS = 9
"""At most this many tested lengths are labelled along x (evenly picked)."""


def horizon_figures(a: AgentReport) -> list[str]:
    """One figure per measure of the agent's horizon (none without a horizon)."""
    if a.horizon is None:
        return []
    fits = a.horizon.fits
    return [_figure(m, a.horizon.of[m], fits[m]) for m in MEASURES if m in fits and fits[m].rows]


def _figure(measure: str, hs: Sequence[Horizon], fit: HorizonFit) -> str:
    title = f"Procedure horizon: {TITLES[measure]}"
    lo_x, hi_x = math.log2(fit.shortest), math.log2(fit.longest)
    plot = Plot(lo_x, hi_x, pad=(hi_x - lo_x) * 0.04)
    lengths = sorted({s for s, _, _ in fit.rows})
    if len(lengths) > LENGTHS:
        lengths = [lengths[round(i * (len(lengths) - 1) / (LENGTHS - 1))] for i in range(LENGTHS)]
    at = [(math.log2(s), f"{s}") for s in lengths]
    body = [plot.axes(at, "procedure length N (steps, log2 scale)", "share of episodes")]
    body.append(plot.line(0, fit.band(SAMPLES), None, "series fit"))
    for x, r in fit.observed():
        lo, hi = r.ci
        tip = (
            f"length {2**x:.3g}: {100 * r.value:.1f}% [{100 * lo:.1f}%, {100 * hi:.1f}%], "
            f"{r.k} of {r.n} episodes"
        )
        body.append(plot.point(1, tip, x, r.value, lo, hi))
    body += [_mark(h, i, plot, lo_x, hi_x) for i, h in enumerate(hs)]
    label = f"{title}: " + "; ".join(f"{100 * h.level:.0f}%: {h.text()}" for h in hs)
    legend = _legend([(0, "fitted curve, 95% band")], _line_swatch) + _legend(
        [(1, "observed per length, 95% interval")], _point_swatch
    )
    said = "<br>".join(
        f"<span class='horizon'>{100 * h.level:.0f}% horizon: {esc(h.text())}</span>" for h in hs
    )
    return _frame(title, "".join(body), label, f"{legend}<br>{said}")


def _point_swatch(i: int) -> str:
    """A point with its error bar, not joined to the next (the bins are not a curve)."""
    return (
        f'<svg width="34" height="12" aria-hidden="true"><line x1="17" y1="0" x2="17" y2="12" '
        f'stroke="{PALETTE[i % len(PALETTE)]}" stroke-width="1"/>{_marker(i, 17, 6)}</svg>'
    )


def _mark(h: Horizon, i: int, plot: Plot, lo_x: float, hi_x: float) -> str:
    """The level as a dashed line; the horizon as a drop line with its interval along the
    level, or the words that say it is out of the tested lengths (with its one bound
    along the level when that lies within them), or that there is none."""
    sx, sy = plot.sx, plot.sy
    y = sy(h.level)
    dash = DASHES[(i + 1) % len(DASHES)]
    level = f"{100 * h.level:.0f}%"
    parts = [
        f'<line x1="{sx(lo_x):.1f}" y1="{y:.1f}" x2="{sx(hi_x):.1f}" y2="{y:.1f}" '
        f'stroke="#555" stroke-dasharray="{dash}" class="level"/>'
    ]
    if h.steps is None:
        where = h.head() if h.claimed else "no horizon (success not shown to fall)"
        anchor, x = ("end", sx(hi_x)) if h.beyond else ("start", sx(lo_x))
        parts.append(_text(x, y - 5, esc(f"{level}: {where}"), "tick horizon-out", anchor))
        bound = h.low if h.beyond else h.high
        if h.claimed and bound is not None and h.shortest < bound < h.longest:
            edge = sx(hi_x) if h.beyond else sx(lo_x)
            parts.append(
                f'<line x1="{sx(math.log2(bound)):.1f}" y1="{y:.1f}" x2="{edge:.1f}" '
                f'y2="{y:.1f}" stroke="#000" stroke-width="4" stroke-opacity=".35" '
                'class="horizon-ci"/>'
            )
        return f'<g class="horizon-mark"><title>{esc(h.text())}</title>{"".join(parts)}</g>'
    x = sx(math.log2(h.steps))
    low = sx(lo_x if h.low is None else math.log2(h.low))
    high = sx(hi_x if h.high is None else math.log2(h.high))
    parts += [
        f'<line x1="{low:.1f}" y1="{y:.1f}" x2="{high:.1f}" y2="{y:.1f}" stroke="#000" '
        f'stroke-width="4" stroke-opacity=".35" class="horizon-ci"/>',
        f'<line x1="{x:.1f}" y1="{y:.1f}" x2="{x:.1f}" y2="{sy(0):.1f}" stroke="#000" '
        f'stroke-dasharray="3 2" class="horizon-at"/>',
        _text(x + 4, y - 5, esc(f"{level}: {h.steps:.3g} steps"), "tick", "start"),
    ]
    return f'<g class="horizon-mark"><title>{esc(h.text())}</title>{"".join(parts)}</g>'
