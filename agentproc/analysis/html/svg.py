"""Inline SVG charts: lines with 95% interval bands, stacked bars, a heat map, and the
one engine every chart of the report is drawn with (:class:`Plot`: scales, grid,
ticks, thinned or named, lines and staircases with their bands, points).

Hand-written SVG keeps the report one file with no dependency: every series has
a colour, a dash pattern and a marker shape, and every bar segment a fill
pattern, so a chart reads without colour; each point carries a ``<title>`` with
its value, interval and count. All text is escaped.
"""

# ruff: noqa: E501 (markup strings read better whole than split mid-attribute)

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

from agentproc.analysis.render.formats import pct

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")
"""Series colours (Tableau 10, colour-blind friendlier than a rainbow)."""
DASHES = ("", "6 3", "2 3", "8 3 2 3", "1 2", "10 4")
PATTERNS = ("solid", "hatch", "dots", "cross", "back", "vertical", "grid", "horizontal")

W, H = 460, 270
LEFT, RIGHT, TOP, BOTTOM = 48, 12, 28, 58
PW, PH = W - LEFT - RIGHT, H - TOP - BOTTOM
"""The plotting area's width and height."""


@dataclass(frozen=True)
class Point:
    """One value with its interval and count."""

    x: float
    y: float
    lo: float
    hi: float
    n: int


@dataclass(frozen=True)
class Line:
    """A named series of points."""

    name: str
    points: list[Point]


def esc(text: object) -> str:
    return escape(str(text), quote=True)


_MARKS = {
    "circle": '<circle r="3.5" fill="currentColor"/>',
    "square": '<rect x="-3.5" y="-3.5" width="7" height="7" fill="currentColor"/>',
    "triangle": '<path d="M0,-4.5L-4.5,3.5L4.5,3.5Z" fill="currentColor"/>',
    "diamond": '<path d="M0,-4.5L4.5,0L0,4.5L-4.5,0Z" fill="currentColor"/>',
    "cross": '<path d="M-3.5,-3.5L3.5,3.5M-3.5,3.5L3.5,-3.5" stroke="currentColor" stroke-width="2"/>',
    "star": '<circle r="3.5" fill="white" stroke="currentColor" stroke-width="2"/>',
}
"""Marker shapes, drawn once in :func:`pattern_defs` and placed with ``<use>``."""
MARKERS = tuple(_MARKS)


def _marker(i: int, x: float, y: float) -> str:
    """Series ``i``'s marker at (``x``, ``y``), in its colour."""
    mark = MARKERS[i % len(MARKERS)]
    return f'<use href="#m-{mark}" x="{x:.1f}" y="{y:.1f}" color="{PALETTE[i % len(PALETTE)]}"/>'


def _frame(
    title: str, body: str, label: str, legend: str, height: int = H, left: int = LEFT
) -> str:
    """A chart's figure: its SVG (``body`` under ``title``, from ``left``) and caption."""
    return (
        f'<figure class="chart"><svg role="img" aria-label="{esc(label)}" viewBox="0 0 {W} {height}" '
        f'width="{W}" height="{height}" xmlns="http://www.w3.org/2000/svg">'
        f'<text x="{left}" y="16" class="title">{esc(title)}</text>{body}</svg>'
        f"<figcaption>{legend}</figcaption></figure>"
    )


def _fill(i: int) -> str:
    """Segment ``i``'s fill: a colour and a pattern, no two segments alike."""
    return f"url(#p-{PATTERNS[(i + i // len(PALETTE)) % len(PATTERNS)]}-{i % len(PALETTE)})"


def _legend(keys: list[tuple[int, str]], swatch: Callable[[int], str]) -> str:
    """The keys ``(series index, name)``, each after its swatch."""
    return " ".join(f'<span class="key">{swatch(i)} {esc(name)}</span>' for i, name in keys)


def _line_swatch(i: int, marked: bool = True) -> str:
    return (
        f'<svg width="34" height="12" aria-hidden="true"><line x1="1" y1="6" x2="33" y2="6" '
        f'stroke="{PALETTE[i % len(PALETTE)]}" stroke-width="2" stroke-dasharray="{DASHES[i % len(DASHES)]}"/>'
        f"{_marker(i, 17, 6) if marked else ''}</svg>"
    )


