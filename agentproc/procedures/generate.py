"""Seeded generation of step-wise arithmetic procedures. Pure: no I/O.

A procedure has two inputs, ``S1 = x`` and ``S2 = y``, then ``N`` steps; step
``k`` defines ``S(k+2) = Si op Sj`` from the ``L`` variables just before it
(the look-back window): every variable operand lies at distance ``L`` or less.
One operand is always the farthest variable the window
allows, so look-back difficulty is built in rather than left to chance; the
other operand is a different variable of the window, drawn uniformly. With a
window of one variable (``L = 1``) both operands are that
variable for ``add``/``mul``, while ``sub``/``div`` (which would give 0 or 1 of
a variable with itself) take as their second operand a *constant*, a number drawn
from the input range and written in the step (``S9 = S8 - 4.217``; since format 3:
format 2 read an input there, at any distance). At ``L = 1`` the first step reads
``S2`` alone, so ``S1`` is read by no step. A draw that divides by zero, is an inexact
division in integer mode, has a quotient that rounds to zero, exceeds the bound ``|value| <= 1e12``,
or does not depend on the inputs (``x - x``, ``x / x``, or any expression that
is a constant, such as ``(S3 * S4) / (S4 * S3)``: it would hide every upstream
mistake) is replaced, and so is a result of zero (it would absorb every product
after it) unless no other choice exists, by the first valid choice (same
farthest operand) from a seeded position.

Since procedure format 2 (:data:`FORMAT`) nothing erases an upstream mistake:

* no step equals an earlier variable up to sign (``S6 = S5 * S3`` with
  ``S5 = S2 / S3`` is ``S2``), checked symbolically as constants are (an input
  too since format 4, its fingerprint reduced modulo the prime as a step's);
* the rounded answer changes when ``S1`` or ``S2`` changes by 1% (by one unit at
  least: :func:`nudge`), checked by evaluating the procedure again in real
  arithmetic, and is not exactly 0 or 1; a procedure that fails is drawn again;
* a step whose effect on the rounded answer is masked numerically (to first order,
  a 1% change of its value moves the answer by less than half a unit, as the
  small term of ``S26 = S25 + S24`` does in ``S26 / S25``) is not *live*: skipping
  it is skipping a dead step.

>>> cell = Cell(steps=5, lookback=3)
>>> p = generate_procedure(cell, seed=0, index=0)
>>> len(p.steps), p.steps[0].output
(5, 'S3')
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agentproc.arith import BOUND, SCALE, SYMBOL, Mode, Op, render
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
ADD, SUB, MUL = Op.ADD, Op.SUB, Op.MUL
"""The operations as module globals, for the per-step loops: on Python 3.11 reading a
member from its enum class costs about ten times reading a global."""

MAX_STEPS = 200
MAX_LOOKBACK = 16
FORMAT = 4
"""Version of the procedures :func:`generate_procedure` draws: 2 adds the rules
against identities, answers insensitive to the inputs and masked steps; 3 keeps every
variable operand within the look-back (a one-variable window's ``sub``/``div`` takes a
constant, not an input); 4 holds the rule against identities for the inputs too (a
step equal to ``S1`` or ``S2`` up to sign, such as ``S4 = S3 - S1`` with
``S3 = S1 + S2``, is drawn again: format 3 let it through, since the inputs'
fingerprints were not reduced modulo the prime). A procedure read without a version
is version 1."""
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
        masked numerically, see the module docstring)."""
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


def nudge(value: float, scale: int) -> float:
    """How much a value is changed to test what depends on it: :data:`NUDGE` of it,
    and one unit (``1 / scale``) at least."""
    return max(NUDGE * abs(value), 1 / scale)


def _real(op: Op, a: float, b: float) -> float:
    if op is ADD:
        return a + b
    if op is SUB:
        return a - b
    if op is MUL:
        return a * b
    return a / b if b else math.inf


def _answer_at(p: Procedure, inputs: tuple[float, float]) -> float:
    """The answer in real arithmetic (no rounding) from other inputs."""
    values = [*inputs]
    scale = p.scale
    for s in p.steps:
        a = values[s.operands[0] - 1]
        b = values[s.operands[-1] - 1] if s.constant is None else s.constant / scale
        values.append(_real(s.op, a, b))
    return values[-1]


def read_inputs(p: Procedure) -> tuple[int, ...]:
    """The inputs (1, 2) some step reads: both, but ``S2`` alone at look-back 1 from
    format 3 (the first step's window holds ``S2`` alone)."""
    return tuple(v for v in (1, 2) if any(v in s.operands for s in p.steps))


