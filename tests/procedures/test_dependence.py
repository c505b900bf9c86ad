"""No generated procedure can hide an upstream error: every step depends on its
operands, and no answer is a constant whatever the inputs. Checked over the whole
reference preset (55,000 procedures)."""

from __future__ import annotations

import random

import pytest

from agentproc.arith import Op
from agentproc.errors import GenerationError
from agentproc.procedures import Cell, Procedure, generate_procedure, preset

P = (1 << 89) - 1  # a different field from the generator's own check


def symbolic_answers(p: Procedure, points: list[tuple[int, int]]) -> list[int | None]:
    """The procedure's exact expression of the answer, evaluated mod P at each point."""
    out: list[int | None] = []
    for x, y in points:
        vals = [x, y]
        per_unit = pow(p.scale, P - 2, P)
        for s in p.steps:
            a = vals[s.operands[0] - 1]
            b = vals[s.operands[-1] - 1] if s.constant is None else s.constant * per_unit % P
            if s.op is Op.ADD:
                v = (a + b) % P
            elif s.op is Op.SUB:
                v = (a - b) % P
            elif s.op is Op.MUL:
                v = a * b % P
            else:
                v = a * pow(b, P - 2, P) % P if b else None
            if v is None:
                break
            vals.append(v)
        out.append(vals[-1] if len(vals) == len(p.steps) + 2 else None)
    return out


@pytest.fixture(scope="module")
def reference() -> list[Procedure]:
    grid = preset("reference")
    return [generate_procedure(c, grid.seed, i) for c in grid.cells() for i in range(grid.count)]


def test_no_step_subtracts_or_divides_a_variable_by_itself(reference: list[Procedure]):
    trivial = [
        (p.id, s.step)
        for p in reference
        for s in p.steps
        if s.operands[0] == s.operands[-1] and s.constant is None and s.op in (Op.SUB, Op.DIV)
    ]
    assert trivial == []


def test_no_answer_is_a_constant_independent_of_the_inputs(reference: list[Procedure]):
    rng = random.Random(7)
    points = [(rng.randrange(1, P), rng.randrange(1, P)) for _ in range(3)]
    constant = []
    for p in reference:
        answers = symbolic_answers(p, points)
        if None not in answers and len(set(answers)) == 1:
            constant.append(p.id)
    assert constant == []


def test_the_reference_preset_has_no_answer_of_exactly_zero_or_one_at_look_back_one(
    reference: list[Procedure],
):
    trivial = [p.id for p in reference if p.cell.lookback == 1 and p.answer in (0, 1000)]
    assert trivial == []


def test_at_look_back_one_subtraction_reads_a_constant_not_the_variable_itself():
    p = generate_procedure(Cell(steps=20, lookback=1, ops="sub"), 0, 0)
    for s in p.steps:
        assert s.operands == (s.target - 1,)
        assert s.constant is not None and 1000 <= s.constant <= 10_000


def test_a_cell_whose_every_continuation_is_out_of_bounds_still_fails_naming_it():
    with pytest.raises(GenerationError, match=r"cell n60-L1-r10_100-mul-decimal"):
        generate_procedure(Cell(steps=60, lookback=1, range=(10.0, 100.0), ops="mul"), 0, 0)


def test_a_constant_expression_of_distinct_variables_is_replaced():
    # Checked on every procedure of a cell where S(k) / S(k-1) can repeat an earlier ratio.
    cell = Cell(steps=30, lookback=3, ops="mul+div")
    points = [(3, 5), (7, 11), (13, 17)]
    for i in range(300):
        p = generate_procedure(cell, 0, i)
        answers = symbolic_answers(p, points)
        assert None in answers or len(set(answers)) > 1, p.id
