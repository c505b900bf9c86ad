"""A formula compiled once into nested closures: the value
:func:`~agentproc.procedures.formula_values.evaluate` gives, without walking the tree
and asking each node its type at every call.

A declared step's mock tool evaluates its formula at every call; the instances of a
workflow share their formulas' texts, so :func:`compiled` makes one evaluator per
distinct text per process (kept by text, so two workflows whose steps share names but
not formulas never share one). A look-up reads the instance's tables, given at each
call, so one evaluator serves every instance whatever its records.

>>> from fractions import Fraction
>>> compiled("max(price * qty - discount, 0) / 2")(
...     {"price": Fraction(5), "qty": Fraction(3), "discount": Fraction(1)}, None
... )
Fraction(7, 1)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from agentproc.procedures.formula import (
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
    Var,
    parse,
)
from agentproc.procedures.formula_values import _APPLY, _COMPARE, _DATED, Tables, bind, evaluate

Evaluator = Callable[[Mapping[str, Any], Tables | None], Any]
"""A compiled formula: its value on ``env`` (by variable name) with the workflow's
``tables`` (``None``: it has none), as :func:`evaluate` gives it on the tree bound to them:
``None`` where it divides by zero; ``KeyError`` for a variable it reads that ``env``
lacks."""


@lru_cache(maxsize=4096)
def compiled(text: str) -> Evaluator:
    """The evaluator of a formula of the typed grammar (kept per text: a suite's
    instances share their formulas)."""
    return _compile(parse(text, True))


def _compile(tree: Node) -> Evaluator:
    """The evaluator of a tree (one closure per node, made once)."""
    make = _MAKERS.get(type(tree))
    return _fallback(tree) if make is None else make(tree)


def _fallback(tree: Node) -> Evaluator:
    """A node this module does not compile, evaluated as the tree walk does."""

    def run(env: Mapping[str, Any], tables: Tables | None) -> Any:
        return evaluate(tree if tables is None else bind(tree, tables), env)

    return run


def _num(tree: Any) -> Evaluator:
    value = tree.value
    return lambda env, tables: value


def _var(tree: Any) -> Evaluator:
    name = tree.name
    return lambda env, tables: env[name]


def _neg(tree: Any) -> Evaluator:
    arg = _compile(tree.arg)

    def run(env: Mapping[str, Any], tables: Tables | None) -> Any:
        v = arg(env, tables)
        return None if v is None else -v

    return run


def _bin(tree: Any) -> Evaluator:
    left, right, op = _compile(tree.left), _compile(tree.right), tree.op

    def run(env: Mapping[str, Any], tables: Tables | None) -> Any:
        a, b = left(env, tables), right(env, tables)
        if a is None or b is None:
            return None
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        return None if b == 0 else a / b

    return run


def _call(tree: Any) -> Evaluator:
    args, digits = tuple(map(_compile, tree.args)), tree.digits
    dated = _DATED.get(tree.fn)
    apply = _APPLY[tree.fn] if dated is None else lambda values, _: dated(values)

    def run(env: Mapping[str, Any], tables: Tables | None) -> Any:
        values = [a(env, tables) for a in args]
        if any(v is None for v in values):
            return None
        return apply(values, digits)

    return run


def _lit(tree: Any) -> Evaluator:
    value = tree.value
    return lambda env, tables: value


def _cmp(tree: Any) -> Evaluator:
    left, right, compare = _compile(tree.left), _compile(tree.right), _COMPARE[tree.op]

    def run(env: Mapping[str, Any], tables: Tables | None) -> Any:
        a, b = left(env, tables), right(env, tables)
        if a is None or b is None:
            return None
        return compare(a, b)

    return run


def _logic(tree: Any) -> Evaluator:
    args, op = tuple(map(_compile, tree.args)), tree.op
    if op == "not":
        arg = args[0]

        def negated(env: Mapping[str, Any], tables: Tables | None) -> Any:
            v = arg(env, tables)
            return None if v is None else not v

        return negated
    decides = op == "or"

    def run(env: Mapping[str, Any], tables: Tables | None) -> Any:
        for a in args:  # lazy: the first operand that decides
            v = a(env, tables)
            if v is None or v is decides:
                return v
        return not decides

    return run


def _choose(tree: Any) -> Evaluator:
    branches = tuple((_compile(c), _compile(v)) for c, v in tree.branches)
    default = _compile(tree.default)

    def run(env: Mapping[str, Any], tables: Tables | None) -> Any:
        for cond, value in branches:  # only the branch taken is evaluated
            c = cond(env, tables)
            if c is None:
                return None
            if c:
                return value(env, tables)
        return default(env, tables)

    return run


def _lookup(tree: Any) -> Evaluator:
    key_of, table, column = _compile(tree.key), tree.table, tree.column

    def run(env: Mapping[str, Any], tables: Tables | None) -> Any:
        if tables is None:  # pragma: no cover (a workflow with look-ups has its tables)
            raise TypeError(f"lookup of table {table} without tables")
        records = tables[table]
        key = key_of(env, tables)
        found = None
        if key is not None:  # the first record whose key is it (a drawn key: its value)
            for k, record in records.items():
                if (env.get(k.name) if isinstance(k, Var) else k) == key:
                    found = record[column]
                    break
        return env[found.name] if isinstance(found, Var) else found

    return run


_MAKERS: dict[type, Callable[[Any], Evaluator]] = {
    Num: _num,
    Var: _var,
    Neg: _neg,
    Bin: _bin,
    Call: _call,
    Lit: _lit,
    Cmp: _cmp,
    Logic: _logic,
    Choose: _choose,
    Lookup: _lookup,
}
"""Each node type's closure maker (a type not listed is evaluated by the tree walk)."""
