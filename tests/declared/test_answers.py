"""A multi-field answer's file (format 2, ``answer = [...]``): a good one compiles to a
finish tool with one argument per field; a bad one is refused by ``generate --workflow`` in
one line naming the file and the field, exit 2, nothing written."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from helpers import cli

from agentproc.declared.check import check_spec
from agentproc.declared.spec import WorkflowSpec

GOOD: dict[str, Any] = {
    "format": 2,
    "description": "Price a parcel and say whether it ships.",
    "answer": ["ships", "price"],
    "finish_tool": "submit_parcel",
    "inputs": {
        "weight": {"description": "Kilograms.", "range": [1.0, 40.0]},
        "rate": {"description": "Per kilogram.", "choices": [2.5, 3.0, 3.75]},
        "fragile": {"description": "Fragile.", "type": "boolean", "p_true": 0.3},
    },
    "steps": [
        {
            "kind": "exit",
            "name": "too_heavy",
            "when": "weight > 35",
            "answer": {"ships": False, "price": 0},
        },
        {"tool": "base_price", "output": "base", "formula": "weight * rate", "decimals": 2},
        {"tool": "surcharge", "output": "extra", "formula": "base * 0.1 + 1", "decimals": 2},
        {
            "tool": "price",
            "output": "price",
            "formula": "base * 1.2 + ifelse(fragile, extra, 0)",
            "decimals": 2,
        },
        {"tool": "points", "output": "points", "formula": "round(weight * 3)", "decimals": 0},
        {"tool": "ships", "output": "ships", "formula": "weight * rate < 60"},
    ],
}


def changed(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    data = copy.deepcopy(GOOD)
    at = data
    for key in path[:-1]:
        at = at[key]
    if value is DELETE:
        del at[path[-1]]
    else:
        at[path[-1]] = value
    return data


DELETE = object()

BAD = [
    ("format 1", changed(("format",), 1), "answer: a multi-field answer needs format = 2"),
    (
        "one field",
        changed(("answer",), ["ships"]),
        "answer: a multi-field answer lists 2 to 8 fields (not 1)",
    ),
    (
        "nine fields",
        changed(("answer",), [f"f{i}" for i in range(9)]),
        "answer: a multi-field answer lists 2 to 8 fields (not 9)",
    ),
    (
        "twice",
        changed(("answer",), ["ships", "price", "ships"]),
        "answer: field 'ships' is listed twice",
    ),
    (
        "an input",
        changed(("answer",), ["weight", "ships"]),
        "answer: field 'weight' is an input (a field is a step's output)",
    ),
    (
        "unknown",
        changed(("answer",), ["cost", "ships"]),
        "answer: field 'cost' is no step's output (a field is a step's output)",
    ),
    (
        "without the last step",
        changed(("answer",), ["base", "price"]),
        "answer: the last step's output ('ships') is not among the fields",
    ),
    (
        "exit without a table",
        changed(("steps", 0, "answer"), False),
        "steps[0] (too_heavy).answer: a multi-field answer's exit gives every field",
    ),
    (
        "exit missing a field",
        changed(("steps", 0, "answer"), {"ships": False}),
        "steps[0] (too_heavy).answer.price: field 'price' is missing",
    ),
    (
        "exit with an extra field",
        changed(("steps", 0, "answer"), {"ships": False, "price": 0, "note": "x"}),
        "steps[0] (too_heavy).answer.note: 'note' is not a field of the answer",
    ),
    (
        "exit field ill-typed",
        changed(("steps", 0, "answer"), {"ships": "no", "price": 0}),
        "steps[0] (too_heavy).answer.ships: 'no' is not of the field's type (ships (a boolean))",
    ),
    (
        "exit field with too many decimals",
        changed(("steps", 0, "answer"), {"ships": False, "price": 0.0001}),
        "steps[0] (too_heavy).answer.price: 0.0001 has more than 3 decimals",
    ),
    (
        "a field not a variable name",
        changed(("answer",), ["2x", "ships"]),
        "answer: field '2x' is no step's output",
    ),
    (
        "a table for a single answer",
        changed(("answer",), "ships"),
        "steps[0] (too_heavy).answer: a table of fields needs a multi-field answer",
    ),
    (
        "a field not given on every instance",
        changed(("steps", 3, "when"), "fragile"),
        "steps[3] (price).when: the answer's field 'price' is not given on an instance",
    ),
]


@pytest.mark.parametrize(("data", "message"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_a_bad_multi_field_file_is_one_line_exit_2_and_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: dict[str, Any], message: str
) -> None:
    path = tmp_path / "parcel.json"
    path.write_text(json.dumps(data))
    out = tmp_path / "suite"
    code, printed, err = cli(capsys, "generate", "--workflow", path, "--count", "3", "--out", out)
    assert code == 2, (printed, err)
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{path}: {message}" in err
    assert not out.exists()


def test_a_good_multi_field_file_gives_every_field_its_argument(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "parcel.json"
    path.write_text(json.dumps(GOOD))
    out = tmp_path / "suite"
    code, _, err = cli(capsys, "generate", "--workflow", path, "--count", "6", "--out", out)
    assert code == 0, err
    lines = [json.loads(x) for x in (out / "scenarios.jsonl").read_text().splitlines()]
    for line in lines:
        assert list(line["answer_fields"]) == ["ships", "price"]
        assert (
            line["answer_variable"] == "ships" and line["answer"] == line["answer_fields"]["ships"]
        )
        if line["path"]["exit"] == "too_heavy":
            assert line["answer_fields"] == {"ships": False, "price": 0}
        else:
            values = {s["output"]: s["value"] for s in line["steps"]}
            assert line["answer_fields"] == {"ships": values["ships"], "price": values["price"]}
        assert line["exits"][0]["fields"] == {"ships": False, "price": 0}


def test_every_field_step_is_live_and_so_is_each_step_a_field_reads() -> None:
    wf = check_spec(WorkflowSpec.model_validate(GOOD))
    assert wf.fields == ("ships", "price")
    # price is read by no later step (ships reads the inputs): live as a field; the
    # points are read by nothing (a dead step)
    assert wf.live == (True, True, True, False, True)
    one = changed(("answer",), "ships")
    one["steps"][0]["answer"] = False
    single = check_spec(WorkflowSpec.model_validate(one))
    assert single.live == (False, False, False, False, True)
