"""A formula's values: its exact value on given values (:func:`evaluate`) and its value
modulo a prime at random points (:func:`fingerprint`), by which the generator and the
workflow checks find what may hold whatever the inputs (the workflow checks prove it with
:mod:`agentproc.declared.formula_proof` before they say so). Pure; nothing is
evaluated by Python.

>>> from agentproc.declared.formula import parse
>>> tree = parse("max(price * qty - discount, 0) / 2")
>>> evaluate(tree, {"price": Fraction(5), "qty": Fraction(3), "discount": Fraction(1)})
Fraction(7, 1)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from fractions import Fraction
from hashlib import blake2b
from typing import Any

from agentproc.arith import round_units
from agentproc.declared.dates import days_between
from agentproc.declared.formula import (
    Bin,
    Call,
    Choose,
    Cmp,
    Lit,
    Logic,
    Lookup,
    Neg,
    Node,
    Num,
    Value,
    Var,
)


def _round(args: list[Fraction], digits: int) -> Fraction:
    shift = 10**digits
    return Fraction(round_units(args[0] * shift), shift)


_APPLY: dict[str, Callable[[list[Fraction], int], Fraction]] = {
    "min": lambda a, _: min(a),
    "max": lambda a, _: max(a),
    "abs": lambda a, _: abs(a[0]),
    "round": _round,
}


_DATED: dict[str, Callable[[list[Any]], Any]] = {
    "date": lambda a: a[0],
    "days_between": lambda a: Fraction(days_between(a[0], a[1])),
}
"""The date functions: a date is its ISO text."""


def evaluate(tree: Node, env: Mapping[str, Any]) -> Any:
    """The exact value of a formula, or ``None`` where it divides by zero (typed: a
    :data:`Value`; only the branch ``ifelse``/``case``/``and``/``or`` take is evaluated,
    so a variable of a branch not taken need not be in ``env``). Raises ``KeyError`` for
    a variable it reads that ``env`` lacks."""
    if isinstance(tree, Num):
        return tree.value
    if isinstance(tree, Var):
        return env[tree.name]
    if isinstance(tree, Neg):
        v = evaluate(tree.arg, env)
        return None if v is None else -v
    if isinstance(tree, Bin):
        a, b = evaluate(tree.left, env), evaluate(tree.right, env)
        if a is None or b is None:
            return None
        if tree.op == "+":
            return a + b
        if tree.op == "-":
            return a - b
        if tree.op == "*":
            return a * b
        return None if b == 0 else a / b
    if isinstance(tree, Call):
        args = [evaluate(a, env) for a in tree.args]
        if any(a is None for a in args):
            return None
        if tree.fn in _DATED:
            return _DATED[tree.fn](args)
        return _APPLY[tree.fn](args, tree.digits)
    return _evaluate_typed(tree, env)


def _evaluate_typed(tree: Node, env: Mapping[str, Any]) -> Any:
    if isinstance(tree, Lit):
        return tree.value
    if isinstance(tree, Cmp):
        a, b = evaluate(tree.left, env), evaluate(tree.right, env)
        if a is None or b is None:
            return None
        return _COMPARE[tree.op](a, b)
    if isinstance(tree, Logic):
        if tree.op == "not":
            v = evaluate(tree.args[0], env)
            return None if v is None else not v
        for a in tree.args:  # lazy: the first operand that decides
            v = evaluate(a, env)
            if v is None or v is (tree.op == "or"):
                return v
        return tree.op == "and"
    if isinstance(tree, Choose):
        for cond, value in tree.branches:
            c = evaluate(cond, env)
            if c is None:
                return None
            if c:
                return evaluate(value, env)
        return evaluate(tree.default, env)
    if isinstance(tree, Lookup):
        if tree.rows is None:  # pragma: no cover (a workflow binds its tables)
            raise TypeError(f"lookup of table {tree.table} not bound")
        key = evaluate(tree.key, env)
        found = None if key is None else _record(tree.rows, key, env)
        return evaluate(found, env) if isinstance(found, Var) else found
    raise TypeError(f"not a formula node: {tree!r}")  # pragma: no cover


def _record(
    rows: tuple[tuple[str | Var, Value | Var], ...], key: Any, env: Mapping[str, Any]
) -> Any:
    """The value of the row whose key is ``key`` (``None``: no such record). A drawn
    record's key is the variable it is drawn into (``''`` in a slot the instance
    leaves empty, which no key equals)."""
    for k, v in rows:
        if (env.get(k.name) if isinstance(k, Var) else k) == key:
            return v
    return None


Tables = Mapping[str, Mapping[str | Var, Mapping[str, Value | Var]]]
"""A workflow's tables: table -> key -> column -> value (a number an exact fraction), or
the variable a drawn value is read from; a record drawn for every instance has the
variable of its drawn key as its key."""


def bind(tree: Node, tables: Tables) -> Node:
    """``tree`` with each look-up's column bound to its table's values (a tree without
    look-ups is returned as it is). Raises ``KeyError`` for a table or column that
    ``tables`` lacks (the workflow's checks refuse such a formula first)."""
    if isinstance(tree, Lookup):
        records = tables[tree.table]
        rows = tuple((key, record[tree.column]) for key, record in records.items())
        return replace(tree, key=bind(tree.key, tables), rows=rows)
    if isinstance(tree, Neg):
        return replace(tree, arg=bind(tree.arg, tables))
    if isinstance(tree, Bin | Cmp):
        return replace(tree, left=bind(tree.left, tables), right=bind(tree.right, tables))
    if isinstance(tree, Call | Logic | Choose):
        return replace(tree, args=tuple(bind(a, tables) for a in tree.args))
    return tree


_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "==": lambda a, b: bool(a == b),
    "!=": lambda a, b: bool(a != b),
    "<": lambda a, b: bool(a < b),
    "<=": lambda a, b: bool(a <= b),
    ">": lambda a, b: bool(a > b),
    ">=": lambda a, b: bool(a >= b),
}


