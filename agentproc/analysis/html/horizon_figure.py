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

# ruff: noqa: E501 (markup strings read better whole than split mid-attribute)

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from agentproc.analysis.html.svg import (
    BOTTOM,
    DASHES,
    LEFT,
    PALETTE,
    PH,
    PW,
    TOP,
    H,
    _frame,
    _grid,
    _legend,
    _line_swatch,
    _marker,
    _text,
    esc,
)
from agentproc.analysis.measures.horizon import MEASURES, Horizon, Row
from agentproc.analysis.measures.report import AgentReport
from agentproc.analysis.stats.binomial import Rate, design_effect
from agentproc.analysis.stats.horizon_fit import penalised
from agentproc.analysis.stats.horizon_profile import band as fitted_band

BINS = 8
"""With more distinct lengths than this, lengths are binned in equal steps of log2."""
SAMPLES = 32
"""Points the fitted curve and its band are drawn through."""
TITLES = {"faithful": "faithful accuracy", "first_answer": "first-answer accuracy"}


def horizon_figures(a: AgentReport) -> list[str]:
    """One figure per measure of the agent's horizon (none without a horizon)."""
    if a.horizon is None:
        return []
    return [
        _figure(m, a.horizon.of[m], a.horizon.rows[m])
        for m in MEASURES
        if m in a.horizon.of and a.horizon.rows.get(m)
    ]


def bins(rows: Sequence[Row]) -> list[tuple[float, Rate]]:
    """The observed rate per bin of lengths: each length its own bin when there are at most
    :data:`BINS`, else equal steps of log2; each bin at the mean log2 of its scenarios'
    lengths, its interval with the design effect of their trials.

    >>> [(x, r.k, r.n) for x, r in bins([(4, 1, 2), (4, 2, 2), (8, 0, 2)])]
    [(2.0, 3, 4), (3.0, 0, 2)]
    """
    xs = sorted({math.log2(s) for s, _, _ in rows})
    if len(xs) <= BINS:
        key: Callable[[float], float] = lambda x: x  # noqa: E731
    else:
        lo, width = xs[0], (xs[-1] - xs[0]) / BINS
        key = lambda x: min(BINS - 1, int((x - lo) / width))  # noqa: E731
    groups: dict[float, list[Row]] = {}
    for row in rows:
        groups.setdefault(key(math.log2(row[0])), []).append(row)
    out = []
    for _, group in sorted(groups.items()):
        clusters = [(k, n) for _, k, n in group]
        k, n = sum(c for c, _ in clusters), sum(m for _, m in clusters)
        rate = Rate(k, n, design_effect(clusters), len(clusters)) if n > len(group) else Rate(k, n)
        x = sum(math.log2(s) for s, _, _ in group) / len(group)
        out.append((x, rate))
    return out


def band(rows: Sequence[Row], lo_x: float, hi_x: float) -> list[tuple[float, float, float, float]]:
    """The fitted curve and its pointwise 95% band over ``[lo_x, hi_x]`` (log2 lengths):
    ``(x, success, lower, upper)``, the band every success the profile of the penalised
    likelihood allows at that length (:func:`agentproc.analysis.stats.horizon_profile.band`), so
    it crosses a level where the horizon's interval ends."""
    xs = [lo_x + (hi_x - lo_x) * i / SAMPLES for i in range(SAMPLES + 1)]
    curve = fitted_band(penalised(rows), xs)
    # a higher eta is a lower success: the band's upper success is its lowest eta
    return [
        (x, _success(e), _success(hi), _success(lo))
        for x, (e, lo, hi) in zip(xs, curve, strict=True)
    ]


def _success(eta: float) -> float:
    return math.exp(-math.exp(min(max(eta, -700.0), 30.0)))


def _figure(measure: str, hs: Sequence[Horizon], rows: Sequence[Row]) -> str:
    title = f"Procedure horizon: {TITLES[measure]}"
    lo_x = math.log2(min(s for s, _, _ in rows))
    hi_x = math.log2(max(s for s, _, _ in rows))
    pad = (hi_x - lo_x) * 0.04

    def sx(x: float) -> float:
        return LEFT + (x - lo_x + pad) / (hi_x - lo_x + 2 * pad) * PW

    def sy(y: float) -> float:
        return TOP + (1 - y) * PH

    body = [_grid(), *_ticks(rows, sx)]
    colour = PALETTE[0]
    curve = band(rows, lo_x, hi_x)
    upper = " ".join(f"{sx(x):.1f},{sy(hi):.1f}" for x, _, _, hi in curve)
    lower = " ".join(f"{sx(x):.1f},{sy(lo):.1f}" for x, _, lo, _ in reversed(curve))
    body.append(
        f'<polygon points="{upper} {lower}" fill="{colour}" fill-opacity="0.12" class="band"/>'
    )
    path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y, _, _ in curve)
    body.append(
        f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2" class="series fit"/>'
    )
    body += [_point(x, r, sx, sy) for x, r in bins(rows)]
    body += [_mark(h, i, sx, sy, lo_x, hi_x) for i, h in enumerate(hs)]
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


def _ticks(rows: Sequence[Row], sx: Callable[[float], float]) -> list[str]:
    """The tested lengths under the axis (at most 9 of them, evenly picked), and its title."""
    lengths = sorted({s for s, _, _ in rows})
    if len(lengths) > 9:
        lengths = [lengths[round(i * (len(lengths) - 1) / 8)] for i in range(9)]
    out = [_text(sx(math.log2(s)), H - BOTTOM + 14, f"{s}") for s in lengths]
    out.append(
        _text(LEFT + PW / 2, H - BOTTOM + 30, "procedure length N (steps, log2 scale)", "axis")
        + f'<text x="12" y="{TOP + PH / 2}" class="axis" text-anchor="middle" '
        f'transform="rotate(-90 12 {TOP + PH / 2})">share of episodes</text>'
    )
    return out


def _point(x: float, r: Rate, sx: Callable[[float], float], sy: Callable[[float], float]) -> str:
    lo, hi = r.ci
    tip = (
        f"length {2**x:.3g}: {100 * r.value:.1f}% [{100 * lo:.1f}%, {100 * hi:.1f}%], "
        f"{r.k} of {r.n} episodes"
    )
    colour = PALETTE[1]
    return (
        f'<g class="point"><title>{esc(tip)}</title>'
        f'<line x1="{sx(x):.1f}" y1="{sy(lo):.1f}" x2="{sx(x):.1f}" y2="{sy(hi):.1f}" '
        f'stroke="{colour}" stroke-width="1"/>{_marker(1, sx(x), sy(r.value))}</g>'
    )


def _mark(
    h: Horizon,
    i: int,
    sx: Callable[[float], float],
    sy: Callable[[float], float],
    lo_x: float,
    hi_x: float,
) -> str:
    """The level as a dashed line; the horizon as a drop line with its interval along the
    level, or the words that say it is out of the tested lengths (with its one bound
    along the level when that lies within them), or that there is none."""
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