def insensitive_input(p: Procedure) -> int | None:
    """The input (1 or 2, of those some step reads) whose change by :func:`nudge` leaves
    the rounded answer as it is, or ``None``: the answer depends on every input read."""
    scale = p.scale
    x, y = (v / scale for v in p.inputs)
    reads = read_inputs(p)
    for var, moved in ((1, (x + nudge(x, scale), y)), (2, (x, y + nudge(y, scale)))):
        if var not in reads:
            continue
        answer = _answer_at(p, moved)
        # Finite once scaled: a huge real answer times the scale overflows to infinity.
        if math.isfinite(answer * scale) and round(answer * scale) == p.answer:
            return var
    return None


def masked(p: Procedure) -> tuple[bool, ...]:
    """Per step: whether, to first order, changing its value by :func:`nudge` moves the
    answer by less than half a unit (its effect is masked numerically)."""
    return _backward(p)[1]


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


_SELF_TRIVIAL = (Op.SUB, Op.DIV)
"""``x - x`` and ``x / x`` do not depend on ``x``: never generated."""

PRIME = (1 << 61) - 1
"""The field in which every step is also evaluated symbolically (see :class:`_Fingerprint`)."""
_POINTS = (
    (0x2F0A_9D3B_11C7_5E21, 0x1B3C_5D7E_9F01_2345),
    (0x0A1B_2C3D_4E5F_6071, 0x3141_5926_5358_9793),
)
"""Two fixed random points ``(S1, S2)`` modulo :data:`PRIME`."""


class _Fingerprint(NamedTuple):
    """A variable's exact expression in the inputs, evaluated at two random points mod a prime.

    Equal values at both points mean the expression is (with overwhelming
    probability) a constant: it does not depend on the inputs, so a step that
    produces it would erase every upstream mistake. Equal to an earlier variable's
    pair, or to its negation, the step is that variable up to sign and erases every
    mistake made since. Division is by modular
    inverse, so ``(S3 * S4) / (S4 * S3)`` is caught as the constant 1.
    """

    a: int
    b: int

    @property
    def constant(self) -> bool:
        return self.a == self.b

    @property
    def signed(self) -> tuple[tuple[int, int], tuple[int, int]]:
        """This expression and its negation, as pairs: the identities it must not repeat."""
        return (self.a, self.b), ((PRIME - self.a) % PRIME, (PRIME - self.b) % PRIME)

    def apply(self, op: Op, other: _Fingerprint) -> _Fingerprint | None:
        if op is ADD:
            return _Fingerprint((self.a + other.a) % PRIME, (self.b + other.b) % PRIME)
        if op is SUB:
            return _Fingerprint((self.a - other.a) % PRIME, (self.b - other.b) % PRIME)
        if op is MUL:
            return _Fingerprint(self.a * other.a % PRIME, self.b * other.b % PRIME)
        if other.a == 0 or other.b == 0:
            return None
        inv_a, inv_b = pow(other.a, PRIME - 2, PRIME), pow(other.b, PRIME - 2, PRIME)
        return _Fingerprint(self.a * inv_a % PRIME, self.b * inv_b % PRIME)


_INPUTS = tuple(_Fingerprint(_POINTS[0][n] % PRIME, _POINTS[1][n] % PRIME) for n in range(2))
"""The inputs' fingerprints, reduced modulo :data:`PRIME` as every step's is: an
unreduced one (two of the points exceed the prime) would never equal the step that
reproduces its input, and the identity would go unseen."""


def _apply(op: Op, a: int, b: int, scale: int, integer: bool) -> int | None:
    """The value of ``a op b`` if the generator may use it, else ``None``."""
    if op is ADD:
        v = a + b
    elif op is SUB:
        v = a - b
    elif op is MUL:
        v = _round_div(a * b, scale)
    elif b == 0 or (integer and (a * scale) % b):
        return None
    else:
        v = _round_div(a * scale, b)
        if v == 0:  # a quotient that rounds to zero would collapse division chains
            return None
    return v if -BOUND * scale <= v <= BOUND * scale else None


