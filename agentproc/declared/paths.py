"""The path of a branched workflow's instance (format 2): which steps it requires, which
exit fires, every value. Pure.

Steps are walked in listed order on the instance's correct values. An exit whose
condition holds ends the procedure there (the first one that holds: later exits are not
looked at); a step is required when no exit has fired before it and its ``when`` (if any)
holds. Every step's formula is still computed where it can be (its tool is offered on
every instance and computes on whatever it is given): a step that is not required and
reads a value this instance never computes, or divides by zero, has no value
(:data:`~agentproc.arith.UNDEFINED`). A required step that would read such a value is a
mistake in the file, named at once; one that divides by zero makes the draw be replaced,
as in a workflow of format 1.

Each path has a name: the conditional steps it takes, joined by ``+``, and
``exit:NAME`` when an exit fires (``base`` when it takes no conditional step and no exit
fires), so that a report can give accuracy per path.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from agentproc.arith import (
    BOUND,
    SCALE,
    UNDEFINED,
    is_symbol,
    round_units,
    symbol_units,
    symbol_value,
)
from agentproc.declared import formula, formula_values
from agentproc.declared.dates import draw_date
from agentproc.declared.file import DeclaredWorkflow, InputSpec
from agentproc.declared.id_pattern import draw, parse_pattern
from agentproc.errors import InputError

UNITS = SCALE["decimal"]
BASE_PATH = "base"
"""The name of the path that takes no conditional step and fires no exit."""
PROBE = 500
"""Draws looked at to check that every condition can go both ways."""


class DrawFailure(Exception):
    """A draw to replace: step ``step`` (a tool step's index) failed for ``reason``."""

    def __init__(self, step: int, reason: str) -> None:
        self.step, self.reason = step, reason


@dataclass(frozen=True)
class Walk:
    """Every step's value on one instance, and its path."""

    values: tuple[int, ...]
    """Each step's value in thousandths (a symbol's code; ``UNDEFINED`` for none)."""
    required: tuple[bool, ...]
    """Each step: whether this instance requires it."""
    exit: int | None
    """The index (in ``wf.exits``) of the exit that fires, or ``None``."""


def value_of(units: int) -> Any:
    """A value in thousandths as the grammar reads it: a fraction, a category or a
    boolean."""
    return symbol_value(units) if is_symbol(units) else Fraction(units, UNITS)


def draw_typed(spec: InputSpec, rng: random.Random) -> int | None:
    """A category's or boolean's draw in units, or ``None`` for a number input (drawn
    as in format 1, so that a file of format 1 draws the same values)."""
    if spec.kind == "boolean":
        return symbol_units(rng.random() < (0.5 if spec.p_true is None else spec.p_true))
    if spec.kind == "string" and spec.pattern is not None:
        return symbol_units(draw(parse_pattern(spec.pattern), rng))
    if spec.kind == "date" and spec.range is not None:
        return symbol_units(draw_date(str(spec.range[0]), str(spec.range[1]), rng))
    if spec.kind == "category" or spec.weights is not None:
        choices = spec.choices or []
        weights = spec.weights
        pick = rng.choices(choices, weights=weights)[0] if weights else rng.choice(choices)
        return symbol_units(pick) if isinstance(pick, str) else round(Fraction(repr(pick)) * UNITS)
    return None


def walk(wf: DeclaredWorkflow, inputs: tuple[int, ...]) -> Walk:
    """The values and path of the instance of these inputs.

    Raises:
        DrawFailure: a required step divides by zero or exceeds the bound.
        InputError: a condition or a required step reads a value its path never computes.
    """
    env: dict[str, Any] = {n: value_of(v) for n, v in zip(wf.input_names, inputs, strict=True)}
    everything = dict(env)
    """Every value computed, on the path or not (``env``: the path's)."""
    exits = wf.exits
    values: list[int] = []
    required: list[bool] = []
    fired: int | None = None
    next_exit = 0
    for k, (s, tree, cond) in enumerate(zip(wf.steps, wf.trees, wf.conditions, strict=True)):
        while fired is None and next_exit < len(exits) and exits[next_exit].after == k:
            e = exits[next_exit]
            if _holds(wf, e.tree, env, f"steps[{e.position}] ({e.name}).when"):
                fired = next_exit
            next_exit += 1
        need = fired is None and (cond is None or _holds(wf, cond, env, wf.field(k, "when")))
        # A required step reads only what the path computes; a step off the path computes
        # on whatever values there are, as its tool would.
        units = _value(wf, k, s.decimals, tree, env if need else everything, need)
        values.append(units)
        required.append(need)
        if units != UNDEFINED:
            everything[s.output] = value_of(units)
            if need:
                env[s.output] = everything[s.output]
    if fired is None and not required[-1]:
        raise InputError(
            wf.where,
            "the answer's step is not required on an instance where no exit fires: "
            "it would end with no answer (give an exit for that case)",
            wf.field(len(required) - 1, "when"),
        )
    if fired is None and wf.fields:
        for k, s in enumerate(wf.steps):
            if s.output in wf.fields and not required[k]:
                raise InputError(
                    wf.where,
                    f"the answer's field {s.output!r} is not given on an instance where no "
                    "exit fires: its step is not required there (give an exit for that case)",
                    wf.field(k, "when"),
                )
    return Walk(tuple(values), tuple(required), fired)


def _holds(wf: DeclaredWorkflow, tree: formula.Node, env: Mapping[str, Any], field: str) -> bool:
    try:
        return bool(formula_values.evaluate(tree, env))
    except KeyError as exc:
        raise InputError(wf.where, _never(exc), field) from None


def _never(exc: KeyError) -> str:
    return (
        f"reads {exc.args[0]!r}, which an instance where it is needed never computes "
        "(its step is not required there): give the reader a `when` or read it in a branch"
    )


def _value(
    wf: DeclaredWorkflow,
    k: int,
    decimals: int,
    tree: formula.Node,
    env: Mapping[str, Any],
    need: bool,
) -> int:
    try:
        exact = formula_values.evaluate(tree, env)
    except KeyError as exc:
        if need:
            raise InputError(wf.where, _never(exc), wf.field(k, "formula")) from None
        return UNDEFINED
    if exact is None:
        if need:  # a look-up of a key that is no record gives no value either
            looks = next(formula.lookups(tree), None) is not None
            raise DrawFailure(
                k, "divides by zero or reads no record" if looks else "divides by zero"
            )
        return UNDEFINED
    if isinstance(exact, str | bool):
        return symbol_units(exact)
    shift = 10**decimals
    units: int = round_units(exact * shift) * (UNITS // shift)
    if abs(units) > BOUND * UNITS:
        if need:
            raise DrawFailure(k, "exceeds the bound |value| <= 1e12")
        return UNDEFINED
    return units


def path_name(wf: DeclaredWorkflow, w: Walk) -> str:
    """The name of an instance's path: ``manager_approval``, ``exit:expired``, ``base``."""
    taken = [
        s.tool
        for s, c, r in zip(wf.steps, wf.conditions, w.required, strict=True)
        if c is not None and r
    ]
    if w.exit is not None:
        taken.append(f"exit:{wf.exits[w.exit].name}")
    return "+".join(taken) or BASE_PATH
