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

from agentproc.analysis.html.figures import Figures
from agentproc.analysis.html.series import comparison, series_figures
from agentproc.analysis.html.summary import rate_cell, sortable_head, summary_section
from agentproc.analysis.html.svg import esc, pattern_defs
from agentproc.analysis.measures.cells import HEADLINE_RATES, STUDY_RATES
from agentproc.analysis.measures.groupings import varies, workflow_suite, workflows
from agentproc.analysis.measures.report import Report
from agentproc.analysis.measures.tokens import Price

ASSETS = Path(__file__).parent
CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "img-src data:; base-uri 'none'; form-action 'none'"
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
    """Every agent's cells, with the columns of the knobs the suite varies (a workflow
    suite's cells are its workflows, without N, L and dist)."""
    declared = workflow_suite(report)
    length = varies(report, "length") and not declared
    lookback = varies(report, "lookback") and not declared
    shown = {"N": length, "L": lookback, "dist": lookback}
    columns = [(c, t) for c, t in _CELL_COLUMNS if shown.get(c, True)]
    if declared:
        columns[1] = ("workflow", "text")
    head = sortable_head((esc(c), t) for c, t in columns)
    rows = []
    for name, a in report.agents.items():
        for key, s in a.by_cell.items():
            top = max(s.label_counts.items(), key=lambda kv: kv[1], default=(None, 0))
            rows.append(
                f"<tr><td>{esc(name)}</td><td>{esc(key.cell)}</td>"
                + (f"<td data-v='{key.steps}'>{key.steps}</td>" if length else "")
                + (f"<td data-v='{key.lookback}'>{key.lookback}</td>" if lookback else "")
                + (_dist_cell(s.realised_max) if lookback else "")
                + f"<td data-v='{s.n}'>{s.n}</td>"
                + "".join(rate_cell(*s.rate(r)) for r in _CELL_RATES)
                + f"<td>{esc(f'{top[0].value} ({top[1]})' if top[0] is not None and top[1] else '—')}</td></tr>"
            )
    dist = (
        "; dist: the realised look-back, the farthest any operand variable lies from the "
        "variable it defines"
        if lookback
        else ""
    )
    return (
        f"<section id='cells'><h2>{'Workflows' if declared else 'Grid cells'}</h2>"
        "<p class='hint'>Select a column heading to sort "
        f"(again to reverse). Percentages with their 95% Wilson interval{dist}.</p>"
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
    """A branched workflow's accuracy by path, and by workflow where the report holds
    several ("": no agent's episodes have paths)."""
    several = len(workflows(report)) > 1
    rows = [
        f"<tr><td>{esc(name)}</td>"
        + (f"<td>{esc(wf)}</td>" if several else "")
        + f"<td>{esc(path)}</td><td data-v='{s.n}'>{s.n}</td>"
        + "".join(rate_cell(*s.rate(r)) for r in HEADLINE_RATES)
        + "</tr>"
        for name, a in report.agents.items()
        for (wf, path), s in a.by_path.items()
    ]
    if not rows:
        return ""
    columns = list(_PATH_COLUMNS)
    if several:
        columns.insert(1, ("workflow", "text"))
    head = sortable_head((esc(c), t) for c, t in columns)
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
        series_figures(i, n, a, fig, report, price)
        for i, (n, a) in enumerate(report.agents.items())
    )
    side = comparison(report)
    cells = "Workflows" if workflow_suite(report) else "Grid cells"
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
        f"{'<a href=#compare>Side by side</a> ' if side else ''}"
        f"<a href='#figures'>Per agent</a> <a href='#cells'>{cells}</a> "
        "<a href='#episodes'>Episodes</a></nav></header><main>"
        f"{lead_html}{summary_section(report, fig)}{side}"
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
