"""Rich tables of a report: by length and by look-back, per agent."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from agentproc.analysis.report import AgentReport, CellStats, Report
from agentproc.labelling import LabelKind

SHORT: dict[LabelKind, str] = {
    LabelKind.HALLUCINATED_CALL: "halluc",
    LabelKind.INVALID_ARGUMENTS: "invalid",
    LabelKind.REPEATED_STEP: "repeat",
    LabelKind.REORDERED: "reorder",
    LabelKind.WRONG_ARGUMENT: "wrong_arg",
    LabelKind.SKIPPED_STEP: "skipped",
    LabelKind.PREMATURE_FINISH: "premature",
    LabelKind.MISSING_ANSWER: "missing",
    LabelKind.WRONG_ANSWER: "wrong_ans",
    LabelKind.ANSWER_REVISED: "revised",
}
"""Column headers of the label kinds in rendered tables."""


def _ci(value: float, ci: tuple[float, float]) -> str:
    return f"{value:.3f} [{ci[0]:.2f}-{ci[1]:.2f}]"


_RATES: dict[str, Callable[[CellStats], str]] = {
    "accuracy": lambda s: _ci(s.accuracy, s.accuracy_ci),
    "faithful": lambda s: _ci(s.faithful_accuracy, s.faithful_accuracy_ci),
    "unfaith-correct": lambda s: _ci(s.unfaithful_correct_rate, s.unfaithful_correct_ci),
}
"""The rate columns of the rendered tables: header to cell text."""

Rows = list[tuple[str, CellStats]]


def _kinds_present(report: Report) -> list[LabelKind]:
    """Label kinds with at least one label anywhere, in taxonomy order."""
    return [k for k in LabelKind if any(a.overall.label_counts[k] for a in report.agents.values())]


def _table(key: str, rows: Rows, rates: bool, kinds: list[LabelKind]) -> Table:
    """One row per group; the last row (``all``) set apart."""
    table = Table()
    columns = list(_RATES) if rates else []
    for header in [key, "n", *columns, *(SHORT[k] for k in kinds)]:
        table.add_column(header, justify="right", no_wrap=True)
    for i, (k, s) in enumerate(rows):
        cells = [_RATES[c](s) for c in columns] + [str(s.label_counts[kind]) for kind in kinds]
        table.add_row(k, str(s.n), *cells, end_section=i == len(rows) - 2)
    return table


def _sections(a: AgentReport, kinds: list[LabelKind], console: Console) -> list[tuple[str, Table]]:
    """By length and by look-back, with label columns if both still fit the console.

    Otherwise the label counts get a table of their own, so nothing is cut.
    """
    every = ("all", a.overall)
    by_n: Rows = [*((str(k), s) for k, s in a.by_length.items()), every]
    by_l: Rows = [*((str(k), s) for k, s in a.by_lookback.items()), every]
    tables = [
        ("by length", _table("N", by_n, True, kinds)),
        ("by look-back", _table("L", by_l, True, kinds)),
    ]
    unbounded = console.options.update_width(1 << 16)
    if all(Measurement.get(console, unbounded, t).maximum <= console.width for _, t in tables):
        return tables
    groups: Rows = [
        *((f"N={k}", s) for k, s in by_n[:-1]),
        *((f"L={k}", s) for k, s in by_l[:-1]),
        every,
    ]
    return [
        ("by length", _table("N", by_n, True, [])),
        ("by look-back", _table("L", by_l, True, [])),
        ("labels", _table("group", groups, False, kinds)),
    ]


def render_report(report: Report, console: Console) -> None:
    """Print, per agent, a heading line and tables by length N and by look-back L.

    Each table ends with an ``all`` row over the agent's episodes. Label columns
    count labels, one per kind found anywhere in the report; when they would not
    fit the console they form a third table.
    """
    if not report.agents:
        console.print("no episodes")
        return
    kinds = _kinds_present(report)
    for name, a in report.agents.items():
        s = a.overall
        console.print(
            Text.assemble(
                (name, "bold"),
                f": n={s.n}, final-answer accuracy {s.final_accuracy:.3f},"
                f" mean progress {s.progress_rate:.3f}, mean correct prefix {s.prefix_rate:.3f}",
            )
        )
        for title, table in _sections(a, kinds, console):
            console.print(Text(f"{name} {title}"))
            console.print(table)
