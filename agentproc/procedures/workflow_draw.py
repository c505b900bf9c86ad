"""Instances of a declared workflow: inputs drawn, every step's value computed. Pure.

Each instance draws its inputs (seeded), evaluates every step's formula exactly and
rounds it to the step's decimals, half away from zero, in thousandths
(:data:`SCALE`), as the mock tools will; a later step reads the rounded value. An
instance that divides by zero, has a value beyond ``|v| <= 1e12``, or whose answer
changes with none of its inputs (each moved by 1%, one grid step at least) is drawn
again; after :data:`ATTEMPTS` draws, one error names the step that failed most.

What holds whatever the inputs is checked once, symbolically (:func:`check_identities`):
each step's expression in the inputs is evaluated at two random points modulo a prime,
as the procedure generator does, and a step that divides by zero there, is a constant
(``x - x``; an input with one possible value counts as a constant, so a range that
always divides by zero is caught), or equals an earlier variable up to sign
(``a * b / b``) is refused, naming the step.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction

from agentproc.arith import BOUND, SCALE, round_units
from agentproc.errors import InputError
from agentproc.procedures import formula
from agentproc.procedures.workflow_file import MAX_DECIMALS, DeclaredWorkflow, InputSpec

UNITS = SCALE["decimal"]
"""Units per whole number of a workflow's values: thousandths."""
ATTEMPTS = 100
"""Draws of one instance before the workflow is declared impossible."""
NUDGE = Fraction(1, 100)
"""The relative change of an input by which the answer's dependence is tested."""
_POINTS = 2
"""Random points of the symbolic check."""


@dataclass(frozen=True)
class WorkflowInstance:
    """One drawn instance: every variable's correct value, in thousandths."""

    index: int
    inputs: tuple[int, ...]
    """Each input's value, in declared order."""
    values: tuple[int, ...]
    """Each step's value, in listed order."""


def _field_value(units: int) -> int:
    """A value in thousandths as a field element."""
    return units * pow(UNITS, formula.PRIME - 2, formula.PRIME) % formula.PRIME


def _single(spec: InputSpec) -> Fraction | None:
    """The one value an input can take, or ``None`` when it can take several."""
    if spec.choices is not None:
        distinct = {Fraction(repr(c)) for c in spec.choices}
        return distinct.pop() if len(distinct) == 1 else None
    lo, hi = _grid(spec)
    return Fraction(lo, 10**spec.decimals if spec.range else 1) if lo == hi else None


