"""Rich tables of a report: by length and by look-back, per agent."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from agentproc.analysis.report import DEFAULT_BY, KNOBS, AgentReport, CellStats, Report
from agentproc.errors import unknown_key
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


_KNOB_TITLES: dict[str, tuple[str, str]] = {
    "length": ("by length", "N"),
    "lookback": ("by look-back", "L"),
    "range": ("by input range", "range"),
    "ops": ("by op mix", "ops"),
    "mode": ("by numeric mode", "mode"),
}
"""Knob -> (table title, key column header)."""

_STUDY: dict[str, str] = {
    "exact": "exact_step_rate",
    "under": "under_execution_rate",
    "over": "over_execution_rate",
    "missing": "missing_answer_rate",
    "premature": "premature_answer_rate",
    "self-corr": "self_correction_rate",
}
"""The study-measure columns: header -> :data:`~agentproc.analysis.report.STUDY_RATES` name."""


def _pct(value: float, ci: tuple[float, float]) -> str:
    return f"{100 * value:.0f}% [{100 * ci[0]:.0f}-{100 * ci[1]:.0f}]"


def _study_table(key: str, rows: Rows, intervals: bool = True) -> Table:
    table = Table()
    for header in [key, "n", *_STUDY]:
        table.add_column(header, justify="right", no_wrap=True)
    for i, (k, s) in enumerate(rows):
        rates = [s.rate(name) for name in _STUDY.values()]
        cells = [_pct(*r) if intervals else f"{100 * r[0]:.0f}%" for r in rates]
        table.add_row(k, str(s.n), *cells, end_section=i == len(rows) - 2)
    return table


def _sections(
    a: AgentReport, kinds: list[LabelKind], console: Console, by: Sequence[str] = DEFAULT_BY
) -> list[tuple[str, Table]]:
    """One table per knob in ``by``, with label columns if they all still fit the
    console (otherwise the label counts get a table of their own, so nothing is cut),
    then the study's measures by the first knob."""
    every = ("all", a.overall)
    rows: dict[str, Rows] = {
        knob: [*((str(k), s) for k, s in a.by_knob[knob].items()), every] for knob in by
    }
    tables = [(_KNOB_TITLES[k][0], _table(_KNOB_TITLES[k][1], rows[k], True, kinds)) for k in by]
    unbounded = console.options.update_width(1 << 16)
    fits = all(Measurement.get(console, unbounded, t).maximum <= console.width for _, t in tables)
    if not fits:
        groups: Rows = [
            *((f"{_KNOB_TITLES[k][1]}={g}", s) for k in by for g, s in rows[k][:-1]),
            every,
        ]
        tables = [(_KNOB_TITLES[k][0], _table(_KNOB_TITLES[k][1], rows[k], True, [])) for k in by]
        tables.append(("labels", _table("group", groups, False, kinds)))
    first = by[0]
    title, key = _KNOB_TITLES[first]
    study = _study_table(key, rows[first])
    if Measurement.get(console, unbounded, study).maximum > console.width:
        study = _study_table(key, rows[first], intervals=False)  # intervals: --json
    tables.append((f"execution {title}", study))
    return tables


def render_report(report: Report, console: Console, by: Sequence[str] = DEFAULT_BY) -> None:
    """Print, per agent, a heading line, one table per knob of ``by`` (length N and
    look-back L by default) and the study's execution measures.

    Each table ends with an ``all`` row over the agent's scored episodes. Label
    columns count labels, one per kind found anywhere in the report; when they
    would not fit the console they form a table of their own. Episodes that an
    infrastructure failure ended are counted on the heading line and warned about,
    never scored.
    """
    for knob in by:
        if knob not in KNOBS:
            raise unknown_key("report grouping", knob, list(KNOBS))
    if not report.agents:
        console.print("no episodes")
        return
    kinds = _kinds_present(report)
    for name, a in report.agents.items():
        s = a.overall
        errors = ""
        if a.errored:
            kinds_text = ", ".join(f"{k} {v}" for k, v in a.errors.items())
            errors = f", errored {a.errored} ({kinds_text}, not scored)"
        console.print(
            Text.assemble(
                (name, "bold"),
                f": n={s.n}, final-answer accuracy {s.final_accuracy:.3f},"
                f" mean progress {s.progress_rate:.3f}, mean correct prefix {s.prefix_rate:.3f}"
                f"{errors}",
            )
        )
        if a.errored:
            console.print(
                Text(
                    f"warning: {a.errored} episodes of {name} could not be run and count in no "
                    "figure; run again with --resume to retry them",
                    style="yellow",
                )
            )
        if not s.n:
            continue
        for title, table in _sections(a, kinds, console, by):
            console.print(Text(f"{name} {title}"))
            console.print(table)