def _bar_swatch(i: int) -> str:
    return f'<svg width="16" height="12" aria-hidden="true"><rect width="16" height="12" fill="{_fill(i)}" stroke="#333"/></svg>'


def _text(
    x: float | str, y: float | str, text: str, kind: str = "tick", anchor: str = "middle"
) -> str:
    """A text (already escaped) of class ``kind``: a tick, an axis title, a cell (a
    position given as text is written as it is)."""
    return f'<text x="{_at(x)}" y="{_at(y)}" class="{kind}" text-anchor="{anchor}">{text}</text>'


def _at(v: float | str) -> str:
    return v if isinstance(v, str) else f"{v:.1f}"


TICKS = 8
"""At most about this many labelled ticks along a thinned x axis (:func:`ticks`)."""


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
    return [first] + [
        x for x in range(int(step), int(last) + 1, int(step)) if x - first >= step / 2
    ]


Band = Sequence[tuple[float, float, float, float]]
"""A line with its band: ``(x, y, lower, upper)`` per point, in order of x."""


@dataclass(frozen=True, slots=True)
class Plot:
    """The plotting area of a chart, through which every chart is drawn: x from :attr:`x0`
    to :attr:`x1` (:attr:`pad` more on each side), y from 0 to :attr:`top`."""

    x0: float
    x1: float
    top: float = 1.0
    pad: float = 0.0
    height: int = H
    """The chart's height (taller below the axis to hold slanted tick names)."""
    whole: bool = False
    """The ticks' and titles' fixed positions written as whole pixels (``44``, not
    ``44.0``): the per-step figures' style."""

    def _fixed(self, v: int) -> float | str:
        return str(v) if self.whole else v

    def sx(self, x: float) -> float:
        return LEFT + (x - self.x0 + self.pad) / (self.x1 - self.x0 + 2 * self.pad) * PW

    def sy(self, y: float) -> float:
        return TOP + (1 - y / self.top) * PH

    def grid(self) -> str:
        """Horizontal grid lines and their ticks, from 0 to :attr:`top` in fifths."""
        parts = []
        for t in range(6):
            y = self.sy(self.top * t / 5)
            parts.append(
                f'<line x1="{LEFT}" y1="{y:.1f}" x2="{W - RIGHT}" y2="{y:.1f}" class="grid"/>'
                + _text(self._fixed(LEFT - 4), y + 3, f"{100 * self.top * t / 5:g}%", anchor="end")
            )
        return "".join(parts)

    def axes(
        self,
        at: Sequence[tuple[float, str]],
        x_label: str,
        y_label: str,
        slanted: bool = False,
        named: bool = False,
    ) -> str:
        """The grid, the x ticks ``(x, text already escaped)`` (``slanted``: set at an
        angle, read from the tick down to the left; ``named``: a name at the right edge
        ends at its tick) and both axes' titles."""
        parts = [self.grid()]
        for x, text in at:
            if slanted:
                y = H - BOTTOM + 10
                parts.append(
                    f'<text x="{self.sx(x):.1f}" y="{y}" class="tick" text-anchor="end" '
                    f'transform="rotate(-40 {self.sx(x):.1f} {y})">{text}</text>'
                )
            else:
                end = named and x == self.x1 and len(at) > 1
                parts.append(
                    _text(
                        self.sx(x),
                        self._fixed(H - BOTTOM + 14),
                        text,
                        anchor=("middle", "end")[end],
                    )
                )
        return "".join(parts) + (
            _text(LEFT + PW / 2, self._fixed(self.height - BOTTOM + 30), esc(x_label), "axis")
            + f'<text x="12" y="{TOP + PH / 2}" class="axis" text-anchor="middle" '
            f'transform="rotate(-90 12 {TOP + PH / 2})">{esc(y_label)}</text>'
        )

    def _path(self, points: Sequence[tuple[float, float]], staircase: bool) -> list[str]:
        out = []
        for j, (x, y) in enumerate(points):
            if staircase and j:  # hold the previous value up to this x
                out.append(f"{self.sx(x):.1f},{self.sy(points[j - 1][1]):.1f}")
            out.append(f"{self.sx(x):.1f},{self.sy(y):.1f}")
        return out

    def line(
        self, i: int, points: Band, dash: str | None, kind: str = "series", staircase: bool = False
    ) -> str:
        """Series ``i``'s line (or staircase) with its shaded band behind it."""
        colour = PALETTE[i % len(PALETTE)]
        upper = " ".join(self._path([(x, hi) for x, _, _, hi in points], staircase))
        lower = " ".join(reversed(self._path([(x, lo) for x, _, lo, _ in points], staircase)))
        path = " ".join(self._path([(x, y) for x, y, _, _ in points], staircase))
        dashes = "" if dash is None else f' stroke-dasharray="{dash}"'
        return (
            f'<polygon points="{upper} {lower}" fill="{colour}" fill-opacity="0.12" class="band"/>'
            f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"{dashes} class="{kind}"/>'
        )

    def point(self, i: int, tip: str, x: float, y: float, lo: float, hi: float) -> str:
        """Series ``i``'s marker at ``(x, y)``, its interval an error bar, ``tip`` its title."""
        at = self.sx(x)
        return (
            f'<g class="point"><title>{esc(tip)}</title>'
            f'<line x1="{at:.1f}" y1="{self.sy(lo):.1f}" x2="{at:.1f}" y2="{self.sy(hi):.1f}" '
            f'stroke="{PALETTE[i % len(PALETTE)]}" stroke-width="1"/>{_marker(i, at, self.sy(y))}</g>'
        )

    def dot(self, i: int, tip: str, x: float, y: float, r: float) -> str:
        """A dot of series ``i``'s colour at ``(x, y)``, ``tip`` its title."""
        return (
            f'<g class="point"><title>{esc(tip)}</title><circle cx="{self.sx(x):.1f}" '
            f'cy="{self.sy(y):.1f}" r="{r}" fill="{PALETTE[i % len(PALETTE)]}"/></g>'
        )


