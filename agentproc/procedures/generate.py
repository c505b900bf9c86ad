"""Seeded generation of step-wise arithmetic procedures. Pure: no I/O.

A procedure has two inputs, ``S1 = x`` and ``S2 = y``, then ``N`` steps; step
``k`` defines ``S(k+2) = Si op Sj`` from the ``L`` variables just before it
(the look-back window). One operand is always the farthest variable the window
allows, so look-back difficulty is built in rather than left to chance; the
other operand is a different variable of the window, drawn uniformly. With a
window of one variable (``L = 1``, or the first step) both operands are that
variable, and ``sub``/``div`` (which would give 0 or 1) are replaced by an
``add``/``mul`` of the mix when it has one. A draw that divides by zero, is an
inexact division in integer mode, has a quotient that rounds to zero, or exceeds
the bound ``|value| <= 1e12`` is replaced, and so is a result of zero (it would
absorb every product after it) unless no other choice exists,
by the first valid choice (same farthest operand) from a seeded position.

>>> cell = Cell(steps=5, lookback=3)
>>> p = generate_procedure(cell, seed=0, index=0)
>>> len(p.steps), p.steps[0].output
(5, 'S3')
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agentproc.arith import BOUND, SCALE, SYMBOL, Mode, Op
from agentproc.arith import div_round as _round_div
from agentproc.errors import ConfigError, GenerationError

OP_MIXES: dict[str, tuple[Op, ...]] = {
    "mixed": (Op.ADD, Op.SUB, Op.MUL, Op.DIV),
    "add": (Op.ADD,),
    "sub": (Op.SUB,),
    "mul": (Op.MUL,),
    "div": (Op.DIV,),
}
"""Named operation mixes; a mix may also be spelled ``add+sub``."""

MAX_STEPS = 200
MAX_LOOKBACK = 16


def parse_ops(mix: str) -> tuple[Op, ...]:
    """The operations of a mix name such as ``mixed``, ``mul`` or ``add+sub``."""
    if mix in OP_MIXES:
        return OP_MIXES[mix]
    names = mix.split("+")
    valid = [o.value for o in Op]
    for n in names:
        if n not in valid:
            raise ConfigError(
                f"unknown op mix {mix!r} (expected one of: {', '.join(OP_MIXES)}, "
                "or ops joined by '+')"
            )
    return tuple(dict.fromkeys(Op(n) for n in names))


class Cell(BaseModel):
    """One grid cell: the parameters shared by every procedure of a dataset."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    steps: int = Field(ge=1, le=MAX_STEPS)
    """Number of operation steps N."""
    lookback: int = Field(default=3, ge=1, le=MAX_LOOKBACK)
    """Look-back L: operands come from the L variables just before the new one."""
    range: tuple[float, float] = (1.0, 10.0)
    """Inclusive range the two inputs are drawn from."""
    ops: str = "mixed"
    """Operation mix: ``mixed``, a single op, or ops joined by ``+``."""
    mode: Mode = "decimal"
    """Numeric mode: ``decimal`` (3 decimals) or exact ``integer``."""

    @field_validator("ops")
    @classmethod
    def _known_ops(cls, v: str) -> str:
        parse_ops(v)
        return v

    @model_validator(mode="after")
    def _ordered_range(self) -> Cell:
        lo, hi = self.range
        if lo > hi:
            raise ValueError(f"range low {lo} is above high {hi}")
        if max(abs(lo), abs(hi)) > 10**6:
            raise ValueError("range must lie within [-1e6, 1e6]")
        return self

    @property
    def id(self) -> str:
        """A stable identifier such as ``n25-L3-r1_10-mixed-decimal``."""
        lo, hi = (f"{v:g}" for v in self.range)
        return f"n{self.steps}-L{self.lookback}-r{lo}_{hi}-{self.ops}-{self.mode}"


class StepDef(NamedTuple):
    """One step: ``S(step+2) = S(operands[0]) op S(operands[1])``."""

    step: int
    op: Op
    operands: tuple[int, int]
    """Variable indices (1-based: 1 is S1)."""
    value: int
    """The correct value, in units."""

    @property
    def target(self) -> int:
        """Index of the variable this step defines."""
        return self.step + 2

    @property
    def distances(self) -> tuple[int, int]:
        """How far back each operand lies from the variable being defined."""
        return (self.target - self.operands[0], self.target - self.operands[1])


