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
* the rounded answer changes when ``S1`` or ``S2`` (each input some step reads)
  moves 1% up and when it moves 1% down (by one unit at least:
  :func:`~agentproc.procedures.sensitivity.nudge_units`), checked by computing every
  step again as the tools do, rounded (since format 5; format 4 computed in real
  numbers and moved up only, so a division's rounding could erase the change), and is
  not exactly 0 or 1; a procedure that fails is drawn again;
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

import random
from collections.abc import Callable, Iterator
from typing import NamedTuple

from agentproc.arith import BOUND, SCALE, Op
from agentproc.errors import GenerationError
from agentproc.procedures.fingerprint import _INPUTS, PRIME, _constant_print, _Fingerprint
from agentproc.procedures.procedure import (
    ADD,
    FORMAT,
    MAX_LOOKBACK,
    MAX_STEPS,
    MUL,
    NUDGE,
    OP_MIXES,
    SUB,
    Cell,
    Procedure,
    StepDef,
    depends_of,
    parse_ops,
)
from agentproc.procedures.sensitivity import insensitive_input, masked, nudge, read_inputs
from agentproc.procedures.validity import _apply, problem_of

__all__ = [
    "ADD",
    "ATTEMPTS",
    "CONSTANTS",
    "FORMAT",
    "MAX_LOOKBACK",
    "MAX_STEPS",
    "MUL",
    "NUDGE",
    "OP_MIXES",
    "PRIME",
    "SUB",
    "Cell",
    "Procedure",
    "StepDef",
    "depends_of",
    "generate_procedure",
    "insensitive_input",
    "masked",
    "nudge",
    "parse_ops",
    "problem_of",
    "read_inputs",
]
"""The names this module has always offered; most now live in the modules they come from."""

_SELF_TRIVIAL = (Op.SUB, Op.DIV)
"""``x - x`` and ``x / x`` do not depend on ``x``: never generated."""


class _Draw(NamedTuple):
    op: Op
    pair: tuple[int, ...]
    """The variable operands (the left alone with a :attr:`constant`)."""
    value: int
    fingerprint: _Fingerprint
    constant: int | None = None


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