def problem_of(p: Procedure) -> tuple[str, str] | None:
    """``(field, what is wrong)`` with a procedure read from a file, or ``None``: inputs
    outside its cell's range, a step reading a variable it cannot see, a constant beside
    a right variable or before format 3, a step whose value is not what its operation
    gives, a variable operand beyond the look-back from format 3. One pass over the steps
    (relabelling checks every distinct procedure of a run)."""
    scale, integer = p.scale, p.cell.mode == "integer"
    lo, hi = (round(v * scale) for v in p.cell.range)
    for name, x in zip(("S1", "S2"), p.inputs, strict=True):
        if not lo <= x <= hi:
            return "inputs", f"{name} = {x / scale:g} is outside the range {p.cell.range}"
    lookback = p.cell.lookback if p.format >= 3 else None  # held to it from format 3
    values = list(p.inputs)
    for step, op, operands, value, constant in p.steps:
        target, first, last = step + 2, operands[0], operands[-1]
        if first > last:
            first, last = last, first
        if first < 1 or last >= target:
            return "steps", f"step {step} reads a variable it cannot see"
        if constant is None:
            b = values[operands[-1] - 1]
        elif len(operands) != 1:
            return "steps", f"step {step} has a constant and a right variable (give 0)"
        elif p.format < 3:
            return "steps", (
                f"step {step} has a constant operand, which procedure format {p.format} "
                "has not (format 3 on)"
            )
        else:
            b = constant
        if _apply(op, values[operands[0] - 1], b, scale, integer) != value:
            right = f"S{operands[-1]}" if constant is None else render(constant, scale)
            return f"steps[{step - 1}]", (
                f"step {step}: S{target} = {value / scale:g} is not "
                f"S{operands[0]} {op.value} {right}"
            )
        if lookback is not None and target - first > lookback:  # :attr:`StepDef.farthest`
            return f"steps[{step - 1}]", (
                f"step {step} reads a variable {target - first} back, beyond the "
                f"look-back {lookback}"
            )
        values.append(value)
    return None


class _Draw(NamedTuple):
    op: Op
    pair: tuple[int, ...]
    """The variable operands (the left alone with a :attr:`constant`)."""
    value: int
    fingerprint: _Fingerprint
    constant: int | None = None


def _constant_print(units: int, scale: int) -> _Fingerprint:
    """The fingerprint of a constant (``units / scale``): the same at both points."""
    c = units * pow(scale, PRIME - 2, PRIME) % PRIME
    return _Fingerprint(c, c)


def _try(
    op: Op,
    pair: tuple[int, ...],
    values: list[int],
    prints: list[_Fingerprint],
    scale: int,
    integer: bool,
    seen: set[tuple[int, int]],
    constant: int | None = None,
) -> _Draw | None:
    """A step the generator may use, or ``None``: in bounds, exact where it must be,
    and depending on its operands (no ``x - x``, ``x / x``, ``x - 0`` or constant
    expression, and no expression ``seen`` already: an earlier variable up to sign).
    With a ``constant``, ``pair`` holds the left operand alone."""
    i, j = pair[0], pair[-1]
    if constant is None:
        if i == j and op in _SELF_TRIVIAL:
            return None
        b, right = values[j - 1], prints[j - 1]
    elif constant == 0:  # x - 0 and x / 0: no step
        return None
    else:
        b, right = constant, _constant_print(constant, scale)
    v = _apply(op, values[i - 1], b, scale, integer)
    if v is None:
        return None
    fp = prints[i - 1].apply(op, right)
    if fp is None or fp.constant or (fp.a, fp.b) in seen:
        return None
    return _Draw(op, pair, v, fp, constant)


_NONE_SEEN: set[tuple[int, int]] = set()
"""No expression to avoid: the draws of a cell whose every strict draw got stuck."""
ATTEMPTS = 20
"""Draws of a whole procedure before a cell is declared impossible."""


def generate_procedure(cell: Cell, seed: int, index: int) -> Procedure:
    """Generate one procedure; the same arguments give the same procedure anywhere.

    A procedure that gets stuck (a step with no valid choice left, e.g. a chain of
    divisions whose every continuation is a constant) or whose answer is insensitive
    to an input (or exactly 0 or 1) is drawn again from a seed derived from the same
    arguments, up to :data:`ATTEMPTS` times; then the first complete draw is kept even
    if its answer is insensitive (a cell such as products on ``[0, 1]``, which collapse
    to zero, has no other). A cell whose every draw gets stuck while avoiding earlier
    variables up to sign (products and quotients of integers, which stay exact and
    bounded only through such identities) is drawn again with identities allowed as
    any other step.
    """
    stream = f"agentproc:{seed}:{cell.id}:{index}"
    kept: Procedure | None = None
    for strict in (True, False):
        for attempt in range(ATTEMPTS):
            name = f"{stream}:{attempt}" if attempt else stream
            try:
                p = _draw_procedure(cell, seed, index, name if strict else f"{name}:lax", strict)
            except GenerationError:
                if not strict and attempt == ATTEMPTS - 1 and kept is None:
                    raise
                continue
            if p.answer not in (0, p.scale) and insensitive_input(p) is None:
                return p
            kept = kept or p
        if kept is not None:
            return kept
    raise AssertionError("unreachable")  # pragma: no cover