@dataclass(frozen=True)
class Procedure:
    """A generated procedure: inputs, steps and the correct value of every variable."""

    id: str
    cell: Cell
    seed: int
    index: int
    steps: tuple[StepDef, ...]
    inputs: tuple[int, int]

    @property
    def scale(self) -> int:
        """Units per whole number."""
        return SCALE[self.cell.mode]

    @cached_property
    def values(self) -> tuple[int, ...]:
        """Correct value of S1, S2, ... in units (index 0 is S1)."""
        return self.inputs + tuple(s.value for s in self.steps)

    @property
    def answer(self) -> int:
        """The correct answer: the value of the last variable, in units."""
        return self.values[-1]

    @cached_property
    def live(self) -> tuple[bool, ...]:
        """Per step: whether its output reaches the answer."""
        needed = {len(self.values)}
        flags = [False] * len(self.steps)
        for s in reversed(self.steps):
            if s.target in needed:
                flags[s.step - 1] = True
                needed.update(s.operands)
        return tuple(flags)

    def text(self, step: StepDef) -> str:
        """The English rendering of a step, as an agent is shown it."""
        a, b = (f"S{i}" for i in step.operands)
        return f"S{step.target} = {a} {SYMBOL[step.op]} {b}"

    def depends_on(self, step: StepDef) -> tuple[int, ...]:
        """The step numbers whose outputs this step reads (inputs are not steps)."""
        return tuple(sorted({i - 2 for i in step.operands if i > 2}))


_SELF_TRIVIAL = (Op.SUB, Op.DIV)


def _apply(op: Op, a: int, b: int, scale: int, integer: bool) -> int | None:
    """The value of ``a op b`` if the generator may use it, else ``None``."""
    if op is Op.ADD:
        v = a + b
    elif op is Op.SUB:
        v = a - b
    elif op is Op.MUL:
        v = _round_div(a * b, scale)
    elif b == 0 or (integer and (a * scale) % b):
        return None
    else:
        v = _round_div(a * scale, b)
        if v == 0:  # a quotient that rounds to zero would collapse division chains
            return None
    return v if -BOUND * scale <= v <= BOUND * scale else None


def generate_procedure(cell: Cell, seed: int, index: int) -> Procedure:
    """Generate one procedure; the same arguments give the same procedure anywhere."""
    rng = random.Random(f"agentproc:{seed}:{cell.id}:{index}")
    scale = SCALE[cell.mode]
    integer = cell.mode == "integer"
    ops = parse_ops(cell.ops)
    lookback = cell.lookback
    lo, hi = (round(v * scale) for v in cell.range)
    draw = rng.random  # one uniform draw per choice keeps generation fast
    values = [lo + int(draw() * (hi - lo + 1)), lo + int(draw() * (hi - lo + 1))]
    steps: list[StepDef] = []
    n_ops = len(ops)
    same_ok = tuple(o for o in ops if o not in _SELF_TRIVIAL)
    for k in range(1, cell.steps + 1):
        t = k + 2
        first = t - lookback if t > lookback else 1
        op = ops[int(draw() * n_ops)]
        if t - first > 1:  # a second, distinct operand from the rest of the window
            j = first + 1 + int(draw() * (t - first - 1))
        else:  # a window of one variable: x - x and x / x would be trivial
            j = first
            if op in _SELF_TRIVIAL and same_ok:
                op = same_ok[int(draw() * len(same_ok))]
        pair = (first, j) if draw() < 0.5 else (j, first)
        v = _apply(op, values[pair[0] - 1], values[pair[1] - 1], scale, integer)
        if not v:  # invalid, or zero, which would absorb every product after it
            op, pair, v = _fallback(draw(), ops, first, t, values, scale, cell)
        values.append(v)
        steps.append(StepDef(k, op, pair, v))
    return Procedure(
        id=f"{cell.id}-{index:04d}",
        cell=cell,
        seed=seed,
        index=index,
        steps=tuple(steps),
        inputs=(values[0], values[1]),
    )


def _fallback(
    u: float, ops: tuple[Op, ...], first: int, t: int, values: list[int], scale: int, cell: Cell
) -> tuple[Op, tuple[int, int], int]:
    # The first draw divided by zero or left the bound: try every choice that
    # still reads the farthest variable, starting at a seeded place (u); pairs
    # of two distinct variables first, the farthest variable twice only if none works.
    others = list(range(first + 1, t)) or [first]
    integer = cell.mode == "integer"
    zero: tuple[Op, tuple[int, int], int] | None = None
    for seconds in (others, [first] if others != [first] else []):
        width = len(seconds)
        total = len(ops) * width * 2
        start = int(u * total)
        for n in range(start, start + total):
            c = n % total
            op, rest = ops[c // (2 * width)], c % (2 * width)
            j = seconds[rest // 2]
            pair = (first, j) if rest % 2 == 0 else (j, first)
            v = _apply(op, values[pair[0] - 1], values[pair[1] - 1], scale, integer)
            if v is None:
                continue
            if v == 0:
                zero = zero or (op, pair, v)  # a last resort: zero absorbs the chain
                continue
            return op, pair, v
    if zero is not None:
        return zero
    raise GenerationError(
        f"cell {cell.id}: step {t - 2} cannot be generated: every choice divides by zero, "
        f"is inexact in integer mode, has a quotient that rounds to zero or exceeds the bound "
        f"|value| <= {BOUND:.0e}; "
        "try another op mix or a smaller range"
    )
