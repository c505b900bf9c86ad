"""How the answer depends on the inputs and on every step (the rules of procedure
format 2): the inputs some step reads, an input whose change by :func:`nudge` leaves the
rounded answer as it is, and the steps whose effect is masked numerically. Pure: no I/O."""

from __future__ import annotations

import math

from agentproc.arith import Op
from agentproc.procedures.procedure import ADD, MUL, NUDGE, SUB, Procedure, _backward


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
