"""The check of a procedure read from a file: every step's value is what its operation
gives, within the bound every generated value keeps."""

from __future__ import annotations

from agentproc.arith import BOUND, Op
from agentproc.procedures.procedure import Cell, Procedure, StepDef
from agentproc.procedures.validity import problem_of


def doubling(steps: int, wrong_at: int | None = None) -> Procedure:
    """S1 = S2 = 5, then each variable the last one added to itself (integer mode)."""
    values, rows = [5, 5], []
    for k in range(1, steps + 1):
        value = values[-1] + values[-1] + (k == wrong_at)
        rows.append(StepDef(k, Op.ADD, (k + 1, k + 1), value))
        values.append(value)
    cell = Cell(steps=steps, mode="integer", lookback=3)
    return Procedure("p", cell, 0, 0, tuple(rows), (5, 5))


def test_sums_within_the_bound_are_a_valid_procedure():
    assert BOUND >= 5 * 2**36
    assert problem_of(doubling(36)) is None


def test_a_sum_beyond_the_bound_is_named_at_its_step():
    assert BOUND < 5 * 2**38
    problem = problem_of(doubling(38))
    assert problem is not None and problem[0] == "steps[37]"
    assert problem[1].startswith("step 38: S40 = ")


def test_a_sum_that_is_not_its_operands_sum_is_named_at_its_step():
    assert problem_of(doubling(10, wrong_at=4)) == ("steps[3]", "step 4: S6 = 81 is not S5 add S5")
