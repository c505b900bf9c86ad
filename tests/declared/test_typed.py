"""Workflow format 2: typed values, the typed grammar, conditions and exits, checked when the
file is read; a bad file is one line naming the file, the step and the field, exit 2, and
nothing written."""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from agentproc.arith import symbol_units
from agentproc.cli import main
from agentproc.declared import formula, formula_values
from agentproc.declared.draw import check_conditions, draw_instance, probe_paths
from agentproc.declared.file import read_workflow
from agentproc.declared.formula_types import BOOLEAN, NUMBER, Type, check
from agentproc.declared.identities import check_identities
from agentproc.errors import InputError

BASE: dict[str, Any] = {
    "format": 2,
    "description": "Approve a refund.",
    "inputs": {
        "amount": {"range": [10.0, 900.0], "decimals": 2},
        "tier": {"type": "category", "choices": ["gold", "silver", "basic"]},
        "late": {"type": "boolean", "p_true": 0.3},
        "limit": {"integers": [300, 700]},
    },
    "steps": [
        {"kind": "exit", "name": "too_late", "when": "late and tier == 'basic'", "answer": 0},
        {"tool": "discount", "output": "rate", "formula": "case(tier == 'gold', 0.1, 0.02)"},
        {"tool": "refund", "output": "refund", "formula": "amount * (1 - rate)"},
        {"tool": "check", "output": "big", "formula": "refund > 400"},
        {"tool": "approve", "when": "big", "output": "approved", "formula": "refund - limit / 10"},
        {"tool": "memo", "output": "points", "formula": "round(refund)", "decimals": 0},
        {"tool": "pay", "output": "paid", "formula": "ifelse(big, approved, refund)"},
    ],
    "answer": "paid",
}


def write(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "flow.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def changed(change: Any) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    change(data)
    return data


def test_a_format_2_file_reads_its_types_conditions_exits_and_dependencies(tmp_path):
    wf = read_workflow(write(tmp_path, BASE))
    assert wf.types is not None
    assert wf.types["tier"] == Type.category(["basic", "gold", "silver"])
    assert (wf.types["big"], wf.types["paid"], wf.types["late"]) == (BOOLEAN, NUMBER, BOOLEAN)
    assert [e.name for e in wf.exits] == ["too_late"] and wf.exits[0].after == 0
    assert wf.conditions[3] is not None and wf.conditions[0] is None
    # approve reads big through its ``when``; pay reads approved and big
    assert wf.depends[3] == (2, 3)
    assert wf.depends[5] == (2, 3, 4)
    assert wf.live == (True, True, True, True, False, True)
    assert wf.branched


def test_each_path_is_drawn_with_its_required_steps_and_balance_reaches_them_all(tmp_path):
    wf = read_workflow(write(tmp_path, BASE))
    check_conditions(wf)
    paths = probe_paths(wf)
    assert set(paths) == {"base", "approve", "exit:too_late"}
    for k, path in enumerate(sorted(paths)):
        inst = draw_instance(wf, 0, k, path)
        assert inst.path == path
        if path == "exit:too_late":
            assert inst.exit == 0 and not any(inst.required or ())
        else:
            assert inst.required == (True, True, True, path == "approve", True, True)


def test_a_file_without_format_reads_as_format_1_and_refuses_format_2_fields(tmp_path):
    data = changed(lambda d: d.pop("format"))
    with pytest.raises(InputError) as err:
        read_workflow(write(tmp_path, data))
    assert "inputs.tier.type: typed values, conditions and exits need format = 2" in str(err.value)


def test_the_typed_grammar_evaluates_lazily_and_exactly():
    tree = formula.parse("ifelse(x > 0, y / x, 0)", typed=True)
    assert formula_values.evaluate(tree, {"x": Fraction(0)}) == 0  # y is never read
    tree = formula.parse("case(s >= 70, 'A', s >= 50, 'B', 'C')", typed=True)
    assert [formula_values.evaluate(tree, {"s": Fraction(v)}) for v in (80, 50, 10)] == [
        "A",
        "B",
        "C",
    ]
    tree = formula.parse("1 < a <= 3 and not b", typed=True)
    assert formula_values.evaluate(tree, {"a": Fraction(3), "b": False}) is True


def test_the_number_grammar_still_refuses_comparisons():
    with pytest.raises(formula.FormulaError, match="a comparison is not allowed"):
        formula.parse("a > b")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("tier == 'platinum'", "'platinum' is not one of tier (a category: basic, gold, silver)"),
        ("tier > 3", "'>' compares numbers, not tier (a category"),
        ("amount + late", "'+' takes a number, not late (a boolean)"),
        ("ifelse(amount, 1, 2)", "a condition of ifelse() takes a boolean, not amount"),
        ("ifelse(late, 1, 'a')", "the branches of ifelse() have one type"),
        ("tier == amount", "'==' compares values of one type"),
    ],
)
def test_a_type_mistake_is_named(text: str, message: str):
    env = {"amount": NUMBER, "late": BOOLEAN, "tier": Type.category(["gold", "silver", "basic"])}
    with pytest.raises(formula.FormulaError) as err:
        check(formula.parse(text, typed=True), env)
    assert message in str(err.value)


