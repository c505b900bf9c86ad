"""How the answer depends on the inputs and on every step (the rules of procedure
format 2, evaluated as the tools compute from format 5): the inputs some step reads, an
input whose change by :func:`nudge_units` leaves the rounded answer as it is, and the
steps whose effect is masked numerically. Pure: no I/O."""

from __future__ import annotations

from agentproc.arith import apply_units, div_round
from agentproc.procedures.procedure import NUDGE, Procedure, _backward

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


def answer_at(p: Procedure, inputs: tuple[int, int]) -> int | None:
    """The answer from other inputs, every step computed as its tool computes it
    (rounded to a unit, :func:`~agentproc.arith.apply_units`); ``None`` where a step
    divides by zero."""
    values = [*inputs]
    scale = p.scale
    for s in p.steps:
        a = values[s.operands[0] - 1]
        b = values[s.operands[-1] - 1] if s.constant is None else s.constant
        v = apply_units(s.op, a, b, scale)
        if v is None:
            return None
        values.append(v)
    return values[-1]


def read_inputs(p: Procedure) -> tuple[int, ...]:
    """The inputs (1, 2) some step reads: both, but ``S2`` alone at look-back 1 from
    format 3 (the first step's window holds ``S2`` alone)."""
    return tuple(v for v in (1, 2) if any(v in s.operands for s in p.steps))


def insensitive_input(p: Procedure) -> int | None:
    """The input (1 or 2, of those some step reads) whose change by :func:`nudge_units`,
    up or down, leaves the rounded answer as it is (or divides by zero), or ``None``:
    the answer moves both ways with every input read.

    Every step is computed again as the tools compute it, rounded at each step (format
    4 computed in real numbers and rounded the answer alone, so a division's rounding
    could erase a 1% change the real answer kept), the rule a declared workflow's
    instances are drawn under."""
    for var in read_inputs(p):
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
