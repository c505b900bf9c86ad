"""The self-contained HTML report (``agentproc report RUN.jsonl... --html OUT.html``).

One file that opens offline: first a summary of the agents' headline rates with
their intervals (:mod:`~agentproc.analysis.html.summary`) and the agents side by side,
then the study's curves per agent as inline SVG with 95% interval bands, a sortable
table of grid cells, a filterable, paginated table of every episode and a drill-down
into its procedure, calls lined up by step (:mod:`~agentproc.analysis.html.align`)
and model turns, each episode at its own anchor.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agentproc.analysis.html.episodes import DETAIL_BUDGET, details, episode_rows
from agentproc.analysis.html.figures import figures
from agentproc.analysis.html.page import render_page
from agentproc.analysis.measures.report import aggregate
from agentproc.analysis.measures.step_names import WorkflowNames
from agentproc.analysis.measures.tokens import Price
from agentproc.errors import InputError
from agentproc.outputs import replacing
from agentproc.runs.runfile import last_heads

__all__ = ["HtmlReport", "html_report", "write_html_report"]


@dataclass(frozen=True)
class HtmlReport:
    """A rendered report and what reading its runs found."""

    html: str
    episodes: int
    detailed: int
    """Episodes whose drill-down is embedded."""
    warnings: list[str] = field(default_factory=list)


def html_report(
    paths: list[Path], budget: int = DETAIL_BUDGET, price: Price | None = None
) -> HtmlReport:
    """Read run files (the last record of each episode counts) and render the report
    (each agent's tokens costed at ``price``, when given)."""
    warnings: list[str] = []
    heads = last_heads([Path(p) for p in paths], warnings)
    records = [rec for _, rec in heads.values()]
    steps = WorkflowNames().learn_heads(heads.values())
    report = aggregate(records, steps)
    warnings.extend(report.notes)
    warnings.extend(steps.warnings())
    rows = episode_rows(heads, report, steps)
    drill = details(heads, report, warnings, budget)
    html = render_page(
        report,
        figures(records, report, steps),
        rows,
        drill,
        [str(p) for p in paths],
        warnings,
        price,
    )
    return HtmlReport(html, len(records), len(drill), warnings)


def write_html_report(
    paths: list[Path], out: Path, budget: int = DETAIL_BUDGET, price: Price | None = None
) -> HtmlReport:
    """Render the report and write it to ``out`` whole (a temporary file renamed into place).

    A folder, or a path under a file, is bad input; a write that fails midway (a full
    disk) is an :class:`OutputError`, and any file already at ``out`` is left as it was.
    """
    return write_page(out, lambda: html_report(paths, budget, price))


def write_page(out: Path, make: Callable[[], HtmlReport]) -> HtmlReport:
    """Check ``out``, make the page, and write it whole (a temporary file renamed into
    place): a folder is bad input, and a write that fails leaves any file there as it was."""
    out = Path(out)
    if out.is_dir():
        raise InputError(out, "is a folder: give the path of the HTML file to write")
    page = make()
    with replacing(out) as tmp:
        tmp.write_text(page.html, encoding="utf-8")
    return page