def _grid(spec: InputSpec) -> tuple[int, int]:
    """A range's or integer range's bounds in grid steps (``10**-decimals`` or ones)."""
    if spec.integers is not None:
        return spec.integers
    step = 10**spec.decimals
    lo, hi = (Fraction(repr(v)) * step for v in spec.range or (0, 0))
    return -((-lo.numerator) // lo.denominator), hi.numerator // hi.denominator


def check_identities(wf: DeclaredWorkflow) -> None:
    """Refuse a step that divides by zero, is a constant or equals an earlier variable
    up to sign whatever the inputs (one :class:`InputError` naming the step)."""
    rng = random.Random("agentproc:workflow:identities")
    points: list[dict[str, int]] = [{} for _ in range(_POINTS)]
    names: dict[tuple[int, ...], str] = {}
    for name, spec in wf.spec.inputs.items():
        single = _single(spec)
        for env in points:
            env[name] = (
                rng.randrange(1, formula.PRIME)
                if single is None
                else single.numerator
                * pow(single.denominator, formula.PRIME - 2, formula.PRIME)
                % formula.PRIME
            )
        if single is None:
            _remember(names, tuple(env[name] for env in points), name)
    for i, (s, tree) in enumerate(zip(wf.spec.steps, wf.trees, strict=True)):
        where = wf.field(i, "formula")
        prints = [formula.fingerprint(tree, env) for env in points]
        if any(p is None for p in prints):
            raise InputError(wf.where, f"{s.formula!r} divides by zero whatever the inputs", where)
        key = tuple(p for p in prints if p is not None)
        if len(set(key)) == 1:
            raise InputError(
                wf.where, f"{s.formula!r} is a constant: it does not depend on the inputs", where
            )
        if key in names:
            raise InputError(
                wf.where,
                f"{s.formula!r} equals {names[key]} whatever the inputs "
                "(it would hide every mistake made before it)",
                where,
            )
        _remember(names, key, s.output)
        for env, p in zip(points, key, strict=True):
            env[s.output] = p


def _remember(names: dict[tuple[int, ...], str], key: tuple[int, ...], name: str) -> None:
    names.setdefault(key, name)
    names.setdefault(tuple((formula.PRIME - k) % formula.PRIME for k in key), f"-{name}")


def _draw_input(spec: InputSpec, rng: random.Random) -> int:
    if spec.choices is not None:
        return round(Fraction(repr(rng.choice(spec.choices))) * UNITS)
    lo, hi = _grid(spec)
    per = 10 ** (MAX_DECIMALS - spec.decimals) if spec.range is not None else UNITS
    return rng.randint(lo, hi) * per


class _Failure(Exception):
    def __init__(self, step: int, reason: str) -> None:
        self.step, self.reason = step, reason


def evaluate_steps(wf: DeclaredWorkflow, inputs: tuple[int, ...]) -> tuple[int, ...]:
    """Every step's value in thousandths from these inputs (raises ``_Failure``)."""
    env = {n: Fraction(v, UNITS) for n, v in zip(wf.input_names, inputs, strict=True)}
    values = []
    for i, (s, tree) in enumerate(zip(wf.spec.steps, wf.trees, strict=True)):
        exact = formula.evaluate(tree, env)
        if exact is None:
            raise _Failure(i, "divides by zero")
        shift = 10**s.decimals
        units = round_units(exact * shift) * (UNITS // shift)
        if abs(units) > BOUND * UNITS:
            raise _Failure(i, "exceeds the bound |value| <= 1e12")
        values.append(units)
        env[s.output] = Fraction(units, UNITS)
    return tuple(values)


def _answer_moves(wf: DeclaredWorkflow, inputs: tuple[int, ...], answer: int) -> bool:
    """Whether moving some input by :data:`NUDGE` (one grid step at least) changes the
    answer."""
    for k, spec in enumerate(wf.spec.inputs.values()):
        if _single(spec) is not None:
            continue
        grid = 10 ** (MAX_DECIMALS - spec.decimals) if spec.range is not None else UNITS
        step = max(round_units(abs(inputs[k]) * NUDGE), grid)
        moved = list(inputs)
        moved[k] += step
        try:
            if evaluate_steps(wf, tuple(moved))[-1] != answer:
                return True
        except _Failure:
            continue
    return False


def draw_instance(wf: DeclaredWorkflow, seed: int, index: int) -> WorkflowInstance:
    """One instance; the same arguments give the same instance anywhere.

    Raises:
        InputError: no valid draw in :data:`ATTEMPTS` (naming the step that failed most).
    """
    failures: dict[tuple[int, str], int] = {}
    for attempt in range(ATTEMPTS):
        rng = random.Random(f"agentproc:workflow:{seed}:{index}:{attempt}")
        inputs = tuple(_draw_input(spec, rng) for spec in wf.spec.inputs.values())
        try:
            values = evaluate_steps(wf, inputs)
        except _Failure as f:
            failures[f.step, f.reason] = failures.get((f.step, f.reason), 0) + 1
            continue
        if not _answer_moves(wf, inputs, values[-1]):
            key = (len(values) - 1, "gives an answer that changes with none of the inputs")
            failures[key] = failures.get(key, 0) + 1
            continue
        return WorkflowInstance(index, inputs, values)
    (step, reason), count = max(failures.items(), key=lambda kv: kv[1])
    raise InputError(
        wf.where,
        f"{wf.spec.steps[step].formula!r} {reason} in {count} of {ATTEMPTS} draws of "
        f"instance {index}: no instance can be drawn (narrow the input ranges)",
        wf.field(step, "formula"),
    )
