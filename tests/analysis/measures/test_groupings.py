"""The report's tables follow what its suite varies: a knob of one value gets none, a
workflow suite's tables are by workflow and by path, and a report that varies nothing
keeps one table of all its episodes."""

from __future__ import annotations

from typing import Any

from agentproc.analysis import aggregate, report_json
from agentproc.analysis.measures.groupings import groupings, varies, workflow_suite


def record(steps: int = 5, lookback: int = 3, cell: str | None = None, ops: str = "mixed",
           path: str | None = None) -> dict[str, Any]:  # fmt: skip
    """A minimal scored record (a declared workflow's with ``ops="formula"``)."""
    cell = cell or f"n{steps}-L{lookback}-r1_10-mixed-decimal"
    metrics: dict[str, Any] = {
        "verdict": "faithful", "faithful": True, "first_answer_correct": True,
        "final_answer_correct": True, "total_steps": steps, "progress_rate": 1.0,
        "longest_correct_prefix": steps, "first_divergence": None,
    }  # fmt: skip
    if path is not None:
        metrics["path"] = path
    params = {"cell": cell, "steps": steps, "lookback": lookback, "ops": ops}
    return {"agent": "a", "cell": cell, "params": params, "verdict": "faithful",
            "labels": [], "metrics": metrics}  # fmt: skip


def titles(recs: list[dict[str, Any]], by: Any = None) -> list[str]:
    return [g.title for g in groupings(aggregate(recs), by)]


def test_a_knob_of_one_value_gets_no_table():
    assert titles([record(5, 1), record(9, 1)]) == ["by length"]
    assert titles([record(5, 1), record(5, 3)]) == ["by look-back"]
    assert titles([record(5, 1), record(9, 3)], ["length", "range"]) == ["by length"]


def test_a_report_that_varies_nothing_keeps_one_table_of_all_its_episodes():
    (g,) = groupings(aggregate([record(), record()]))
    assert (g.title, g.rows, g.total) == ("all episodes", [("all",)], False)


def test_a_workflow_suite_is_grouped_by_workflow_not_by_its_lengths():
    recs = [record(12, 18, "invoice", "formula"), record(7, 4, "refund", "formula")]
    report = aggregate(recs)
    assert workflow_suite(report) and varies(report, "length")
    assert titles(recs) == ["by workflow"]
    g = groupings(report)[0]
    assert g.rows == [("invoice",), ("refund",), ("all",)]
    assert titles(recs, ["length"]) == ["by length", "by workflow"]  # asked for: shown


def test_one_workflow_has_no_table_by_workflow_and_a_branched_one_a_table_by_path():
    assert titles([record(12, 18, "invoice", "formula")]) == ["all episodes"]
    recs = [record(7, 4, "refund", "formula", p) for p in ("base", "exit:late")]
    (g,) = groupings(aggregate(recs))
    assert (g.title, g.headers) == ("by path", ["path"])
    assert g.rows == [("base",), ("exit:late",), ("all",)]


def test_paths_of_two_workflows_are_told_apart_by_workflow():
    recs = [record(7, 4, "refund", "formula", "base"), record(9, 2, "triage", "formula", "base")]
    paths = groupings(aggregate(recs))[-1]
    assert paths.headers == ["workflow", "path"]
    assert paths.rows == [("refund", "base"), ("triage", "base"), ("all", "")]
    rows = report_json(aggregate(recs))["agents"]["a"]["by_path"]
    assert [(r["path"], r["workflow"], r["n"]) for r in rows] == [
        ("refund: base", "refund", 1),
        ("triage: base", "triage", 1),
    ]
