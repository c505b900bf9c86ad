"""Assemble the self-contained HTML report: figures, the cell table, the episode
table and the drill-down, with the data embedded as inert JSON.

Nothing is fetched: styles and script are inline, a Content-Security-Policy
forbids every network request, and every text a run file supplies reaches the
page either escaped here or through ``textContent`` in the script.
"""

# ruff: noqa: E501 (markup strings read better whole than split mid-attribute)

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentproc.analysis.cell_stats import HEADLINE_RATES, STUDY_RATES, CellStats, Rate
from agentproc.analysis.html.figures import BINS, Figures
from agentproc.analysis.html.horizon_figure import horizon_figures
from agentproc.analysis.html.steps_figure import step_charts
from agentproc.analysis.html.summary import rate_cell, series_id, sortable_head, summary_section
from agentproc.analysis.html.svg import (
    Line,
    Point,
    esc,
    heat_map,
    line_chart,
    pattern_defs,
    stacked_bars,
)
from agentproc.analysis.report import AgentReport, Report
from agentproc.analysis.tokens import Price, tokens_text
from agentproc.labelling import LabelKind

ASSETS = Path(__file__).parent
CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)


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


_LENGTH = "procedure length N"
_PAIR_CHARTS = (  # (title, knob along x, lines by, faithful?)
    ("First-answer accuracy by length", _LENGTH, "look-back", False),
    ("Faithful accuracy by length", _LENGTH, "look-back", True),
    ("First-answer accuracy by look-back", "look-back L", "length", False),
    ("Faithful accuracy by look-back", "look-back L", "length", True),
)


def _series_figures(
    position: int, name: str, a: AgentReport, fig: Figures, price: Price | None = None
) -> str:
    charts = [
        line_chart(
            title,
            _by_pairs(a, by, faithful),
            x_label,
            "faithful accuracy" if faithful else "first-answer accuracy",
            by,
        )
        for title, x_label, by, faithful in _PAIR_CHARTS
    ]
    execution = ("exact-step", "under-execution", "over-execution")
    charts += [
        line_chart(
            "Unfaithful-correct gap by length",
            [_rate_line(name, a.by_length, "unfaithful_correct_rate")],
            _LENGTH,
            "accuracy minus faithful accuracy",
        ),
        line_chart(
            "Execution by length",
            [_rate_line(k, a.by_length, f"{k.replace('-', '_')}_rate") for k in execution],
            _LENGTH,
            "share of episodes",
        ),
        stacked_bars(
            "Label mix by length",
            {
                str(n): {k.value: c for k, c in s.label_counts.items() if c}
                for n, s in a.by_length.items()
            },
            _LENGTH,
            [k.value for k in LabelKind],
        ),
        heat_map(
            "Where the first divergence happens",
            fig.divergence.get(name, {}),
            {lookback: s.n for lookback, s in a.by_lookback.items()},
            [f"{100 * i // BINS}%" for i in range(BINS)] + ["ans"],
        ),
    ]
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


