"""Procedure format 5: the answer moves when an input moves 1% up and when it moves 1%
down, computed as the tools compute (every step rounded), the rule declared workflows
are drawn under. Checked independently of the generator: each step evaluated again in
exact fractions and rounded half away from zero. A suite of format 4 is read as written,
with a warning, and generated again."""

from __future__ import annotations

import hashlib
import json
from fractions import Fraction

import pytest

from agentproc.arith import Op
from agentproc.procedures import Procedure, generate_procedure, preset
from agentproc.procedures.procedure import FORMAT
from agentproc.procedures.suites import (
    OldFormatWarning,
    holds_suite,
    procedure_record,
    read_procedures,
    write_suite,
)

PER_CELL = 60
"""Procedures per cell of the quick preset: format 4 left about one in ten whose answer a
1% move of an input did not change once every step was rounded."""


def rounded(x: Fraction) -> int:
    """Half away from zero, as the tools round."""
    whole = int(abs(x) + Fraction(1, 2))
    return whole if x >= 0 else -whole


def answer(p: Procedure, inputs: tuple[int, int]) -> int | None:
    """The answer from these inputs, every step rounded to a unit (``None``: a division
    by zero)."""
    scale = p.scale
    values = [Fraction(v) for v in inputs]
    for s in p.steps:
        a = values[s.operands[0] - 1]
        b = values[s.operands[-1] - 1] if s.constant is None else Fraction(s.constant)
        if s.op is Op.ADD:
            v = a + b
        elif s.op is Op.SUB:
            v = a - b
        elif s.op is Op.MUL:
            v = Fraction(rounded(a * b / scale))
        elif b == 0:
            return None
        else:
            v = Fraction(rounded(a * scale / b))
        values.append(v)
    return int(values[-1])


def stays_put(p: Procedure) -> list[tuple[str, int]]:
    """``(input, direction)`` for each 1% move of an input some step reads that leaves the
    answer as it is."""
    found = []
    for k, name in enumerate(("S1", "S2"), 1):
        if not any(k in s.operands for s in p.steps):
            continue
        x = p.inputs[k - 1]
        step = max(rounded(Fraction(abs(x), 100)), 1)
        for sign in (1, -1):
            moved = list(p.inputs)
            moved[k - 1] = x + sign * step
            if answer(p, (moved[0], moved[1])) in (None, p.answer):
                found.append((name, sign))
    return found


def test_every_generated_answer_moves_both_ways_with_each_input_read():
    grid = preset("quick")
    found = {}
    for cell in grid.cells():
        for index in range(PER_CELL):
            p = generate_procedure(cell, grid.seed, index)
            assert answer(p, p.inputs) == p.answer
            if moved := stays_put(p):
                found[p.id] = moved
    assert found == {}


def test_a_suite_of_format_4_is_read_as_written_with_a_warning_and_generated_again(tmp_path):
    grid = preset("quick").model_copy(update={"count": 1})
    folder = tmp_path / "s"
    write_suite(grid, folder, jobs=1)
    assert FORMAT == 5 and holds_suite(folder, grid)
    lines = [json.loads(line) for line in (folder / "procedures.jsonl").read_text().splitlines()]
    text = "".join(json.dumps({**line, "format": 4}) + "\n" for line in lines)
    (folder / "procedures.jsonl").write_text(text)
    manifest = json.loads((folder / "suite.json").read_text())
    digest = hashlib.sha256(text.encode()).hexdigest()
    (folder / "suite.json").write_text(json.dumps({**manifest, "format": 4, "sha256": digest}))
    assert not holds_suite(folder, grid)
    with pytest.warns(OldFormatWarning, match="format 4"):
        old = list(read_procedures(folder))
    assert [p.format for p in old] == [4] * len(lines)
    assert [procedure_record(p) for p in old] == [{**line, "format": 4} for line in lines]
