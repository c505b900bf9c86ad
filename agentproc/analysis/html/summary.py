"""The report's first screen: one row per agent (or arm) with its headline rates.

The rates and their 95% intervals are the text report's headline
(:func:`~agentproc.analysis.render.report_text.render_report`): first-answer accuracy, faithful
accuracy, the unfaithful-correct gap, the share that left the procedure and the
share errored, each interval Wilson's on the effective number of episodes (the
design effect of repeated trials included). Beside them the verdict counts and the
worst first divergence: the label and step where most episodes first left the
procedure, linked to the first such episode.
"""

# ruff: noqa: E501 (markup strings read better whole than split mid-attribute)

from __future__ import annotations

from collections.abc import Iterable

from agentproc.analysis.html.episodes import KINDS
from agentproc.analysis.html.figures import Example, Figures
from agentproc.analysis.html.svg import esc
from agentproc.analysis.measures.cells import HEADLINE_RATES
from agentproc.analysis.measures.report import AgentReport, Report
from agentproc.analysis.stats.binomial import ratio, wilson
from agentproc.labelling import VERDICTS


def worst(first: dict[tuple[str, int | None], Example]) -> tuple[str, int | None, Example] | None:
    """The first divergence most episodes share; ties go to the earlier step (the answer
    last), then to the label first in the taxonomy.

    >>> worst({("skipped_step", 6): Example(2, "a"), ("reordered", 1): Example(2, "b")})[:2]
    ('reordered', 1)
    """

    def rank(item: tuple[tuple[str, int | None], Example]) -> tuple[int, float, int]:
        (label, step), ex = item
        where = float("inf") if step is None else step
        return (-ex.count, where, KINDS.index(label) if label in KINDS else len(KINDS))

    if not first:
        return None
    (label, step), ex = min(first.items(), key=rank)
    return label, step, ex


def series_id(position: int) -> str:
    """The id of an agent's section of figures (by its place in the report)."""
    return f"series-{position}"


def rate_cell(value: float, ci: tuple[float, float], n: int = 1, sep: str = " ") -> str:
    """A share and its interval as a sortable cell (a dash, sorted first, with no episode)."""
    if not n:
        return "<td data-v='-1'>\N{EN DASH}</td>"
    return (
        f"<td data-v='{value:.6f}'>{100 * value:.1f}%{sep}"
        f"<span class='ci'>[{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]</span></td>"
    )


def _divergence(found: tuple[str, int | None, Example] | None, n: int) -> str:
    if found is None:
        return "<td data-v='0'>none</td>"
    label, step, ex = found
    where = "the answer" if step is None else ex.where or f"step {step}"
    return (
        f"<td data-v='{ex.count}' class='worst'><span class='lab k{KINDS.index(label) if label in KINDS else 0}'>"
        f"{esc(label)}</span> at {where}<br>{ex.count} of {n} episodes · "
        f"<a href='#{ex.anchor}' class='example'>see one</a></td>"
    )


def _row(position: int, name: str, a: AgentReport, fig: Figures) -> str:
    s = a.overall
    runs = s.n + a.errored
    verdicts = "".join(f"<td data-v='{s.verdicts[v]}'>{s.verdicts[v]}</td>" for v in VERDICTS)
    return (
        f"<tr><th scope='row'><a href='#{series_id(position)}'>{esc(name)}</a></th>"
        f"<td data-v='{s.n}'>{s.n}</td>"
        + "".join(rate_cell(*s.rate(name), s.n, "<br>") for name in HEADLINE_RATES)
        + rate_cell(ratio(s.diverged, s.n), s.diverged_ci, s.n, "<br>")
        + rate_cell(ratio(a.errored, runs), wilson(a.errored, runs), runs, "<br>")
        + verdicts
        + _divergence(worst(fig.first.get(name, {})), s.n)
        + "</tr>"
    )


_HEADERS = (
    ("agent", "text"),
    ("n", "num"),
    ("first-answer acc", "num"),
    ("faithful acc", "num"),
    ("unfaithful-correct gap", "num"),
    ("left the procedure", "num"),
    ("errored", "num"),
    *((f"<span class='verdict v-{v}'>{v.replace('_', ' ')}</span>", "num") for v in VERDICTS),
    ("worst first divergence", "num"),
)


def sortable_head(columns: Iterable[tuple[str, str]]) -> str:
    """The header cells of a sortable table: ``(heading markup, "text" or "num")`` each."""
    return "".join(
        f"<th scope='col' aria-sort='none' data-type='{t}'><button type='button'>{c}</button></th>"
        for c, t in columns
    )


def summary_section(report: Report, fig: Figures) -> str:
    """The at-a-glance table: a row per agent, sortable by any column."""
    head = sortable_head(_HEADERS)
    rows = "".join(_row(i, name, a, fig) for i, (name, a) in enumerate(report.agents.items()))
    return (
        "<section id='summary'><h2>At a glance</h2><div class='scroll'>"
        f"<table id='summary-table' class='sortable'><thead><tr>{head}</tr></thead>"
        f"<tbody>{rows}</tbody></table></div><p class='hint'>Rates of scored episodes with "
        "their 95% Wilson interval (as the text report gives them); errored: of every episode "
        "run. Worst first divergence: where most episodes first left the procedure.</p></section>"
    )
