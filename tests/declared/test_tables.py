"""Tables and look-ups in a workflow file (format 2): read, typed, bound to the records,
drawn and run; a bad table, key or look-up refused in one line naming the field."""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from agentproc.arith import to_units
from agentproc.cli import main
from agentproc.declared import formula, formula_values
from agentproc.declared.file import read_workflow
from agentproc.declared.formula_types import NUMBER, TableType, Type, check
from agentproc.workflow.declared.suite import load_workflow, workflow_scenarios

BASE: dict[str, Any] = {
    "format": 2,
    "description": "Bill a month of a service plan.",
    "inputs": {
        "plan": {"type": "category", "choices": ["basic", "plus"]},
        "hours": {"integers": [1, 40]},
    },
    "tables": {
        "plans": {
            "key": "plan",
            "columns": {"fee": "number", "rate": "number", "support": "category"},
            "rows": [
                {"plan": "basic", "fee": 12.5, "rate": 30, "support": "email"},
                {"plan": "plus", "fee": 25, "rate": 20, "support": "phone"},
                {"plan": "gold", "fee": 60, "rate": 5, "support": "phone"},
            ],
        }
    },
    "steps": [
        {"tool": "get_fee", "output": "fee", "formula": "lookup(plans, plan, 'fee')"},
        {"tool": "get_rate", "output": "rate", "formula": "lookup(plans, plan, 'rate')"},
        {"tool": "get_support", "output": "support", "formula": "lookup(plans, plan, 'support')"},
        {
            "tool": "bill",
            "output": "total",
            "formula": "fee + rate * hours + ifelse(support == 'phone', 3, 0)",
        },
    ],
    "answer": "total",
}


