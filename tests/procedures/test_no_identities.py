"""No step equals an input or an earlier step up to sign, in any cell.

Checked independently of the generator's own fingerprints: every variable is
evaluated as an exact expression of the inputs at random points modulo a prime
(Schwartz-Zippel: two different rational expressions agree at a random point with
negligible probability), at seeded points of our own choosing.
"""

from __future__ import annotations

import json
import random

import pytest

from agentproc.arith import Op
from agentproc.procedures import Cell, Procedure, generate_procedure
from agentproc.procedures.suites import (
    OldFormatWarning,
    holds_suite,
    preset,
    read_procedures,
    write_suite,
)

PRIME = (1 << 127) - 1
"""A Mersenne prime other than the generator's, so the check shares nothing with it."""
POINTS = 2


def _points(seed: int) -> list[tuple[int, int]]:
    rng = random.Random(f"identity-check:{seed}")
    return [(rng.randrange(1, PRIME), rng.randrange(1, PRIME)) for _ in range(POINTS)]


def _apply(op: Op, a: int, b: int) -> int:
    if op is Op.ADD:
        return (a + b) % PRIME
    if op is Op.SUB:
        return (a - b) % PRIME
    if op is Op.MUL:
        return a * b % PRIME
    return a * pow(b, PRIME - 2, PRIME) % PRIME


def identities(p: Procedure, points: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``(step, variable)`` for each step whose expression is an earlier variable's
    (an input's or a step's) or its negation."""
    scale = p.scale
    found = []
    prints = [tuple(x for x, _ in points), tuple(y for _, y in points)]
    for s in p.steps:
        if s.constant is None:
            right = prints[s.operands[-1] - 1]
        else:
            c = s.constant * pow(scale, PRIME - 2, PRIME) % PRIME
            right = tuple(c for _ in points)
        left = prints[s.operands[0] - 1]
        fp = tuple(_apply(s.op, a, b) for a, b in zip(left, right, strict=True))
        negated = tuple((PRIME - v) % PRIME for v in fp)
        for var, earlier in enumerate(prints, 1):
            if earlier in (fp, negated):
                found.append((s.step, var))
                break
        prints.append(fp)
    return found


def grid() -> list[Cell]:
    """Mixed operations over look-backs 1 to 7, lengths 5 to 95 and the three ranges
    (single-operation cells may have only identities left, as documented)."""
    return [
        Cell(steps=steps, lookback=lookback, range=bounds)
        for lookback in range(1, 8)
        for steps in (5, 8, 15, 35, 65, 95)
        for bounds in ((0.0, 1.0), (1.0, 10.0), (10.0, 100.0))
    ]


@pytest.mark.parametrize("cell", grid(), ids=lambda c: c.id)
def test_no_step_equals_an_input_or_an_earlier_step_up_to_sign(cell):
    points = _points(cell.steps * 31 + cell.lookback)
    found = {}
    for index in range(8):
        p = generate_procedure(cell, 0, index)
        if got := identities(p, points):
            found[p.id] = got
    assert found == {}


def test_no_preset_procedure_equals_an_earlier_variable_up_to_sign():
    points = _points(0)
    found = {}
    for name in ("quick", "reference"):
        for cell in preset(name).cells():
            if cell.ops in ("sub", "div", "mul"):
                continue  # single operations: identities may be the only choice left
            for index in range(3):
                p = generate_procedure(cell, preset(name).seed, index)
                if got := identities(p, points):
                    found[p.id] = got
    assert found == {}


@pytest.mark.parametrize("seed", [11, 24])
def test_the_known_identity_is_gone(seed):
    """``n8-L3-r10_100-mixed-decimal-0003`` drew ``S4 = S3 - S1`` (= S2, with
    ``S3 = S1 + S2``) and ``S6 = S3 - S4`` (= S1) before the inputs' fingerprints were
    reduced modulo the generator's prime."""
    p = generate_procedure(Cell(steps=8, lookback=3, range=(10.0, 100.0)), seed, 3)
    assert p.id == "n8-L3-r10_100-mixed-decimal-0003"
    assert identities(p, _points(seed)) == []


def test_a_suite_of_format_3_is_read_with_a_warning_and_generated_again(tmp_path):
    grid = preset("quick").model_copy(update={"count": 1})
    folder = tmp_path / "s"
    write_suite(grid, folder, jobs=1)
    assert holds_suite(folder, grid)
    manifest = json.loads((folder / "suite.json").read_text())
    (folder / "suite.json").write_text(json.dumps({**manifest, "format": 3}))
    assert not holds_suite(folder, grid)
    with pytest.warns(OldFormatWarning, match="format 3"):
        list(read_procedures(folder))
