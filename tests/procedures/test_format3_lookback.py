"""Procedure format 3: every variable operand within the look-back, look-back 1's sub and
div with a constant written in the step; older suites load with their own meaning."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentproc.errors import InputError
from agentproc.procedures import Cell, generate_procedure
from agentproc.procedures.procedure import FORMAT
from agentproc.procedures.suites import (
    OldFormatWarning,
    procedure_of_json,
    procedure_record,
    read_procedures,
)
from agentproc.workflow import compile_procedure

CELL = {"steps": 3, "lookback": 1, "range": [1.0, 10.0], "ops": "mixed", "mode": "decimal"}
READS_AN_INPUT = [["mul", 2, 2, 9000], ["sub", 3, 1, 7000], ["add", 4, 4, 14000]]
"""Format 2 at look-back 1: step 2 reads S1, three back."""


def line(steps: list[list[object]], fmt: int | None) -> dict[str, object]:
    out: dict[str, object] = {"id": "p", "cell": CELL, "seed": 0, "index": 0}
    out |= {"inputs": [2000, 3000], "steps": steps}
    return out if fmt is None else {**out, "format": fmt}


def test_a_constant_step_is_written_with_its_constant_and_read_back_the_same():
    p = generate_procedure(Cell(steps=30, lookback=1, ops="sub+div"), 0, 0)
    record = procedure_record(p)
    assert record["format"] == FORMAT == 5
    assert all(row[2] == 0 and len(row) == 5 for row in record["steps"])
    assert procedure_of_json(Path("f"), "line 1", record) == p


def test_a_format_two_procedure_at_look_back_one_keeps_its_distant_operand():
    p = procedure_of_json(Path("f"), "line 1", line(READS_AN_INPUT, 2))
    assert p.format == 2 and p.realised_lookback == 3
    assert compile_procedure(p).steps[1].text == "S4 = S3 - S1"


def test_a_format_three_step_beyond_the_look_back_is_refused_naming_it():
    with pytest.raises(InputError, match=r"steps\[1\].*3 back, beyond the look-back 1"):
        procedure_of_json(Path("f"), "line 1", line(READS_AN_INPUT, 3))


def test_a_constant_in_a_procedure_of_an_earlier_format_is_refused():
    steps = [["mul", 2, 2, 9000], ["sub", 3, 0, 5000, 4000], ["add", 4, 4, 10000]]
    assert procedure_of_json(Path("f"), "line 1", line(steps, 3)).steps[1].constant == 4000
    with pytest.raises(InputError, match="constant operand, which procedure format 2"):
        procedure_of_json(Path("f"), "line 1", line(steps, 2))


def test_a_constant_beside_a_right_variable_is_refused():
    steps = [["mul", 2, 2, 9000], ["sub", 3, 2, 5000, 4000], ["add", 4, 4, 10000]]
    with pytest.raises(InputError, match="a constant and a right variable"):
        procedure_of_json(Path("f"), "line 1", line(steps, 3))


def test_a_format_two_suite_loads_with_a_warning_and_its_old_meaning(tmp_path: Path):
    folder = tmp_path / "old"
    folder.mkdir()
    grid = {"blocks": [{"steps": [3], "lookback": [1]}], "count": 1}
    (folder / "suite.json").write_text(json.dumps({"format": 2, "grid": grid, "procedures": 1}))
    (folder / "procedures.jsonl").write_text(json.dumps(line(READS_AN_INPUT, 2)) + "\n")
    with pytest.warns(OldFormatWarning, match="format 2"):
        (p,) = read_procedures(folder)
    assert p.format == 2 and p.steps[1].operands == (3, 1)


def test_an_answer_too_large_to_scale_is_not_taken_as_insensitive_nor_raises():
    from agentproc.arith import Op
    from agentproc.procedures import Procedure, StepDef
    from agentproc.procedures.sensitivity import insensitive_input

    # S2 = 1e6 squared and multiplied up to an answer of 1e306: finite, but not once
    # nudged and scaled to units (the values in units do not matter here).
    pairs = [(2, 2), (3, 3), (4, 4), (5, 5), (6, 6), (7, 6), (8, 3), (9, 2)]
    steps = tuple(StepDef(k, Op.MUL, pair, 1) for k, pair in enumerate(pairs, start=1))
    cell = Cell(steps=8, lookback=7, range=(1.0, 1e6))
    p = Procedure("big", cell, 0, 0, steps, (1000, 10**9))
    assert insensitive_input(p) is None


def test_a_constant_step_with_a_wrong_value_is_refused_naming_the_constant():
    steps = [["mul", 2, 2, 9000], ["sub", 3, 0, 6000, 4000], ["add", 4, 4, 12000]]
    with pytest.raises(InputError, match=r"steps\[1\].*S4 = 6 is not S3 sub 4\.000"):
        procedure_of_json(Path("f"), "line 1", line(steps, 3))