def _draw_procedure(
    cell: Cell, seed: int, index: int, stream: str, strict: bool = True
) -> Procedure:
    rng = random.Random(stream)
    scale = SCALE[cell.mode]
    integer = cell.mode == "integer"
    ops = parse_ops(cell.ops)
    lookback = cell.lookback
    lo, hi = (round(v * scale) for v in cell.range)
    draw = rng.random  # one uniform draw per choice keeps generation fast
    values = [lo + int(draw() * (hi - lo + 1)), lo + int(draw() * (hi - lo + 1))]
    prints = list(_INPUTS)
    seen = {pair for fp in prints for pair in fp.signed} if strict else _NONE_SEEN
    steps: list[StepDef] = []
    n_ops = len(ops)
    for k in range(1, cell.steps + 1):
        t = k + 2
        first = max(t - lookback, 1)
        op = ops[int(draw() * n_ops)]
        constant: int | None = None
        if t - first > 1:  # a second, distinct operand from the rest of the window
            j = first + 1 + int(draw() * (t - first - 1))
            pair: tuple[int, ...] = (first, j) if draw() < 0.5 else (j, first)
        elif op in _SELF_TRIVIAL:  # a window of one variable: x - x, x / x would be trivial
            constant, pair = lo + int(draw() * (hi - lo + 1)), (first,)
        else:
            pair = (first, first)
        got = _try(op, pair, values, prints, scale, integer, seen, constant)
        if got is None or got.value == 0:  # invalid, or zero, which absorbs every product
            got = _choose(draw, ops, first, t, values, prints, scale, cell, seen)
        values.append(got.value)
        prints.append(got.fingerprint)
        if strict:
            seen.update(got.fingerprint.signed)
        steps.append(StepDef(k, got.op, got.pair, got.value, got.constant))
    return Procedure(
        id=f"{cell.id}-{index:04d}",
        cell=cell,
        seed=seed,
        index=index,
        steps=tuple(steps),
        inputs=(values[0], values[1]),
    )


CONSTANTS = 64
"""Constants a one-variable window's ``sub``/``div`` tries before it gives up: every
value of a range that holds no more, else that many seeded draws from it."""


def _constants(draw: Callable[[], float], lo: int, hi: int) -> list[int]:
    """The constants to try, from a seeded place: all of a small range, else draws."""
    size = hi - lo + 1
    if size <= CONSTANTS:
        start = int(draw() * size)
        return [lo + (start + n) % size for n in range(size)]
    return [lo + int(draw() * size) for _ in range(CONSTANTS)]


def _choose(
    draw: Callable[[], float],
    ops: tuple[Op, ...],
    first: int,
    t: int,
    values: list[int],
    prints: list[_Fingerprint],
    scale: int,
    cell: Cell,
    seen: set[tuple[int, int]],
) -> _Draw:
    # The first draw was not usable: try every choice that still reads the
    # farthest variable, starting at a seeded place; pairs of two distinct
    # variables first, the farthest variable twice only if none works.
    # A window of one variable: add and mul read it twice, sub and div a constant.
    # Strict draws (``seen`` holds every earlier expression up to sign) get stuck here
    # rather than repeat one: the procedure is drawn again.
    integer = cell.mode == "integer"
    zero: _Draw | None = None
    for got in _choices(draw, ops, first, t, cell):
        found = _try(got.op, got.pair, values, prints, scale, integer, seen, got.constant)
        if found is None:
            continue
        if found.value == 0:
            zero = zero or found  # a last resort: zero absorbs the chain
            continue
        return found
    if zero is not None:
        return zero
    raise GenerationError(
        f"cell {cell.id}: step {t - 2} cannot be generated: every choice divides by zero, "
        f"is inexact in integer mode, has a quotient that rounds to zero, exceeds the bound "
        f"|value| <= {BOUND:.0e}, does not depend on the inputs or repeats an earlier "
        "variable up to sign; "
        "try another op mix or a smaller range"
    )


_NO_PRINT = _Fingerprint(0, 0)


def _choices(
    draw: Callable[[], float], ops: tuple[Op, ...], first: int, t: int, cell: Cell
) -> Iterator[_Draw]:
    """The candidate steps of :func:`_choose`, in the order they are tried (their value
    and fingerprint not yet computed)."""
    u = draw()
    if t - first == 1:  # one variable: add/mul read it twice, sub/div a constant
        scale = SCALE[cell.mode]
        lo, hi = (round(v * scale) for v in cell.range)
        constants = _constants(draw, lo, hi)
        start = int(u * len(ops))
        for n in range(start, start + len(ops)):
            op = ops[n % len(ops)]
            if op not in _SELF_TRIVIAL:
                yield _Draw(op, (first, first), 0, _NO_PRINT)
                continue
            for c in constants:
                yield _Draw(op, (first,), 0, _NO_PRINT, c)
        return
    for seconds in (list(range(first + 1, t)), [first]):
        width = len(seconds)
        total = len(ops) * width * 2
        start = int(u * total)
        for n in range(start, start + total):
            c = n % total
            op, rest = ops[c // (2 * width)], c % (2 * width)
            j = seconds[rest // 2]
            yield _Draw(op, (first, j) if rest % 2 == 0 else (j, first), 0, _NO_PRINT)
