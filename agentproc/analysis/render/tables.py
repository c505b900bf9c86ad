"""Flat tables of a run, for pandas, polars or a spreadsheet (``report --csv / --parquet``).

Two tables: ``episodes`` (one row per episode, written as the records stream
past) and ``cells`` (one row per agent and grid cell, with every rate and its
95% Wilson interval). Column names are in :data:`EPISODE_COLUMNS` and
:data:`CELL_COLUMNS`; ``pandas.read_csv("DIR/episodes.csv")`` or
``polars.read_parquet("DIR/cells.parquet")`` loads one in a line.
"""

from __future__ import annotations

import contextlib
import csv
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from agentproc.analysis.measures.cells import STUDY_RATES, CellStats
from agentproc.analysis.measures.identity import agent_key
from agentproc.analysis.measures.report import Report, aggregate
from agentproc.analysis.measures.step_names import NO_NAMES, StepNames, WorkflowNames
from agentproc.errors import ConfigError, OutputError
from agentproc.labelling import LabelKind
from agentproc.outputs import replacing
from agentproc.runs import error_kind_of, is_error, record_mode

Format = Literal["csv", "parquet"]

LABEL_COLUMNS = [f"n_{k.value}" for k in LabelKind]
"""One count column per label kind, in taxonomy order."""

EPISODE_COLUMNS: dict[str, str] = {
    "scenario_id": "the scenario (procedure) id",
    "agent": "the agent as report shows it (name, / VARIANT, [text] in text mode)",
    "mode": "tools or text",
    "variant": "the variant the episode ran under",
    "trial": "the repetition (0-based)",
    "cell": "the grid cell id",
    "steps": "N, the number of steps",
    "lookback": "L, the look-back",
    "range_low": "low end of the input range",
    "range_high": "high end of the input range",
    "ops": "the op mix",
    "numeric_mode": "decimal or integer",
    "sweeps": "the suite's sweeps listing the cell, joined by ';'",
    "stop_reason": "why the episode ended",
    "error_kind": "endpoint, context_overflow or harness for an errored episode (not scored)",
    "verdict": "faithful, unfaithful_correct, wrong or no_answer (empty when errored)",
    "first_answer_correct": "the first answer is right",
    "final_answer_correct": "the last answer is right",
    "faithful": "a right first answer and no label",
    "executed_steps": "distinct steps run",
    "total_steps": "steps of the procedure",
    "progress_rate": "share of steps whose final value is right",
    "longest_correct_prefix": "reference calls matched in order before the first divergence",
    "divergence_step": "the step expected where the episode first left the procedure",
    "divergence_label": "the label of that first departure",
    "divergence_tool": "a declared workflow's: the tool of that step (empty otherwise)",
    "divergence_output": "a declared workflow's: the variable that step defines",
    "labels": "number of labels",
    **{c: f"number of {c[2:]} labels" for c in LABEL_COLUMNS},
    "wrong_argument_propagated": "wrong_argument labels carried forward from an earlier mistake",
    "path": "a branched workflow's: the path its instance takes (empty otherwise)",
    "path_correct": "a branched workflow's: the steps run were exactly the path's",
    "exit_correct": "a branched workflow's: the first answer came where the path ends",
}
"""Columns of the episodes table and what each holds."""

_RATE_COLUMNS = {
    "accuracy": "first-answer accuracy",
    "faithful_accuracy": "faithful accuracy",
    "unfaithful_correct_rate": "the unfaithful-correct rate",
    **{name: name.replace("_", " ") for name in STUDY_RATES},
}

CELL_COLUMNS: dict[str, str] = {
    "agent": "the agent as report shows it (name, / VARIANT, [text] in text mode)",
    "cell": "the grid cell id",
    "steps": "N",
    "lookback": "L",
    "range_low": "low end of the input range",
    "range_high": "high end of the input range",
    "ops": "the op mix",
    "numeric_mode": "decimal or integer",
    "n": "scored episodes",
    "verdict_faithful": "episodes with verdict faithful",
    "verdict_unfaithful_correct": "episodes with verdict unfaithful_correct",
    "verdict_wrong": "episodes with verdict wrong",
    "verdict_no_answer": "episodes with verdict no_answer",
    "final_accuracy": "last-answer accuracy",
    **{
        column: text
        for name, what in _RATE_COLUMNS.items()
        for column, text in (
            (name, what),
            (f"{name}_low", f"95% Wilson interval of {what}: low end"),
            (f"{name}_high", f"95% Wilson interval of {what}: high end"),
        )
    },
    "progress_rate": "mean share of steps whose final value is right",
    "prefix_rate": "mean longest correct prefix / N",
    **{c: f"number of {c[2:]} labels" for c in LABEL_COLUMNS},
    "wrong_argument_propagated": "wrong_argument labels carried forward",
    "divergence_episodes": "episodes that left the procedure",
    "divergence_median_step": "median step of the first divergence",
    "divergence_median_tool": "a declared workflow's: the tool of that step (empty otherwise)",
    "divergence_median_output": "a declared workflow's: the variable that step defines",
}
"""Columns of the cells table and what each holds."""