PRIME = (1 << 61) - 1
"""The field of :func:`fingerprint` (the generator's)."""


def fingerprint(tree: Node, env: Mapping[str, int]) -> int | None:
    """The formula evaluated modulo :data:`PRIME` at a point ``env`` (each variable a field
    element), or ``None`` where it divides by an expression that is zero there.

    The functions are taken as uninterpreted: ``min(a, b)`` is a pseudo-random field
    element of its function and arguments, so two formulas agree at random points
    (with overwhelming probability) only when they are the same rational function of
    the same function applications: ``a * b / b`` is ``a``, ``min(a, b) - min(a, b)``
    is 0; an identity that needs what ``min`` means (``min(a, b) + max(a, b)``) is not
    seen. Formulas that differ only by a multiple of the prime agree everywhere
    (``a + b * 2305843009213693951`` and ``a``), and a divisor that is such a multiple
    gives ``None``: an agreement is a suspicion, a difference a proof.
    """
    if isinstance(tree, Num):
        return tree.value.numerator * pow(tree.value.denominator, PRIME - 2, PRIME) % PRIME
    if isinstance(tree, Var):
        return env[tree.name]
    if isinstance(tree, Neg):
        v = fingerprint(tree.arg, env)
        return None if v is None else (PRIME - v) % PRIME
    if isinstance(tree, Bin):
        a, b = fingerprint(tree.left, env), fingerprint(tree.right, env)
        if a is None or b is None:
            return None
        if tree.op == "+":
            return (a + b) % PRIME
        if tree.op == "-":
            return (a - b) % PRIME
        if tree.op == "*":
            return a * b % PRIME
        return None if b == 0 else a * pow(b, PRIME - 2, PRIME) % PRIME
    if isinstance(tree, Lit):
        return _hashed(f"lit:{tree.value!r}")
    if isinstance(tree, Lookup):  # an uninterpreted function of its key
        key = fingerprint(tree.key, env)
        return None if key is None else _hashed(f"lookup:{tree.table}:{tree.column}:{key}")
    if isinstance(tree, Cmp):
        sides = [fingerprint(tree.left, env), fingerprint(tree.right, env)]
        name = f"cmp{tree.op}"
    else:
        sides = [fingerprint(a, env) for a in tree.args]
        name = f"{tree.fn}:{tree.digits}" if isinstance(tree, Call) else f"{type(tree).__name__}"
        if isinstance(tree, Logic | Choose):
            name += f":{tree.op if isinstance(tree, Logic) else tree.fn}"
    if any(a is None for a in sides):
        return None
    return _hashed(f"{name}:{':'.join(map(str, sides))}")


def _hashed(key: str) -> int:
    """A pseudo-random field element of ``key`` (an uninterpreted application)."""
    return int.from_bytes(blake2b(key.encode(), digest_size=8).digest(), "big") % PRIME
