"""The rules every drawn instance of a declared workflow keeps beyond its own arithmetic:
the answer moves when an input moves by 1%, and no step's value is an input's or an
earlier step's. Pure.

**Moves.** An input is moved to what a 1% mistake in it would be: a range's or an
integer range's value by 1% of itself, up and down (rounded to a thousandth, one
thousandth at least: :func:`~agentproc.procedures.sensitivity.nudge_units`, the
generator's rule), a list of choices' to the neighbouring choices below and above (the
nearest values it can take: 1% of 0.21 is no choice, and a whole unit, 1.21, is none
either). A category or boolean input is not moved: changing it changes the path, which
is the point of a branch, not a slip of 1%; nor is an input that can take one value.

**Identities.** On an instance, a required number step whose value equals a number
input's value or an earlier required number step's (exactly, in thousandths) would hide
the mistakes made before it: ``min(refund, manager_limit)`` at the limit gives the same
value whatever the refund, and an agent that gives the step's input where its output is
read is right by value. The symbolic check (:func:`~agentproc.declared.draw.
check_identities`) sees what holds whatever the inputs; this sees what holds on the
draw. A *choice* that passes a variable on unchanged is not an identity: the value
``ifelse``/``case`` takes on the branch the instance's path takes (``ifelse(
needs_manager, approved, refund)`` is ``refund`` where no manager is needed) is how
format 2 joins branches, and the path is judged by the path's labels, unless a condition
it tested compares two variables (``ifelse(a > b, b, a)`` is ``min(a, b)``, and held to
the rule as ``min`` is).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from fractions import Fraction
from typing import Any

from agentproc.arith import SCALE, UNDEFINED, is_symbol
from agentproc.declared import formula, formula_values
from agentproc.declared.file import DeclaredWorkflow, InputSpec
from agentproc.declared.paths import DrawFailure, Walk, value_of
from agentproc.procedures.sensitivity import nudge_units

UNITS = SCALE["decimal"]
MAX_IDENTITY_SHARE = Fraction(1, 2)
"""A step that equals an input or an earlier step on more than this share of the probe
draws that require it is refused when the file is read (each such instance would be
drawn again, and the suite would hold only the rest)."""


def choice_units(spec: InputSpec) -> tuple[int, ...]:
    """A number input's choices in thousandths, distinct and sorted (those of weight
    0 left out: never drawn)."""
    weights = spec.weights or [1.0] * len(spec.choices or [])
    drawn = (c for c, w in zip(spec.choices or [], weights, strict=True) if w > 0)
    return tuple(sorted({round(Fraction(repr(c)) * UNITS) for c in drawn}))


def moves(spec: InputSpec, units: int) -> tuple[int, ...]:
    """The values an input is moved to, to test what depends on it: 1% down and up,
    or the neighbouring choices; none for a category, a boolean or a constant."""
    if spec.kind != "number":
        return ()
    if spec.choices is not None:
        values = choice_units(spec)
        at = values.index(units)
        return values[max(at - 1, 0) : at] + values[at + 1 : at + 2]
    if _one_value(spec):
        return ()
    step = nudge_units(units)
    return units - step, units + step


def _one_value(spec: InputSpec) -> bool:
    """Whether a range or integer range holds one value of its grid (a constant)."""
    if spec.integers is not None:
        return spec.integers[0] == spec.integers[1]
    shift = 10**spec.decimals
    lo, hi = (Fraction(repr(v)) * shift for v in spec.range or (0, 0))
    return math.ceil(lo) >= math.floor(hi)


def answer_of(wf: DeclaredWorkflow, w: Walk) -> Any:
    """An instance's answer: the fired exit's, else the last step's value."""
    if w.exit is not None:
        return wf.exits[w.exit].answer
    return value_of(w.values[-1])


def identities(wf: DeclaredWorkflow, inputs: tuple[int, ...], w: Walk) -> Iterator[tuple[int, str]]:
    """``(step, variable)``: each required number step whose value equals an input's or
    an earlier required step's on this instance (a choice passing one on excepted),
    and the first variable it equals."""
    types = wf.types
    seen: dict[int, str] = {}
    env: dict[str, Any] = {}
    for name, units in zip(wf.input_names, inputs, strict=True):
        env[name] = value_of(units)
        if name not in wf.spec.inputs:  # a table's drawn value: its look-up returns it
            continue
        if types is None or types[name].kind == "number":
            seen.setdefault(units, name)
    required = w.required or (True,) * len(w.values)
    for k, (s, units, need) in enumerate(zip(wf.steps, w.values, required, strict=True)):
        if not need or units == UNDEFINED:
            continue
        if types is not None:
            env[s.output] = value_of(units)
            if is_symbol(units) or passed_on(wf.trees[k], env) is not None:
                continue
        if units in seen:
            yield k, seen[units]
        else:
            seen[units] = s.output


def passed_on(tree: formula.Node, env: dict[str, Any]) -> str | None:
    """The variable a choice (``ifelse``/``case``) passes on unchanged on these values,
    or ``None``: its formula is no choice, the branch taken computes, or a condition it
    tested compares two variables (a cap)."""
    tested = []
    while isinstance(tree, formula.Choose):
        for cond, value in tree.branches:
            tested.append(cond)
            if formula_values.evaluate(cond, env):
                tree = value
                break
        else:
            tree = tree.default
    if not tested or not isinstance(tree, formula.Var):
        return None
    if any(_compares_variables(c) for c in tested):
        return None
    return tree.name


def _compares_variables(tree: formula.Node) -> bool:
    """Whether a condition holds a comparison of two sides that both read a variable."""
    if isinstance(tree, formula.Cmp):
        return bool(next(formula.variables(tree.left), None)) and bool(
            next(formula.variables(tree.right), None)
        )
    if isinstance(tree, formula.Logic):
        return any(_compares_variables(a) for a in tree.args)
    return False


def identity_shares(
    wf: DeclaredWorkflow, draws: Sequence[tuple[tuple[int, ...], Walk | DrawFailure]]
) -> dict[int, tuple[int, int, str]]:
    """Step -> (draws where it is an identity, draws that require it, the variable it
    equals most often), over the draws that would not be replaced for dividing by zero
    or exceeding the bound, for each step that is an identity on one."""
    walked = [(inputs, w) for inputs, w in draws if isinstance(w, Walk)]
    found: dict[int, dict[str, int]] = {}
    for inputs, w in walked:
        for k, name in identities(wf, inputs, w):
            found.setdefault(k, {})
            found[k][name] = found[k].get(name, 0) + 1
    out = {}
    for k, names in found.items():
        need = sum(w.required[k] if w.required else 1 for _, w in walked)
        out[k] = (sum(names.values()), need, max(names, key=lambda n: names[n]))
    return out