_TEXT = {
    "scenario_id", "agent", "mode", "variant", "cell", "ops", "numeric_mode", "sweeps",
    "stop_reason", "error_kind", "verdict", "divergence_label", "path", "divergence_tool",
    "divergence_output", "divergence_median_tool", "divergence_median_output",
}  # fmt: skip
_FLAGS = {"first_answer_correct", "final_answer_correct", "faithful", "path_correct"}
_FLAGS |= {"exit_correct"}
_REALS = {"range_low", "range_high", "progress_rate", "prefix_rate", "final_accuracy"}
_REALS |= {c for c in CELL_COLUMNS if c.endswith(("_low", "_high")) or c in _RATE_COLUMNS}


def _kind(column: str) -> str:
    """The parquet type of a column: text, flag, real or (by default) integer."""
    if column in _TEXT:
        return "string"
    return "bool_" if column in _FLAGS else "float64" if column in _REALS else "int64"


_CELL_ID = re.compile(r"^n(\d+)-L(\d+)-r([^_]+)_(.+)-([a-z+]+)-(decimal|integer)$")


def episode_row(rec: Mapping[str, Any], names: StepNames = NO_NAMES) -> dict[str, Any]:
    """The episodes-table row of one run-file record (``names``: its workflow's steps)."""
    params = rec.get("params") or {}
    m = rec.get("metrics") or {}
    lo, hi = (params.get("range") or [None, None])[:2]
    errored = is_error(rec)  # type: ignore[arg-type]
    counts = dict.fromkeys(LABEL_COLUMNS, 0)
    propagated = 0
    for lab in rec.get("labels") or []:
        column = f"n_{lab.get('kind')}"
        if column in counts:
            counts[column] += 1
        propagated += lab.get("kind") == "wrong_argument" and lab.get("cause") == "propagated"
    div = m.get("first_divergence") or {}
    sweeps = params.get("sweeps")
    return {
        "scenario_id": rec.get("scenario_id"),
        "agent": agent_key(rec),
        "mode": record_mode(rec),  # type: ignore[arg-type]
        "variant": rec.get("variant", "default"),
        "trial": rec.get("trial", 0),
        "cell": rec.get("cell"),
        "steps": params.get("steps"),
        "lookback": params.get("lookback"),
        "range_low": lo,
        "range_high": hi,
        "ops": params.get("ops"),
        "numeric_mode": params.get("mode"),
        "sweeps": ";".join(map(str, sweeps)) if isinstance(sweeps, list) else "",
        "stop_reason": rec.get("stop_reason"),
        "error_kind": error_kind_of(rec) if errored else "",  # type: ignore[arg-type]
        "verdict": "" if errored else rec.get("verdict"),
        "first_answer_correct": bool(m.get("first_answer_correct")),
        "final_answer_correct": bool(m.get("final_answer_correct")),
        "faithful": bool(m.get("faithful")),
        "executed_steps": m.get("executed_steps"),
        "total_steps": m.get("total_steps"),
        "progress_rate": m.get("progress_rate"),
        "longest_correct_prefix": m.get("longest_correct_prefix"),
        "divergence_step": div.get("step") if isinstance(div, Mapping) else None,
        "divergence_label": div.get("label") if isinstance(div, Mapping) else None,
        **_named(div.get("step") if isinstance(div, Mapping) else None, names),
        "labels": sum(counts.values()),
        **counts,
        "wrong_argument_propagated": propagated,
        "path": m.get("path", ""),
        "path_correct": m.get("path_correct"),
        "exit_correct": m.get("exit_correct"),
    }


def _named(step: Any, names: StepNames, key: str = "divergence") -> dict[str, str]:
    """The tool and output of a step, each empty without a name."""
    name = names.get(step) if isinstance(step, int) else None
    return {
        f"{key}_tool": "" if name is None else name.tool,
        f"{key}_output": "" if name is None else name.output,
    }


def _cell_knobs(cell: str) -> dict[str, Any]:
    m = _CELL_ID.match(cell)
    if m is None:
        return {"range_low": None, "range_high": None, "ops": None, "numeric_mode": None}
    return {
        "range_low": float(m[3]),
        "range_high": float(m[4]),
        "ops": m[5],
        "numeric_mode": m[6],
    }


def _cell_row(
    agent: str, cell: str, steps: int, lookback: int, s: CellStats, names: StepNames = NO_NAMES
) -> dict[str, Any]:
    row: dict[str, Any] = {"agent": agent, "cell": cell, "steps": steps, "lookback": lookback}
    row.update(_cell_knobs(cell))
    row["n"] = s.n
    row.update({f"verdict_{k}": v for k, v in s.verdicts.items()})
    row["final_accuracy"] = round(s.final_accuracy, 6)
    for name in _RATE_COLUMNS:
        value, (low, high) = s.rate(name)
        row.update({name: round(value, 6), f"{name}_low": round(low, 6)})
        row[f"{name}_high"] = round(high, 6)
    row.update({"progress_rate": round(s.progress_rate, 6), "prefix_rate": round(s.prefix_rate, 6)})
    row.update({f"n_{k.value}": v for k, v in s.label_counts.items()})
    row["wrong_argument_propagated"] = s.wrong_argument_causes.get("propagated", 0)
    row["divergence_episodes"] = s.diverged
    row["divergence_median_step"] = s.divergence_median_step
    row.update(_named(s.divergence_median_step, names, "divergence_median"))
    return row


