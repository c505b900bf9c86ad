"""How the answer depends on the inputs and on every step (the rules of procedure
format 2, and from format 5 as the tools compute): the inputs some step reads, an input
whose 1% change leaves the rounded answer as it is, and the steps whose effect is masked
numerically. Pure: no I/O."""

from __future__ import annotations

import math

from agentproc.arith import Op, div_round
from agentproc.procedures.procedure import ADD, MUL, NUDGE, SUB, Procedure, _backward

PERCENT = round(1 / NUDGE)
""":data:`~agentproc.procedures.procedure.NUDGE` as a divisor: a value moved by 1% moves
by ``value / PERCENT``."""


def nudge(value: float, scale: int) -> float:
    """How much a value is changed to test what depends on it: :data:`NUDGE` of it,
    and one unit (``1 / scale``) at least."""
    return max(NUDGE * abs(value), 1 / scale)


def nudge_units(units: int) -> int:
    """:func:`nudge` of a value in units, itself in whole units: 1% of it rounded half
    away from zero, and one unit at least (a declared workflow's inputs move by this,
    in thousandths, too)."""
    return max(div_round(abs(units), PERCENT), 1)


def _real(op: Op, a: float, b: float) -> float:
    if op is ADD:
        return a + b
    if op is SUB:
        return a - b
    if op is MUL:
        return a * b
    return a / b if b else math.inf


def _real_answer(p: Procedure, inputs: tuple[float, float]) -> float:
    """The answer in real arithmetic (no rounding) from other inputs."""
    values = [*inputs]
    scale = p.scale
    for s in p.steps:
        a = values[s.operands[0] - 1]
        b = values[s.operands[-1] - 1] if s.constant is None else s.constant / scale
        values.append(_real(s.op, a, b))
    return values[-1]


def answer_at(p: Procedure, inputs: tuple[int, int]) -> int | None:
    """The answer from other inputs, every step computed as its tool computes it
    (rounded to a unit, as :func:`~agentproc.arith.apply_units` does); ``None`` where a
    step divides by zero."""
    values = [*inputs]
    scale = p.scale
    for _, op, operands, _, constant in p.steps:
        a = values[operands[0] - 1]
        b = values[operands[-1] - 1] if constant is None else constant
        # apply_units written out: a call per step is most of the cost here.
        if op is ADD:
            values.append(a + b)
        elif op is SUB:
            values.append(a - b)
        elif op is MUL:
            values.append(div_round(a * b, scale))
        elif b:
            values.append(div_round(a * scale, b))
        else:
            return None
    return values[-1]


def read_inputs(p: Procedure) -> tuple[int, ...]:
    """The inputs (1, 2) some step reads: both, but ``S2`` alone at look-back 1 from
    format 3 (the first step's window holds ``S2`` alone)."""
    return tuple(v for v in (1, 2) if any(v in s.operands for s in p.steps))


def insensitive_input(p: Procedure) -> int | None:
    """The input (1 or 2, of those some step reads) on which the answer does not depend,
    or ``None``: the answer depends on every input read.

    An input fails when its change by :func:`nudge` leaves the answer, computed in real
    numbers and rounded once, as it is (format 2), or when its change by
    :func:`nudge_units`, up or down, leaves the answer as the tools compute it, every
    step rounded, as it is or divides by zero (format 5: a division's rounding could
    erase the change the real answer kept; the rule a declared workflow's instances are
    drawn under)."""
    reads = read_inputs(p)
    return _moves_in_real_numbers(p, reads) or _moves_as_computed(p, reads)


def _moves_in_real_numbers(p: Procedure, reads: tuple[int, ...]) -> int | None:
    """The first input read whose 1% rise leaves the real answer's rounding as it is."""
    scale = p.scale
    x, y = (v / scale for v in p.inputs)
    for var, moved in ((1, (x + nudge(x, scale), y)), (2, (x, y + nudge(y, scale)))):
        if var not in reads:
            continue
        answer = _real_answer(p, moved)
        # Finite once scaled: a huge real answer times the scale overflows to infinity.
        if math.isfinite(answer * scale) and round(answer * scale) == p.answer:
            return var
    return None


def _moves_as_computed(p: Procedure, reads: tuple[int, ...]) -> int | None:
    """The first input read whose 1% move, up or down, leaves the answer the tools
    compute as it is (or divides by zero)."""
    for var in reads:
        x = p.inputs[var - 1]
        step = nudge_units(x)
        for moved in (x + step, x - step):
            inputs = (moved, p.inputs[1]) if var == 1 else (p.inputs[0], moved)
            if answer_at(p, inputs) in (None, p.answer):
                return var
    return None


def masked(p: Procedure) -> tuple[bool, ...]:
    """Per step: whether, to first order, changing its value by :func:`nudge` moves the
    answer by less than half a unit (its effect is masked numerically)."""
    return _backward(p)[1]
