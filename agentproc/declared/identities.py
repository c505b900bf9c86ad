"""What a declared workflow's steps are whatever the inputs: checked once, before any
instance is drawn. Pure.

Each step's expression in the inputs is evaluated at two random points modulo a prime
(:func:`~agentproc.declared.formula_values.fingerprint`), as the procedure generator
does; an input with one possible value is that constant, so a range that always divides
by zero is seen. Where the fingerprints say that a step divides by zero, is a constant
(``x - x``) or equals an earlier variable up to sign (``a * b / b``), that is a
suspicion, not a fact: modulo the prime, ``b * 2305843009213693951`` is 0. So it is

1. proved on the exact rational functions (:mod:`agentproc.declared.formula_proof`),
   and the step refused as so "whatever the inputs"; or, where no proof comes within
   its bound of work,
2. looked for on the first :data:`DRAWS` seeded probe draws
   (:func:`~agentproc.declared.draw.probe_draws`: each step's value as an
   instance computes it, rounded), and the step refused only when every draw that
   computes it shows it, saying so ("in 100 of 100 draws").

Otherwise the step stands: no refusal states what is not so.
"""

from __future__ import annotations

import random
from fractions import Fraction

from agentproc.arith import UNDEFINED, render
from agentproc.declared.draw import UNITS, probe_draws, single_value
from agentproc.declared.file import DeclaredWorkflow
from agentproc.declared.formula_proof import Algebra, DividesByZero, Ratio, Undecided
from agentproc.declared.formula_values import PRIME, fingerprint
from agentproc.declared.paths import DrawFailure, Walk
from agentproc.errors import InputError

_POINTS = 2
"""Random points of the fingerprints."""
DRAWS = 100
"""Probe draws looked at where no proof comes (each computes every step: a workflow's
formulas may be costly, and this many make a refusal's ground plain enough)."""
_ZERO, _CONSTANT = "divides by zero", "a constant"
"""The claims besides equality to a variable (which is named by the variable)."""
_HIDES = "(it would hide every mistake made before it)"


def _field(value: Fraction) -> int:
    return value.numerator * pow(value.denominator, PRIME - 2, PRIME) % PRIME


def check_identities(wf: DeclaredWorkflow) -> None:
    """Refuse a step that divides by zero, is a constant or equals an earlier variable
    up to sign, proved or seen on every probe draw (one :class:`InputError` naming the
    step, and which of the two)."""
    rng = random.Random("agentproc:workflow:identities")
    points: list[dict[str, int]] = [{} for _ in range(_POINTS)]
    names: dict[tuple[int, ...], list[str]] = {}
    check = _Check(wf)
    for name, spec in wf.spec.inputs.items():
        single = single_value(spec)
        for env in points:
            env[name] = rng.randrange(1, PRIME) if single is None else _field(single)
        if single is None:
            _remember(names, tuple(env[name] for env in points), name)
    for i, tree in enumerate(wf.trees):
        prints = [fingerprint(tree, env) for env in points]
        key = tuple(p for p in prints if p is not None)
        if len(key) < _POINTS:
            check.refuse_if(i, _ZERO)
            # Not so after all: a value of its own, so that nothing is said of a reader.
            key = tuple(rng.randrange(1, PRIME) for _ in points)
        else:
            if len(set(key)) == 1:
                check.refuse_if(i, _CONSTANT)
            for name in names.get(key, []):
                check.refuse_if(i, name)
            _remember(names, key, wf.steps[i].output)
        for env, p in zip(points, key, strict=True):
            env[wf.steps[i].output] = p


def _remember(names: dict[tuple[int, ...], list[str]], key: tuple[int, ...], name: str) -> None:
    names.setdefault(key, []).append(name)
    names.setdefault(tuple((PRIME - k) % PRIME for k in key), []).append(f"-{name}")