def cell_rows(report: Report) -> Iterator[dict[str, Any]]:
    """The cells-table rows: one per agent and grid cell."""
    for agent, a in report.agents.items():
        for key, s in a.by_cell.items():
            names = a.workflow_steps.get(key.cell, NO_NAMES)  # by position, as the median is
            yield _cell_row(agent, key.cell, key.steps, key.lookback, s, names)


class _CsvSink:
    def __init__(self, path: Path, columns: list[str]) -> None:
        self.fh = open(path, "w", encoding="utf-8", newline="")  # noqa: SIM115 - see close()
        self.writer = csv.DictWriter(self.fh, fieldnames=columns)
        self.writer.writeheader()

    def write(self, row: dict[str, Any]) -> None:
        self.writer.writerow(row)

    def close(self) -> None:
        self.fh.close()


class _ParquetSink:
    """Rows buffered into record batches, so a long run never sits whole in memory."""

    BATCH = 10_000

    def __init__(self, path: Path, columns: list[str]) -> None:
        check_parquet()
        import pyarrow as pa
        import pyarrow.parquet as pq

        self.pa, self.pq, self.path, self.columns = pa, pq, path, columns
        self.schema = pa.schema([(c, getattr(pa, _kind(c))()) for c in columns])
        self.rows: list[dict[str, Any]] = []
        self.writer: Any = None

    def write(self, row: dict[str, Any]) -> None:
        self.rows.append(row)
        if len(self.rows) >= self.BATCH:
            self._flush()

    def _flush(self) -> None:
        if self.writer is None:
            self.writer = self.pq.ParquetWriter(self.path, self.schema)
        self.writer.write_table(self.pa.Table.from_pylist(self.rows, schema=self.schema))
        self.rows = []

    def close(self) -> None:
        if self.rows or self.writer is None:  # no rows at all: a table of the columns
            self._flush()
        self.writer.close()


_Sink = _CsvSink | _ParquetSink
_SINKS: dict[Format, type[_Sink]] = {
    "csv": _CsvSink,
    "parquet": _ParquetSink,
}


def table_files(folder: Path, fmt: Format) -> list[Path]:
    """The files ``report --csv/--parquet DIR`` writes in ``DIR``."""
    return [Path(folder) / f"{name}.{fmt}" for name in ("episodes", "cells")]


def check_parquet() -> None:
    """Refuse ``--parquet`` without pyarrow, before any table is written."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise ConfigError(
            "--parquet needs pyarrow: install the parquet extra: pip install 'agentproc[parquet]'"
        ) from None


def write_tables(
    records: Iterable[Mapping[str, Any]],
    targets: Iterable[tuple[Path, Format]],
    on_written: Callable[[Path], None] | None = None,
    steps: WorkflowNames | None = None,
) -> Report:
    """Aggregate ``records`` while writing ``DIR/episodes.<fmt>``, then ``DIR/cells.<fmt>``,
    for each ``(DIR, fmt)`` of ``targets``; ``on_written`` is told of each file written;
    a declared workflow's steps are named as ``steps`` has found them.

    Every table is written beside its place and renamed into it only once all are
    whole (:func:`~agentproc.outputs.replacing`): a bad record, or a table that cannot
    be written, leaves every older table as it was.

    Returns the report, as :func:`~agentproc.analysis.measures.report.aggregate` would.
    """
    targets = list(dict.fromkeys((Path(d), f) for d, f in targets))
    with contextlib.ExitStack() as stack:
        sinks: list[_Sink] = []
        cells_at: list[Path] = []
        for folder, fmt in targets:
            episodes, cells = table_files(folder, fmt)
            sinks.append(_SINKS[fmt](stack.enter_context(replacing(episodes)), [*EPISODE_COLUMNS]))
            cells_at.append(stack.enter_context(replacing(cells)))

        def tee() -> Iterator[Mapping[str, Any]]:
            for rec in records:
                row = episode_row(rec, NO_NAMES if steps is None else steps.of_record(rec))
                for sink in sinks:
                    sink.write(row)
                yield rec

        try:
            report = aggregate(tee(), steps)
            for sink, tmp, (_, fmt) in zip(sinks, cells_at, targets, strict=True):
                sink.close()
                cells_sink = _SINKS[fmt](tmp, list(CELL_COLUMNS))
                for row in cell_rows(report):
                    cells_sink.write(row)
                cells_sink.close()
        except OSError as exc:
            raise OutputError(targets[0][0], f"cannot write: {exc.strerror or exc}") from None
    if on_written is not None:
        for folder, fmt in targets:
            for path in table_files(folder, fmt):
                on_written(path)
    return report
