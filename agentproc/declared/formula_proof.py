"""What a formula is whatever the inputs, proved: formulas as exact rational functions.
Pure; nothing is evaluated by Python.

A formula's value is written as a quotient of two polynomials with rational
coefficients, in *atoms*: the inputs, and each application of a function (``min``,
``max``, ``abs``, ``round``; the typed grammar's comparisons, ``and or not``, ``ifelse``
and ``case``, its literals), taken as uninterpreted, as
:func:`~agentproc.declared.formula_values.fingerprint` takes them.
Two applications are one atom when their arguments are proved equal. Two quotients are
equal when ``n1 * d2 - n2 * d1`` expands to the zero polynomial, so what this module
proves holds for every value of every atom, hence for every input:

- :meth:`Algebra.express` raises :class:`DividesByZero` when a formula divides, where
  it is always evaluated, by an expression that is 0 as a rational function (it then
  divides by zero on every input);
- :meth:`Algebra.constant` is the value of a quotient that is one, and
  :meth:`Algebra.equal` tells whether two are equal up to a sign.

The fingerprint modulo a prime (:mod:`agentproc.declared.formula_values`) finds such
identities fast but cannot prove them: a coefficient that is a multiple of the prime
(``2305843009213693951``) is 0 there and not here. Expanding may take time and memory
that grow fast (``(a + b) * (a + b) * ...``), so the work is bounded
(:data:`MAX_WORK`, :data:`MAX_BITS`): past the bound :class:`Undecided` is raised and
nothing is claimed. sympy would prove the same with no bound of ours; it is not a
dependency, and what is needed here (equality by cross-multiplication, no
factoring) fits in this module.

>>> from agentproc.declared.formula import parse
>>> algebra = Algebra()
>>> env = {"a": algebra.variable("a"), "b": algebra.variable("b")}
>>> algebra.equal(algebra.express(parse("a * b / b"), env), env["a"])
True
>>> algebra.equal(algebra.express(parse("a + b * 2305843009213693951"), env), env["a"])
False
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from agentproc.declared.formula import (
    Bin,
    Call,
    Cmp,
    Lit,
    Logic,
    Lookup,
    Neg,
    Node,
    Num,
    Var,
)
from agentproc.declared.formula_values import evaluate

MAX_WORK = 100_000
"""Products of two terms one :class:`Algebra` may compute in all."""
MAX_BITS = 4096
"""Bits a coefficient may hold."""

Monomial = tuple[tuple[int, int], ...]
"""A product of atoms: ``(atom, exponent)`` pairs, by atom."""
Poly = dict[Monomial, int]
"""A polynomial with whole coefficients: monomial -> its nonzero coefficient (a
fraction's denominator goes to the quotient's, so that no step computes a fraction)."""
_ONE: Monomial = ()


class Undecided(Exception):
    """The work bound was reached: nothing is proved."""


class DividesByZero(Exception):
    """A division, always evaluated, by an expression that is 0 as a rational function."""


@dataclass(frozen=True, eq=False)
class Ratio:
    """A rational function: ``num / den``, ``den`` never the zero polynomial."""

    num: Poly
    den: Poly


def _const(value: Fraction) -> Ratio:
    return Ratio({_ONE: value.numerator} if value else {}, {_ONE: value.denominator})


def _times(m1: Monomial, m2: Monomial) -> Monomial:
    if not m1 or not m2:
        return m1 or m2
    powers = dict(m1)
    for atom, n in m2:
        powers[atom] = powers.get(atom, 0) + n
    return tuple(sorted(powers.items()))


def _plus(p: Poly, q: Poly, sign: int = 1) -> Poly:
    out = dict(p)
    for m, c in q.items():
        v = out.get(m, 0) + sign * c
        if v:
            out[m] = v
        else:
            del out[m]
    return out


def _number(r: Ratio) -> Fraction | None:
    """The number ``r`` is written as, if it holds no atom."""
    if set(r.den) == {_ONE} and set(r.num) <= {_ONE}:
        return Fraction(r.num.get(_ONE, 0), r.den[_ONE])
    return None


def _product(p: Poly, q: Poly) -> Poly:
    out: Poly = {}
    for m1, c1 in p.items():
        for m2, c2 in q.items():
            m = _times(m1, m2)
            out[m] = out.get(m, 0) + c1 * c2
    return {m: c for m, c in out.items() if c}


class Algebra:
    """Formulas expressed over one table of atoms, under one bound of work."""

    def __init__(self) -> None:
        self._atoms: list[tuple[str, tuple[Ratio | None, ...]]] = []
        self._work = 0

    def number(self, value: Fraction) -> Ratio:
        """A number (an input with one possible value is one)."""
        return _const(value)

    def variable(self, name: str) -> Ratio:
        """An input (or a value the algebra holds no expression of) as its own atom."""
        return self._atom(f"var:{name}", ())

    def express(self, tree: Node, env: Mapping[str, Ratio]) -> Ratio:
        """The rational function of ``tree``, its variables read from ``env``.

        Raises:
            DividesByZero: it always divides by an expression that is 0.
            Undecided: the bound of work was reached.
        """
        if isinstance(tree, Num):
            return _const(tree.value)
        if isinstance(tree, Var):
            return env[tree.name]
        if isinstance(tree, Neg):
            r = self.express(tree.arg, env)
            return Ratio({m: -c for m, c in r.num.items()}, r.den)
        if isinstance(tree, Bin):
            return self._binary(
                tree.op, self.express(tree.left, env), self.express(tree.right, env)
            )
        if isinstance(tree, Call):
            args = tuple(self.express(a, env) for a in tree.args)
            values = [_number(a) for a in args]
            if all(v is not None for v in values):  # min(2, 3): a number, as evaluated
                folded = Call(tree.fn, tuple(Num(v) for v in values if v is not None), tree.digits)
                return _const(evaluate(folded, {}))
            return self._atom(f"{tree.fn}:{tree.digits}", args)
        if isinstance(tree, Lit):
            return self._atom(f"lit:{tree.value!r}", ())
        if isinstance(tree, Cmp):
            return self._atom(
                f"cmp{tree.op}", (self.express(tree.left, env), self.express(tree.right, env))
            )
        if isinstance(tree, Lookup):  # an uninterpreted function of its key
            key = self.express(tree.key, env)
            return self._atom(f"lookup:{tree.table}:{tree.column}", (key,))
        head = f"logic:{tree.op}" if isinstance(tree, Logic) else f"choose:{tree.fn}"
        # Only the first operand (the first condition) is always evaluated: a later one
        # that divides by zero is an argument of its own, not a proof.
        first, *rest = tree.args
        return self._atom(head, (self.express(first, env), *(self._lazy(a, env) for a in rest)))

    def constant(self, r: Ratio) -> Fraction | None:
        """The value of ``r`` when it is the same whatever its atoms (``num`` is that
        value times ``den``), else ``None``."""
        m, d = next(iter(r.den.items()))
        n = r.num.get(m, 0)
        if _plus(self._mul(r.num, {_ONE: d}), self._mul(r.den, {_ONE: n}), -1):
            return None
        return Fraction(n, d)

    def equal(self, r: Ratio, s: Ratio, sign: int = 1) -> bool:
        """Whether ``r == sign * s`` whatever the atoms (cross-multiplied, expanded).

        Raises:
            Undecided: the bound of work was reached.
        """
        return not _plus(self._mul(r.num, s.den), self._mul(s.num, r.den), -sign)

    def _lazy(self, tree: Node, env: Mapping[str, Ratio]) -> Ratio | None:
        try:
            return self.express(tree, env)
        except DividesByZero:
            return None

    def _binary(self, op: str, a: Ratio, b: Ratio) -> Ratio:
        if op == "+" or op == "-":
            sign = 1 if op == "+" else -1
            if a.den == b.den:
                return self._ratio(_plus(a.num, b.num, sign), a.den)
            across = self._mul(b.num, a.den)
            return self._ratio(
                _plus(self._mul(a.num, b.den), across, sign), self._mul(a.den, b.den)
            )
        if op == "*":
            return self._ratio(self._mul(a.num, b.num), self._mul(a.den, b.den))
        if not b.num:
            raise DividesByZero
        return self._ratio(self._mul(a.num, b.den), self._mul(a.den, b.num))

    def _ratio(self, num: Poly, den: Poly) -> Ratio:
        if not num:
            return _const(Fraction(0))
        common = math.gcd(*num.values(), *den.values())  # keeps the coefficients small
        if common > 1:
            num = {m: c // common for m, c in num.items()}
            den = {m: c // common for m, c in den.items()}
        return Ratio(num, den)

    def _mul(self, p: Poly, q: Poly) -> Poly:
        self._work += len(p) * len(q)
        if self._work > MAX_WORK:
            raise Undecided
        out = _product(p, q)
        if any(c.bit_length() > MAX_BITS for c in out.values()):
            raise Undecided
        return out

    def _atom(self, head: str, args: tuple[Ratio | None, ...]) -> Ratio:
        """The atom of ``head`` applied to ``args``: an existing one if its arguments are
        proved equal, else a new one."""
        for k, (h, known) in enumerate(self._atoms):
            if h == head and len(known) == len(args) and all(map(self._same, known, args)):
                return Ratio({((k, 1),): 1}, {_ONE: 1})
        self._atoms.append((head, args))
        return Ratio({((len(self._atoms) - 1, 1),): 1}, {_ONE: 1})

    def _same(self, r: Ratio | None, s: Ratio | None) -> bool:
        if r is None or s is None:
            return r is s
        return self.equal(r, s)