def _comparison(report: Report) -> str:
    if len(report.agents) < 2:
        return ""
    names = list(report.agents)
    charts = [
        line_chart(
            f"{title} by length",
            [_rate_line(n, report.agents[n].by_length, attr) for n in names],
            _LENGTH,
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
    return (
        "<section id='compare'><h2>Runs side by side</h2>"
        f"<div class='charts'>{''.join(charts)}</div></section>"
    )


_CELL_COLUMNS = (
    ("series", "text"),
    ("cell", "text"),
    ("N", "num"),
    ("L", "num"),
    ("dist", "num"),
    ("n", "num"),
    ("accuracy", "num"),
    ("faithful", "num"),
    ("unfaithful-correct", "num"),
    ("exact-step", "num"),
    ("under", "num"),
    ("over", "num"),
    ("most frequent label", "text"),
)


_CELL_RATES = (*HEADLINE_RATES, "exact_step_rate", "under_execution_rate", "over_execution_rate")


def _dist_cell(realised: int | None) -> str:
    """The farthest realised look-back of a cell (``—`` when its run file does not record
    it; sorted below every distance)."""
    if realised is None:
        return "<td data-v='-1'>—</td>"
    return f"<td data-v='{realised}'>{realised}</td>"


def _cell_table(report: Report) -> str:
    head = sortable_head((esc(c), t) for c, t in _CELL_COLUMNS)
    rows = []
    for name, a in report.agents.items():
        for key, s in a.by_cell.items():
            top = max(s.label_counts.items(), key=lambda kv: kv[1], default=(None, 0))
            rows.append(
                f"<tr><td>{esc(name)}</td><td>{esc(key.cell)}</td>"
                f"<td data-v='{key.steps}'>{key.steps}</td><td data-v='{key.lookback}'>{key.lookback}</td>"
                + _dist_cell(s.realised_max)
                + f"<td data-v='{s.n}'>{s.n}</td>"
                + "".join(rate_cell(*s.rate(r)) for r in _CELL_RATES)
                + f"<td>{esc(f'{top[0].value} ({top[1]})' if top[0] is not None and top[1] else '—')}</td></tr>"
            )
    return (
        "<section id='cells'><h2>Grid cells</h2><p class='hint'>Select a column heading to sort "
        "(again to reverse). Percentages with their 95% Wilson interval; dist: the realised "
        "look-back, the farthest any operand variable lies from the variable it defines.</p>"
        f"<div class='scroll'><table id='cell-table' class='sortable'><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div></section>"
    )


_PATH_COLUMNS = (
    ("series", "text"),
    ("path", "text"),
    ("n", "num"),
    ("accuracy", "num"),
    ("faithful", "num"),
    ("unfaithful-correct", "num"),
)


def _path_table(report: Report) -> str:
    """A branched workflow's accuracy by path ("": no agent's episodes have paths)."""
    rows = [
        f"<tr><td>{esc(name)}</td><td>{esc(path)}</td><td data-v='{s.n}'>{s.n}</td>"
        + "".join(rate_cell(*s.rate(r)) for r in HEADLINE_RATES)
        + "</tr>"
        for name, a in report.agents.items()
        for path, s in a.by_path.items()
    ]
    if not rows:
        return ""
    head = sortable_head((esc(c), t) for c, t in _PATH_COLUMNS)
    return (
        "<section id='paths'><h2>Paths</h2><p class='hint'>A branched workflow's episodes "
        "by the path their instance takes: the conditional steps it requires and the exit "
        "that fires (base: none of either). Percentages with their 95% Wilson interval.</p>"
        f"<div class='scroll'><table id='path-table' class='sortable'><thead><tr>{head}</tr>"
        f"</thead><tbody>{''.join(rows)}</tbody></table></div></section>"
    )


_SCRIPT_SAFE = str.maketrans({c: f"\\u{ord(c):04x}" for c in "<>&\u2028\u2029"})
"""The characters that could end a ``<script>`` element or open markup, as JSON escapes."""


def _json_for_script(data: Any) -> str:
    """JSON that cannot end its ``<script>`` element or open markup."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return text.translate(_SCRIPT_SAFE)


def _rest_hint(runs: list[str]) -> str:
    """How to see an episode whose drill-down is not embedded."""
    run = runs[0] if len(runs) == 1 else "RUN"
    return (
        " (the file keeps its size bounded; see any other episode with "
        f"<code>agentproc replay {esc(run)} --episode ID</code>)"
    )


def render_page(
    report: Report,
    fig: Figures,
    rows: dict[str, Any],
    details: dict[str, Any],
    runs: list[str],
    warnings: list[str],
    price: Price | None = None,
    lead: tuple[str, str, str] | None = None,
) -> str:
    """The whole report as one HTML document (tokens costed at ``price``, when given);
    ``lead`` (a title, a section's id and its HTML) comes first, before the report's own
    sections (``compare --html`` leads with the comparison)."""
    title, lead_id, lead_html = lead or ("agentproc report", "", "")
    css = (ASSETS / "report.css").read_text(encoding="utf-8")
    js = (ASSETS / "report.js").read_text(encoding="utf-8")
    series = "".join(
        _series_figures(i, n, a, fig, price) for i, (n, a) in enumerate(report.agents.items())
    )
    n_episodes = len(rows["id"])
    notes = "".join(f"<li>{esc(w)}</li>" for w in warnings)
    data = {"rows": rows, "details": details, "runs": runs, "study_rates": list(STUDY_RATES)}
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{esc(title)}: {esc(', '.join(runs))}</title><style>{css}</style></head><body>"
        f"{pattern_defs()}<header><h1>{esc(title)}</h1>"
        f"<p>{esc(', '.join(runs))} · {n_episodes} episodes · {report.episodes} scored"
        f"{f' · {report.errored} errored (counted in no figure)' if report.errored else ''}"
        f" · drill-down embedded for {len(details)} of {n_episodes}"
        f"{_rest_hint(runs) if len(details) < n_episodes else ''}</p>"
        f"{f'<ul class=warnings>{notes}</ul>' if notes else ''}"
        f"<nav>{f'<a href=#{lead_id}>Comparison</a> ' if lead_id else ''}"
        "<a href='#summary'>At a glance</a> "
        f"{'<a href=#compare>Side by side</a> ' if len(report.agents) > 1 else ''}"
        "<a href='#figures'>Per agent</a> <a href='#cells'>Grid cells</a> "
        "<a href='#episodes'>Episodes</a></nav></header><main>"
        f"{lead_html}{summary_section(report, fig)}{_comparison(report)}"
        f"<section id='figures'><h2>Per agent</h2><p class='hint'>Bands and bars: 95% Wilson "
        f"intervals. Hover a point for its value and count.</p>{series}</section>"
        f"{_cell_table(report)}{_path_table(report)}"
        "<section id='episodes'><h2>Episodes</h2><div id='filters' class='filters'></div>"
        "<p id='count' aria-live='polite'></p><div class='scroll'><table id='episode-table'>"
        "<thead><tr><th scope='col'>episode</th><th scope='col'>series</th><th scope='col'>cell</th>"
        "<th scope='col'>verdict</th><th scope='col'>first divergence</th><th scope='col'>labels</th>"
        "</tr></thead><tbody></tbody></table></div><div id='pager' class='pager'></div></section>"
        "<section id='drill' aria-live='polite' hidden></section></main>"
        f"<script type='application/json' id='data'>{_json_for_script(data)}</script>"
        f"<script>{js}</script></body></html>"
    )