def span(xs: Sequence[float]) -> tuple[float, float]:
    """The x range of an axis over ``xs``: one unit each side of a single value."""
    x0, x1 = (min(xs), max(xs)) if xs else (0.0, 1.0)
    return (x0 - 1, x1 + 1) if x0 == x1 else (x0, x1)


def line_chart(
    title: str, lines: list[Line], x_label: str, y_label: str, legend_title: str = ""
) -> str:
    """Lines with a shaded 95% band and error bars at each point, every x value a tick."""
    xs = [p.x for line in lines for p in line.points]
    plot = Plot(*span(xs))
    body = [plot.axes([(x, f"{x:g}") for x in sorted(set(xs))], x_label, y_label)]
    for i, line in enumerate(lines):
        pts = sorted(line.points, key=lambda p: p.x)
        if not pts:
            continue
        body.append(plot.line(i, [(p.x, p.y, p.lo, p.hi) for p in pts], DASHES[i % len(DASHES)]))
        for p in pts:
            tip = f"{line.name}, {x_label} {p.x:g}: {pct(p.y)} [{pct(p.lo)}, {pct(p.hi)}], n={p.n}"
            body.append(plot.point(i, tip, p.x, p.y, p.lo, p.hi))
    names = [line.name for line in lines]
    head = f"<b>{esc(legend_title)}</b> " if legend_title else ""
    label = f"{title}: {', '.join(names)}"
    return _frame(title, "".join(body), label, head + _legend([*enumerate(names)], _line_swatch))