class _Check:
    """A workflow's suspicions settled: proved, seen on every probe draw, or dropped."""

    def __init__(self, wf: DeclaredWorkflow) -> None:
        self.wf = wf
        self.algebra = Algebra()
        self.env: dict[str, Ratio] = {}
        for name, spec in wf.spec.inputs.items():
            single = single_value(spec)
            self.env[name] = (
                self.algebra.number(single) if single is not None else self.algebra.variable(name)
            )
        self.expressed = 0
        self.draws: list[tuple[tuple[int, ...], Walk | DrawFailure]] | None = None

    def refuse_if(self, i: int, claim: str) -> None:
        """Raise the refusal of step ``i`` for ``claim`` if it is proved or seen on every
        draw; return if neither."""
        s = self.wf.steps[i]
        proved = self._proved(i, claim)
        end, value = "whatever the inputs", 0
        if not proved:
            seen = self._seen(i, claim)
            if seen is None:
                return
            end, value = f"in {seen[0]} of {seen[0]} draws", seen[1]
        if claim == _ZERO:
            text = f"divides by zero {end}"
        elif claim == _CONSTANT:
            text = "is a constant: it does not depend on the inputs"
            if not proved:
                text = f"is {render(value, UNITS)} {end}: it does not move with the inputs"
        else:
            text = f"equals {claim} {end} {_HIDES}"
        raise InputError(self.wf.where, f"{s.formula!r} {text}", self.wf.field(i, "formula"))

    def _proved(self, i: int, claim: str) -> bool:
        steps = self.wf.steps
        for k in range(self.expressed, i):  # the steps before: expressed once, in order
            try:
                self.env[steps[k].output] = self.algebra.express(self.wf.trees[k], self.env)
            except (DividesByZero, Undecided):
                self.env[steps[k].output] = self.algebra.variable(f"step:{steps[k].output}")
        self.expressed = max(self.expressed, i)
        try:
            r = self.algebra.express(self.wf.trees[i], self.env)
            if claim == _ZERO:
                return False
            if claim == _CONSTANT:
                return self.algebra.constant(r) is not None
            sign = -1 if claim.startswith("-") else 1
            return self.algebra.equal(r, self.env[claim.removeprefix("-")], sign)
        except DividesByZero:
            return claim == _ZERO
        except Undecided:
            return False

    def _seen(self, i: int, claim: str) -> tuple[int, int] | None:
        """How many probe draws show ``claim`` of step ``i``, and the step's value on
        one, when every one that computes it does (two at least, for a constant or an
        equality), else ``None``."""
        if self.draws is None:
            self.draws = probe_draws(self.wf, DRAWS)
        if claim == _ZERO:
            zero = computed = 0
            for _, w in self.draws:
                if isinstance(w, DrawFailure):
                    zero += w.step == i and w.reason == _ZERO
                    computed += w.step >= i
                else:
                    computed += w.values[i] != UNDEFINED
            return (zero, 0) if zero == computed > 0 else None
        walks = [(inputs, w) for inputs, w in self.draws if isinstance(w, Walk)]
        pairs = [(w.values[i], self._other(claim, inputs, w)) for inputs, w in walks]
        pairs = [(a, b) for a, b in pairs if UNDEFINED not in (a, b)]
        if len(pairs) < 2:
            return None
        if claim == _CONSTANT:
            same = len({a for a, _ in pairs}) == 1
        else:
            same = all(a == b for a, b in pairs)
        return (len(pairs), pairs[0][0]) if same else None

    def _other(self, claim: str, inputs: tuple[int, ...], w: Walk) -> int:
        """The value ``claim`` names on a draw (an equality's variable, signed), or the
        step's own value for a constant."""
        if claim == _CONSTANT:
            return 0
        name = claim.removeprefix("-")
        sign = -1 if claim.startswith("-") else 1
        if name in self.wf.spec.inputs:
            value = inputs[self.wf.input_names.index(name)]
        else:
            value = w.values[[s.output for s in self.wf.steps].index(name)]
        return UNDEFINED if value == UNDEFINED else sign * value