def write(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "plans.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def changed(change: Any) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    change(data)
    return data


def test_a_look_up_is_typed_by_its_column_and_reads_its_key_only(tmp_path):
    wf = read_workflow(write(tmp_path, BASE))
    assert wf.reads[:3] == (("plan",), ("plan",), ("plan",))
    assert wf.types is not None
    assert wf.types["fee"] == NUMBER
    assert wf.types["support"] == Type.category(["email", "phone"])
    assert wf.depends[3] == (1, 2, 3)
    assert wf.tables["plans"]["basic"]["fee"] == Fraction(25, 2)


def test_a_bound_look_up_evaluates_the_record_of_its_key():
    tree = formula.parse("lookup(plans, plan, 'fee') * 2", True)
    assert list(formula.variables(tree)) == ["plan"]
    assert formula.render(tree) == "lookup(plans, plan, 'fee') * 2"
    bound = formula_values.bind(
        tree, {"plans": {"a": {"fee": Fraction(3)}, "b": {"fee": Fraction(7)}}}
    )
    assert formula_values.evaluate(bound, {"plan": "b"}) == 14
    assert formula_values.evaluate(bound, {"plan": "a"}) == 6


def test_a_table_is_not_a_variable_and_a_key_must_name_its_records():
    table = TableType(("a", "b"), {"fee": NUMBER})
    env: dict[str, Any] = {"plans": table, "plan": Type.category(["a", "b"])}
    assert check(formula.parse("lookup(plans, plan, 'fee')", True), env) == NUMBER
    with pytest.raises(formula.FormulaError, match="plans is a table"):
        check(formula.parse("plans + 1", True), env)
    env["plan"] = Type.category(["a", "c"])
    with pytest.raises(formula.FormulaError, match="no record 'c'"):
        check(formula.parse("lookup(plans, plan, 'fee')", True), env)


def test_every_instance_carries_its_tables_and_its_tools_look_the_records_up(tmp_path):
    wf = load_workflow(write(tmp_path, BASE))
    scenarios = workflow_scenarios(wf, "plans", count=20, seed=0)
    fees = {"basic": 12.5, "plus": 25.0}
    for s in scenarios:
        assert s.tables is not None and s.tables["plans"].key == "plan"
        plan = s.inputs["plan"]
        assert s.steps[0].value == fees[plan]
        assert s.steps[0].expected_call.arguments == {"plan": plan}
        # the step's own formula, bound to the instance's table, gives the other record too
        other = "plus" if plan == "basic" else "basic"
        code = s.steps[0].compute({"plan": to_units(other, 1000)}, 1000)
        assert code == int(fees[other] * 1000)
        # the agent is never shown the records
        assert "12.5" not in s.prompt and "email" not in s.prompt
        tool = next(t for t in s.tools if t["function"]["name"] == "get_fee")
        assert tool["function"]["parameters"]["properties"]["plan"]["enum"] == ["basic", "plus"]


def test_a_suite_with_tables_runs_faithfully_and_relabels_the_same(tmp_path):
    path = write(tmp_path, BASE)
    suite, run = tmp_path / "suite", tmp_path / "run.jsonl"
    assert main(["generate", "--workflow", str(path), "--count", "12", "--out", str(suite)]) == 0
    line = json.loads((suite / "scenarios.jsonl").read_text().splitlines()[0])
    assert line["tables"]["plans"]["rows"][0] == {
        "plan": "basic",
        "fee": 12.5,
        "rate": 30.0,
        "support": "email",
    }
    assert main(["run", str(suite), "--agent", "sim:oracle", "--out", str(run)]) == 0
    records = [json.loads(x) for x in run.read_text().splitlines()]
    assert all(r["metrics"]["verdict"] == "faithful" for r in records)
    assert main(["relabel", str(run)]) == 0


def _set(path: list[Any], value: Any) -> Any:
    def change(d: dict[str, Any]) -> None:
        for k in path[:-1]:
            d = d[k]
        d[path[-1]] = value

    return change


def _formula(index: int, text: str) -> Any:
    return _set(["steps", index, "formula"], text)


ROWS = ["tables", "plans", "rows"]
BAD = [
    (
        "key_twice",
        _set([*ROWS, 1, "plan"], "basic"),
        "tables.plans.rows[1].plan: 'basic' is listed twice",
    ),
    (
        "cell_missing",
        lambda d: d["tables"]["plans"]["rows"][1].pop("rate"),
        "tables.plans.rows[1].rate: missing",
    ),
    ("cell_type", _set([*ROWS, 1, "rate"], "twenty"), "rows[1].rate: 'twenty' is not a number"),
    (
        "cell_decimals",
        _set([*ROWS, 0, "fee"], 12.5001),
        "rows[0].fee: 12.5001 has more than 3 decimals",
    ),
    ("unknown_column", _formula(1, "lookup(plans, plan, 'hourly')"), "steps[1] (get_rate).formula"),
    ("unknown_table", _formula(1, "lookup(plan_list, plan, 'rate')"), "'plan_list' is not one"),
    (
        "key_lacks_a_record",
        _set(["inputs", "plan", "choices"], ["basic", "premium"]),
        "no record 'premium'",
    ),
    (
        "number_key",
        _formula(1, "lookup(plans, hours, 'rate')"),
        "the key of table plans is a category",
    ),
    ("unquoted_column", _formula(1, "lookup(plans, plan, rate)"), "a column's name in quotes"),
    (
        "name_of_an_input",
        lambda d: d["tables"].update(hours=d["tables"].pop("plans")),
        "tables.hours",
    ),
    (
        "look_up_in_a_condition",
        _set(["steps", 3, "when"], "lookup(plans, plan, 'support') == 'phone'"),
        "a condition does not look a record up",
    ),
]


@pytest.mark.parametrize(("case", "change", "message"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_table_or_look_up_is_one_line_naming_the_field_exit_2_and_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, change: Any, message: str
):
    path = write(tmp_path, changed(change))
    out = tmp_path / "suite"
    code = main(["generate", "--workflow", str(path), "--count", "3", "--out", str(out)])
    _, err = capsys.readouterr()
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{path}: " in err and message in err
    assert not out.exists()


def test_tables_need_format_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    data = {
        "description": "Double the hours.",
        "inputs": {"hours": {"integers": [1, 40]}},
        "tables": BASE["tables"],
        "steps": [{"tool": "double", "output": "x", "formula": "hours * 2"}],
        "answer": "x",
    }
    path = write(tmp_path, data)
    assert main(["generate", "--workflow", str(path), "--out", str(tmp_path / "s")]) == 2
    assert f"{path}: tables: tables need format = 2" in capsys.readouterr().err


DRAWN: dict[str, Any] = changed(
    lambda d: d["tables"]["plans"].update(
        columns={"fee": "number", "rate": {"integers": [5, 40]}, "support": "category"},
        rows=[
            {k: v for k, v in row.items() if k != "rate"} for row in d["tables"]["plans"]["rows"]
        ],
    )
)


def test_a_drawn_column_gives_every_instance_its_own_records(tmp_path):
    wf = load_workflow(write(tmp_path, DRAWN))
    assert [name for name, _ in wf.hidden] == [
        "plans[basic].rate",
        "plans[plus].rate",
        "plans[gold].rate",
    ]
    scenarios = list(workflow_scenarios(wf, "plans", count=12, seed=0))
    rates = set()
    for s in scenarios:
        assert set(s.inputs) == {"plan", "hours"}  # the drawn values are never shown
        assert "plans[" not in s.prompt
        assert s.tables is not None
        rows = {r["plan"]: r for r in s.tables["plans"].rows}
        plan = s.inputs["plan"]
        assert s.steps[1].value == rows[plan]["rate"]  # the look-up returns this instance's
        rates.add(tuple(r["rate"] for r in rows.values()))
        other = "plus" if plan == "basic" else "basic"
        code = s.steps[1].compute({"plan": to_units(other, 1000)}, 1000)
        assert code == int(rows[other]["rate"] * 1000)  # another key: that record's value
        tool = next(t for t in s.tools if t["function"]["name"] == "get_rate")
        assert set(tool["function"]["parameters"]["properties"]) == {"plan"}
    assert len(rates) > 1  # drawn again for every instance


def test_a_suite_with_drawn_records_runs_faithfully_and_relabels_the_same(tmp_path):
    path = write(tmp_path, DRAWN)
    suite, run = tmp_path / "suite", tmp_path / "run.jsonl"
    assert main(["generate", "--workflow", str(path), "--count", "8", "--out", str(suite)]) == 0
    assert main(["run", str(suite), "--agent", "sim:oracle", "--out", str(run)]) == 0
    records = [json.loads(x) for x in run.read_text().splitlines()]
    assert all(r["metrics"]["verdict"] == "faithful" for r in records)
    assert main(["relabel", str(run)]) == 0


def test_a_drawn_column_given_in_a_row_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    data = copy.deepcopy(DRAWN)
    data["tables"]["plans"]["rows"][1]["rate"] = 4
    path = write(tmp_path, data)
    assert main(["generate", "--workflow", str(path), "--out", str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err
    assert f"{path}: tables.plans.rows[1].rate: drawn for every instance" in err
    assert not (tmp_path / "s").exists()