def pattern_defs() -> str:
    """The fill patterns of stacked bars (one per pattern and colour) and the series' markers,
    shared by every chart."""
    shapes = {
        "solid": "",
        "hatch": '<path d="M0,8L8,0" stroke="#000" stroke-opacity=".55" stroke-width="1.2"/>',
        "dots": '<circle cx="4" cy="4" r="1.4" fill="#000" fill-opacity=".6"/>',
        "cross": '<path d="M0,0L8,8M8,0L0,8" stroke="#000" stroke-opacity=".5"/>',
        "back": '<path d="M0,0L8,8" stroke="#000" stroke-opacity=".55" stroke-width="1.2"/>',
        "vertical": '<path d="M4,0L4,8" stroke="#000" stroke-opacity=".55"/>',
        "grid": '<path d="M4,0L4,8M0,4L8,4" stroke="#000" stroke-opacity=".5"/>',
        "horizontal": '<path d="M0,4L8,4" stroke="#000" stroke-opacity=".55"/>',
    }
    out = []
    for p, shape in enumerate(PATTERNS):
        for c, colour in enumerate(PALETTE):
            out.append(
                f'<pattern id="p-{shape}-{c}" width="8" height="8" patternUnits="userSpaceOnUse">'
                f'<rect width="8" height="8" fill="{colour}"/>{shapes[PATTERNS[p]]}</pattern>'
            )
    out += [f'<g id="m-{name}">{mark}</g>' for name, mark in _MARKS.items()]
    return f'<svg width="0" height="0" aria-hidden="true" style="position:absolute"><defs>{"".join(out)}</defs></svg>'


def stacked_bars(
    title: str, bars: dict[str, dict[str, int]], x_label: str, names: list[str]
) -> str:
    """One bar per key, stacked shares of each name (segments patterned and titled)."""
    keys = list(bars)
    body = [Plot(0.0, 1.0).grid()]
    step = PW / max(len(keys), 1)
    bw = min(36.0, step * 0.7)
    for b, key in enumerate(keys):
        total = sum(bars[key].values())
        x = LEFT + step * b + (step - bw) / 2
        y: float = TOP + PH
        for i, name in enumerate(names):
            count = bars[key].get(name, 0)
            if not count:
                continue
            h = PH * count / total
            y -= h
            fill = _fill(i)
            tip = f"{x_label} {key}: {name} {count} of {total} labels ({pct(count / total)})"
            body.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{bw:.1f}" height="{h:.1f}" fill="{fill}" '
                f'stroke="#fff" stroke-width=".5"><title>{esc(tip)}</title></rect>'
            )
        if not total:
            body.append(_text(x + bw / 2, TOP + PH - 4, "none"))
        body.append(_text(x + bw / 2, H - BOTTOM + 14, esc(key)))
    body.append(_text(LEFT + PW / 2, H - BOTTOM + 30, esc(x_label), "axis"))
    shown = [(i, name) for i, name in enumerate(names) if any(b.get(name) for b in bars.values())]
    return _frame(title, "".join(body), title, _legend(shown, _bar_swatch))


def heat_map(
    title: str, rows: dict[int, list[int]], totals: dict[int, int], columns: list[str]
) -> str:
    """Rows (look-backs) by columns (positions): the share of a row's episodes, written in each cell."""
    keys = sorted(rows)
    cw = PW / max(len(columns), 1)
    ch = min(24.0, PH / max(len(keys), 1))
    peak = max((c / max(totals.get(k, 1), 1) for k in keys for c in rows[k]), default=0) or 1
    body = []
    for r, key in enumerate(keys):
        y = TOP + r * ch
        body.append(_text(LEFT - 4, y + ch / 2 + 3, f"L={key}", anchor="end"))
        n = max(totals.get(key, 0), 1)
        for c, count in enumerate(rows[key]):
            share = count / n
            x = LEFT + c * cw
            tip = f"look-back {key}, {columns[c]}: {count} of {n} episodes ({pct(share)})"
            dark = share / peak > 0.55
            body.append(
                f'<g><title>{esc(tip)}</title><rect x="{x:.1f}" y="{y:.1f}" width="{cw - 1:.1f}" '
                f'height="{ch - 1:.1f}" fill="#b2182b" fill-opacity="{0.06 + 0.94 * share / peak:.3f}"/>'
                + _text(x + cw / 2, y + ch / 2 + 3, f"{100 * share:.0f}", f"cell{' dark' * dark}")
                + "</g>"
            )
    y = TOP + len(keys) * ch + 12
    body += [_text(LEFT + c * cw + cw / 2, y, esc(n)) for c, n in enumerate(columns)]
    where = "first divergence: from this % of the procedure on (ans: at the answer)"
    body.append(_text(LEFT + PW / 2, y + 16, where, "axis"))
    legend = "Each cell: % of that look-back's scored episodes whose first divergence falls there; darker is more."
    return _frame(title, "".join(body), title, esc(legend))
