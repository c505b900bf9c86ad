"""One step's arithmetic in units, as the generator may use it, and the check of a
procedure read from a file against its cell and its own steps. Pure: no I/O."""

from __future__ import annotations

from agentproc.arith import BOUND, Op, render
from agentproc.arith import div_round as _round_div
from agentproc.procedures.procedure import ADD, MUL, SUB, Procedure


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
    low, high = -BOUND * scale, BOUND * scale  # as :func:`_apply` bounds a value
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
        a = values[operands[0] - 1]
        # A sum or a difference inline (most steps), else as the generator computes it.
        v = a + b if op is ADD else a - b if op is SUB else _apply(op, a, b, scale, integer)
        if v != value or not low <= value <= high:
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
