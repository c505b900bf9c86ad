"""A figure of shares by named group (workflow, path): one row per group, each series a
marker with its 95% interval as a horizontal bar, for groups that have no order to
draw a line through (:func:`~agentproc.analysis.html.svg.line_chart` needs numbers
along x).

Series differ by colour and marker, as in every chart of the report; each point
carries a ``<title>`` with its value, interval and count; every text is escaped.
"""

# ruff: noqa: E501 (markup strings read better whole than split mid-attribute)

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agentproc.analysis.html.svg import PALETTE, W, _frame, _legend, _line_swatch, _marker, esc
from agentproc.analysis.measures.cells import CellStats
from agentproc.analysis.render.formats import pct

ROW = 24
"""Pixels per group."""
KEYS = 156
"""Pixels left of the plot for the groups' names."""
NAME_CHARS = 22
"""Characters of a group's name shown (a longer one is cut; its tooltip has it whole)."""
TOP, BOTTOM, RIGHT = 28, 36, 12


Series = tuple[str, Mapping[str, CellStats], str]
"""A series: its name, its statistics by group name, and the rate it shows of them."""


def group_chart(title: str, series: Sequence[Series], x_label: str, caption: str) -> str:
    """Each series' rate of each group (rows, in the order first met), with its 95%
    interval."""
    groups = list(dict.fromkeys(g for _, by, _ in series for g in by))
    pw = W - KEYS - RIGHT
    height = TOP + ROW * max(len(groups), 1) + BOTTOM

    def sx(v: float) -> float:
        return KEYS + v * pw

    body = []
    for t in range(6):
        x = sx(t / 5)
        body.append(
            f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{height - BOTTOM}" class="grid"/>'
            f'<text x="{x:.1f}" y="{height - BOTTOM + 14}" class="tick" text-anchor="middle">{20 * t}%</text>'
        )
    body.append(
        f'<text x="{KEYS + pw / 2:.1f}" y="{height - BOTTOM + 30}" class="axis" text-anchor="middle">{esc(x_label)}</text>'
    )
    several = len(series)
    for r, group in enumerate(groups):
        mid = TOP + ROW * r + ROW / 2
        shown = (
            group
            if len(group) <= NAME_CHARS
            else group[: NAME_CHARS - 1] + "\N{HORIZONTAL ELLIPSIS}"
        )
        body.append(
            f'<g><title>{esc(group)}</title><text x="{KEYS - 6}" y="{mid + 3:.1f}" class="tick" text-anchor="end">{esc(shown)}</text></g>'
        )
        for i, (name, by, rate) in enumerate(series):
            s = by.get(group)
            if s is None or not s.n:
                continue
            value, (lo, hi) = s.rate(rate)
            y = mid + (i - (several - 1) / 2) * min(6.0, (ROW - 8) / max(several, 1))
            tip = f"{name}, {group}: {pct(value)} [{pct(lo)}, {pct(hi)}], n={s.n}"
            colour = PALETTE[i % len(PALETTE)]
            body.append(
                f'<g class="point"><title>{esc(tip)}</title>'
                f'<line x1="{sx(lo):.1f}" y1="{y:.1f}" x2="{sx(hi):.1f}" y2="{y:.1f}" stroke="{colour}" stroke-width="1.5"/>'
                f"{_marker(i, sx(value), y)}</g>"
            )
    names = [name for name, _, _ in series]
    keys = _legend([*enumerate(names)], _line_swatch)
    label = f"{title}: {', '.join(names)}"
    return _frame(title, "".join(body), label, f"{keys}<br>{esc(caption)}", height, KEYS)