BAD: list[tuple[str, Any, str]] = [
    (
        "category compared with a number",
        lambda d: d["steps"][1].update(formula="ifelse(tier == 3, 0.1, 0.02)"),
        "steps[1] (discount).formula: 'ifelse(tier == 3, 0.1, 0.02)': '==' compares values "
        "of one type",
    ),
    (
        "a when that is no boolean",
        lambda d: d["steps"][4].update(when="refund"),
        "steps[4] (approve).when: 'refund': a condition is a boolean, not a number",
    ),
    (
        "an unknown category",
        lambda d: d["steps"][0].update(when="tier == 'bronze'"),
        "steps[0] (too_late).when: \"tier == 'bronze'\": 'bronze' is not one of tier",
    ),
    (
        "an exit answer of another type",
        lambda d: d["steps"][0].update(answer="none"),
        "steps[0] (too_late).answer: 'none' is not of the answer's type (paid (a number))",
    ),
    (
        "an exit listed last",
        lambda d: d["steps"].append({"kind": "exit", "name": "end", "when": "late", "answer": 1}),
        "steps[7] (end).kind: an exit listed after the answer's step would never be needed",
    ),
    (
        "a condition that always holds",
        lambda d: d["steps"][4].update(when="refund > 0"),
        "steps[4] (approve).when: 'refund > 0' holds on every one of the",
    ),
    (
        "a required step reading what its path never computes",
        lambda d: d["steps"][5].update(formula="round(approved)"),
        "steps[5] (memo).formula: reads 'approved', which an instance where it is needed "
        "never computes",
    ),
    (
        "an answer step that is not always required",
        lambda d: d["steps"][6].update(when="big"),
        "steps[6] (pay).when: the answer's step is not required on an instance where no exit fires",
    ),
    (
        "a variable named like a literal",
        lambda d: d["inputs"].update(true={"integers": [1, 2]}),
        "inputs.true: 'true' is a boolean literal",
    ),
    (
        "a category without names",
        lambda d: d["inputs"]["tier"].update(choices=[1, 2]),
        "inputs.tier: choices: a category input lists its names (strings)",
    ),
    (
        "weights that do not match",
        lambda d: d["inputs"]["tier"].update(weights=[1, 2]),
        "inputs.tier: weights: give one weight for each of choices",
    ),
    (
        "an exit's condition that is no text",
        lambda d: d["steps"][0].update(when=5),
        "steps[0] (too_late).when: Input should be a valid string",
    ),
    (
        "a step's condition that is no text",
        lambda d: d["steps"][4].update(when=True),
        "steps[4] (approve).when: Input should be a valid string",
    ),
    (
        "an exit's unknown field",
        lambda d: d["steps"][0].update(then=1),
        "steps[0] (too_late).then: Extra inputs are not permitted",
    ),
    (
        "an exit answer of no type",
        lambda d: d["steps"][0].update(answer=[0]),
        "steps[0] (too_late).answer: Input should be a valid",
    ),
    (
        "a literal beyond a float in a condition",
        lambda d: d["steps"][4].update(when="refund > 1e400"),
        "steps[4] (approve).when: 'refund > 1e400': the number 1e400 is too large",
    ),
]


@pytest.mark.parametrize(("case", "change", "message"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_format_2_file_is_one_line_naming_the_field_exit_2_and_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, change: Any, message: str
):
    path = write(tmp_path, changed(change))
    out = tmp_path / "suite"
    code = main(["generate", "--workflow", str(path), "--count", "3", "--out", str(out)])
    _, err = capsys.readouterr()
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{path}: {message}" in err
    assert not out.exists()


def test_an_exit_answer_beyond_a_float_is_one_line_naming_the_exit_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    path = write(tmp_path, changed(lambda d: d["steps"][0].update(answer="BIG")))
    path.write_text(path.read_text(encoding="utf-8").replace('"BIG"', "1e999"), encoding="utf-8")
    out = tmp_path / "suite"
    code = main(["generate", "--workflow", str(path), "--count", "3", "--out", str(out)])
    _, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert f"{path}: steps[0] (too_late).answer: Input should be a finite number" in err
    assert not out.exists()


def test_a_division_by_zero_in_a_branch_not_always_taken_is_no_identity(tmp_path: Path):
    text = "ifelse(big, round(refund), refund / (limit - limit))"
    wf = read_workflow(write(tmp_path, changed(lambda d: d["steps"][5].update(formula=text))))
    check_identities(wf)
    for k in range(5):  # a draw where memo divides by zero is replaced, as any other
        inst = draw_instance(wf, 0, k)
        assert inst.exit is not None or inst.values[2] == symbol_units(True)
