"""A procedure and its grid cell: the inputs, the steps, the correct value of every
variable, and which steps reach the answer (:attr:`Procedure.live`). Pure: no I/O.

How a procedure is drawn, and the rules it is drawn under, is
:mod:`agentproc.procedures.generate`'s part.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agentproc.arith import SCALE, SYMBOL, Mode, Op, render
from agentproc.errors import ConfigError

OP_MIXES: dict[str, tuple[Op, ...]] = {
    "mixed": (Op.ADD, Op.SUB, Op.MUL, Op.DIV),
    "add": (Op.ADD,),
    "sub": (Op.SUB,),
    "mul": (Op.MUL,),
    "div": (Op.DIV,),
}
"""Named operation mixes; a mix may also be spelled ``add+sub``."""
ADD, SUB, MUL = Op.ADD, Op.SUB, Op.MUL
"""The operations as module globals, for the per-step loops: on Python 3.11 reading a
member from its enum class costs about ten times reading a global."""

MAX_STEPS = 200
MAX_LOOKBACK = 16
FORMAT = 5
"""Version of the procedures :func:`generate_procedure` draws: 2 adds the rules
against identities, answers insensitive to the inputs and masked steps; 3 keeps every
variable operand within the look-back (a one-variable window's ``sub``/``div`` takes a
constant, not an input); 4 holds the rule against identities for the inputs too (a
step equal to ``S1`` or ``S2`` up to sign, such as ``S4 = S3 - S1`` with
``S3 = S1 + S2``, is drawn again: format 3 let it through, since the inputs'
fingerprints were not reduced modulo the prime); 5 tests the answer's sensitivity as
the tools compute, every step rounded, with each input moved 1% up and 1% down (format
4 computed in real numbers and moved each input up only, so a division's rounding
could erase the change: a declared workflow's rule). A procedure read without a
version is version 1."""
NUDGE = 0.01
"""The relative change of a value by which the answer's sensitivity is tested."""


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
    """One step: ``S(step+2) = S(operands[0]) op S(operands[1])``, or with a
    :attr:`constant`, ``S(step+2) = S(operands[0]) op constant``."""

    step: int
    op: Op
    operands: tuple[int, ...]
    """Variable indices (1-based: 1 is S1): left and right, or the left alone when the
    right operand is the :attr:`constant`."""
    value: int
    """The correct value, in units."""
    constant: int | None = None
    """The right operand when it is a number written in the step (in units), else ``None``."""

    @property
    def target(self) -> int:
        """Index of the variable this step defines."""
        return self.step + 2

    @property
    def distances(self) -> tuple[int, ...]:
        """How far back each variable operand lies from the variable being defined."""
        return tuple(self.target - i for i in self.operands)

    @property
    def farthest(self) -> int:
        """The largest of :attr:`distances`: how far back its farthest operand lies."""
        return self.target - min(self.operands)

    def terms(self, values: list[int] | tuple[int, ...]) -> tuple[int, int]:
        """Left and right operand values in units (``values[0]`` is S1)."""
        left = values[self.operands[0] - 1]
        if self.constant is not None:
            return left, self.constant
        return left, values[self.operands[1] - 1]


@dataclass(frozen=True)
class Procedure:
    """A generated procedure: inputs, steps and the correct value of every variable."""

    id: str
    cell: Cell
    seed: int
    index: int
    steps: tuple[StepDef, ...]
    inputs: tuple[int, int]
    format: int = FORMAT
    """The procedure format it was generated under (1: before the rules of format 2)."""

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
        """Per step: whether its output reaches the answer (from format 2: and is not
        masked numerically, see :mod:`agentproc.procedures.generate`)."""
        reached, masked_ = _backward(self)
        if self.format < 2:
            return reached
        return tuple(r and not m for r, m in zip(reached, masked_, strict=True))

    @property
    def realised_lookback(self) -> int:
        """The farthest any variable operand lies from the variable it defines (at most
        ``L`` from format 3)."""
        return max(s.farthest for s in self.steps)

    def distance_shares(self) -> dict[int, int]:
        """Realised distance -> how many steps have it as their farthest variable operand."""
        counts: dict[int, int] = {}
        for s in self.steps:
            d = s.farthest
            counts[d] = counts.get(d, 0) + 1
        return dict(sorted(counts.items()))

    def text(self, step: StepDef) -> str:
        """The English rendering of a step, as an agent is shown it."""
        a = f"S{step.operands[0]}"
        b = f"S{step.operands[-1]}" if step.constant is None else render(step.constant, self.scale)
        return f"S{step.target} = {a} {SYMBOL[step.op]} {b}"

    def depends_on(self, step: StepDef) -> tuple[int, ...]:
        """The step numbers whose outputs this step reads (inputs are not steps)."""
        return depends_of(step.operands)


@lru_cache(maxsize=8192)
def depends_of(operands: tuple[int, ...]) -> tuple[int, ...]:
    """:meth:`Procedure.depends_on` of a step reading these variables (the left alone
    beside a constant); kept per operand pair: every procedure reuses the same few."""
    i, j = operands[0], operands[-1]
    if i > j:
        i, j = j, i
    if i == j:
        return (i - 2,) if i > 2 else ()
    return (i - 2, j - 2) if i > 2 else (j - 2,) if j > 2 else ()


def _backward(p: Procedure) -> tuple[tuple[bool, ...], tuple[bool, ...]]:
    """Per step: whether its output reaches the answer, and whether it is :func:`masked`.
    One backward pass from the answer: which variables it reads, and the derivative of
    the answer with respect to every variable."""
    scale = p.scale
    values = [v / scale for v in p.values]
    grad = [0.0] * len(values)
    grad[-1] = 1.0
    needed = [False] * len(values)
    needed[-1] = True
    for step, op, operands, _, constant in reversed(p.steps):
        if not needed[step + 1]:  # its target, S(step + 2)
            continue
        i, j = operands[0], operands[-1]
        needed[i - 1] = needed[j - 1] = True
        g = grad[step + 1]
        if not g:
            continue
        a = values[i - 1]
        b = values[j - 1] if constant is None else constant / scale
        if op is ADD:
            da, db = g, g
        elif op is SUB:
            da, db = g, -g
        elif op is MUL:
            da, db = g * b, g * a
        elif b:
            da, db = g / b, -g * a / (b * b)
        else:  # a procedure read from a file may divide by zero: nothing is masked there
            da = db = math.inf
        grad[i - 1] += da
        if constant is None:
            grad[j - 1] += db
    half, unit = 0.5 / scale, 1 / scale
    return (
        tuple(needed[2:]),
        # :func:`nudge` of each value, written out: a call per variable costs more here.
        tuple(
            abs(g) * max(NUDGE * abs(v), unit) < half
            for g, v in zip(grad[2:], values[2:], strict=True)
        ),
    )
