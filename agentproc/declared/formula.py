"""Formulas of a declared workflow's steps: parsed into a tree, evaluated exactly. Pure.

A formula is ``+ - * /``, parentheses, unary minus, numeric literals, variable names
and the functions :data:`FUNCTIONS` (``min``, ``max``, ``abs``, ``round``). Python's own
parser (:mod:`ast`, expression mode) reads the text, and a strict walk keeps only those
nodes: anything else (``**``, ``//``, comparisons, attributes, keywords, strings, other
calls) is refused with a message naming it. Nothing is ever evaluated by Python.

Values are exact fractions; a step rounds its result once, to its declared decimals,
half away from zero (:func:`agentproc.arith.round_units`), as every step value is.

A workflow of format 2 reads the *typed* grammar (``parse(text, typed=True)``), a
superset: string literals (categories), ``true`` and ``false``, comparisons
``== != < <= > >=`` (a chain ``a < b <= c`` is their ``and``), ``and or not``, and the
lazy ``ifelse(c, a, b)`` and ``case(c1, v1, c2, v2, ..., default)``, and a step's
``lookup(table, key, 'column')`` (a record of the workflow's table). Values are then a
:class:`~fractions.Fraction`, a ``str`` or a ``bool``; types are checked by
:mod:`agentproc.declared.formula_types` when the file is read.

>>> tree = parse("max(price * qty - discount, 0) / 2")
>>> sorted(variables(tree))
['discount', 'price', 'qty']

Its exact value and its fingerprint modulo a prime are
:mod:`agentproc.declared.formula_values`'s.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Iterator
from fractions import Fraction
from functools import lru_cache
from typing import Literal

from agentproc.declared.dates import is_date
from agentproc.declared.formula_ast import describe
from agentproc.declared.formula_nodes import (
    Bin,
    BinOp,
    Call,
    Choose,
    Cmp,
    CmpOp,
    Lit,
    Logic,
    Lookup,
    Neg,
    Node,
    Num,
    Value,
    Var,
    lookups,
)

__all__ = [
    "CHOOSERS",
    "DATE_FUNCTIONS",
    "FUNCTIONS",
    "LITERALS",
    "LOOKUP",
    "MAX_CATEGORY",
    "MAX_DEPTH",
    "MAX_LENGTH",
    "MAX_NODES",
    "MAX_ROUND_DIGITS",
    "Bin",
    "BinOp",
    "Call",
    "Choose",
    "Cmp",
    "CmpOp",
    "FormulaError",
    "Lit",
    "Logic",
    "Lookup",
    "Neg",
    "Node",
    "Num",
    "Value",
    "Var",
    "lookups",
    "parse",
    "render",
    "variables",
]

MAX_LENGTH = 1000
"""Characters a formula may hold."""
MAX_DEPTH = 40
"""How deeply a formula's operations may nest. A chain of ``+`` and ``-`` (or of ``*``
and ``/``) read left to right, ``a + b - c + d``, is one level however long it is."""
MAX_NODES = 400
"""Operands and operations a formula may hold (``a + b`` holds three)."""
MAX_ROUND_DIGITS = 3
"""``round(x, n)`` takes a literal ``n`` from 0 to this."""
MAX_CATEGORY = 64
"""Characters of a category name."""

_BINOPS: dict[type[ast.operator], BinOp] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
}


class FormulaError(ValueError):
    """A formula that is not one: what is wrong, in one line."""


_CMPOPS: dict[type[ast.cmpop], CmpOp] = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
}


LITERALS: dict[str, bool] = {"true": True, "false": False}
"""The boolean literals of the typed grammar (names no variable may take)."""
CHOOSERS: dict[str, tuple[int, int | None]] = {"ifelse": (3, 3), "case": (3, None)}
"""The typed grammar's lazy functions -> fewest and most arguments."""
LOOKUP = "lookup"
"""The typed grammar's look-up: ``lookup(table, key, 'column')``."""
DATE_FUNCTIONS: dict[str, int] = {"days_between": 2, "date": 1}
"""The typed grammar's date functions -> their number of arguments: ``days_between(a,
b)`` (days from date ``a`` to date ``b``, a number) and ``date('2026-03-01')`` (a date
literal, ISO text)."""


FUNCTIONS: dict[str, tuple[int, int | None]] = {
    "min": (2, None),
    "max": (2, None),
    "abs": (1, 1),
    "round": (1, 1),
}
"""Function name -> fewest and most arguments (``None``: any number); ``round`` may take
a second, literal argument: its decimals."""


@lru_cache(maxsize=4096)
def parse(text: str, typed: bool = False) -> Node:
    """The tree of a formula (kept per text: every instance of a workflow, and every
    relabelled episode of it, reads the same few formulas; a tree is immutable).
    ``typed``: the grammar of format 2 (categories, booleans, comparisons, conditions).

    Raises:
        FormulaError: text that is not a formula (the message says where and why).
    """
    if len(text) > MAX_LENGTH:
        raise FormulaError(f"longer than {MAX_LENGTH} characters")
    if not text.strip():
        raise FormulaError("empty")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        where = f" at column {exc.offset}" if exc.offset else ""
        raise FormulaError(f"does not parse{where}: {exc.msg}") from None
    except (RecursionError, MemoryError):
        raise FormulaError(f"nested more than {MAX_DEPTH} deep") from None
    _check_size_and_literals(tree.body, text.strip())
    return _walk(tree.body, 0, typed)


def _check_size_and_literals(body: ast.expr, text: str) -> None:
    """Refuse a formula of more than :data:`MAX_NODES` nodes, and a number literal no
    exact value comes of: one beyond a float's range (Python reads ``1e309`` as
    infinity) or one whose nonzero digits fall below it (``1e-400`` reads as 0)."""
    nodes = [n for n in ast.walk(body) if isinstance(n, ast.expr)]
    if len(nodes) > MAX_NODES:
        raise FormulaError(f"more than {MAX_NODES} operands and operations")
    for n in nodes:
        if isinstance(n, ast.Constant) and type(n.value) is float:
            spelled = ast.get_source_segment(text, n) or repr(n.value)
            if not math.isfinite(n.value):
                raise FormulaError(f"the number {spelled} is too large (at most about 1.8e308)")
            mantissa = spelled.lower().partition("e")[0]
            if n.value == 0 and any(d in mantissa for d in "123456789"):
                raise FormulaError(f"the number {spelled} is too small: it would read as 0")


def _walk(node: ast.expr, depth: int, typed: bool = False) -> Node:
    if depth > MAX_DEPTH:
        raise FormulaError(f"nested more than {MAX_DEPTH} deep")
    if isinstance(node, ast.Constant):
        v = node.value
        if typed and isinstance(v, str):
            if not 0 < len(v) <= MAX_CATEGORY:
                raise FormulaError(f"a category is 1 to {MAX_CATEGORY} characters, not {v!r}")
            return Lit(v)
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise FormulaError(f"{v!r} is not a number")
        return Num(Fraction(repr(v)) if isinstance(v, float) else Fraction(v))
    if isinstance(node, ast.Name):
        typed_fn = node.id in CHOOSERS or node.id == LOOKUP or node.id in DATE_FUNCTIONS
        if node.id in FUNCTIONS or (typed and typed_fn):
            raise FormulaError(f"{node.id} is a function: write {node.id}(...)")
        if typed and node.id in LITERALS:
            return Lit(LITERALS[node.id])
        return Var(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        arg = _walk(node.operand, depth + 1, typed)
        return Neg(arg) if isinstance(node.op, ast.USub) else arg
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        op = _BINOPS[type(node.op)]
        left = node.left
        # ``a + b - c + d`` is a chain read left to right, not a nesting: its left
        # operand at the same precedence stays at this depth (MAX_NODES bounds its length).
        chained = (
            isinstance(left, ast.BinOp)
            and type(left.op) in _BINOPS
            and _PRECEDENCE[_BINOPS[type(left.op)]] == _PRECEDENCE[op]
        )
        return Bin(
            op,
            _walk(left, depth if chained else depth + 1, typed),
            _walk(node.right, depth + 1, typed),
        )
    if isinstance(node, ast.Call):
        return _call(node, depth, typed)
    if typed:
        return _typed(node, depth)
    raise FormulaError(
        f"{describe(node)} is not allowed (only + - * /, parentheses, numbers, "
        f"variables and {', '.join(FUNCTIONS)})"
    )


def _typed(node: ast.expr, depth: int) -> Node:
    """The typed grammar's own nodes: comparisons, ``and or not``."""
    if isinstance(node, ast.Compare) and all(type(o) in _CMPOPS for o in node.ops):
        terms = [_walk(t, depth + 1, True) for t in (node.left, *node.comparators)]
        pairs = [
            Cmp(_CMPOPS[type(o)], a, b) for o, a, b in zip(node.ops, terms, terms[1:], strict=False)
        ]
        return pairs[0] if len(pairs) == 1 else Logic("and", tuple(pairs))
    if isinstance(node, ast.BoolOp):
        op: Literal["and", "or"] = "and" if isinstance(node.op, ast.And) else "or"
        return Logic(op, tuple(_walk(v, depth + 1, True) for v in node.values))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return Logic("not", (_walk(node.operand, depth + 1, True),))
    raise FormulaError(
        f"{describe(node)} is not allowed (only + - * /, comparisons, and, or, not, "
        f"parentheses, numbers, 'categories', true, false, variables and "
        f"{', '.join([*FUNCTIONS, *CHOOSERS])})"
    )


def _call(node: ast.Call, depth: int, typed: bool = False) -> Node:
    known = [*FUNCTIONS, *CHOOSERS, LOOKUP, *DATE_FUNCTIONS] if typed else list(FUNCTIONS)
    if not isinstance(node.func, ast.Name) or node.func.id not in known:
        name = node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
        raise FormulaError(f"unknown function {name!r} (expected one of: {', '.join(known)})")
    fn = node.func.id
    if fn in CHOOSERS:
        return _choose(node, fn, depth)
    if fn == LOOKUP:
        return _lookup(node, depth)
    if fn in DATE_FUNCTIONS:
        return _dated(node, fn, depth)
    if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
        raise FormulaError(f"{fn}() takes plain arguments only")
    args = list(node.args)
    digits = 0
    if fn == "round" and len(args) == 2:
        d = args.pop()
        if not (
            isinstance(d, ast.Constant)
            and type(d.value) is int
            and 0 <= d.value <= MAX_ROUND_DIGITS
        ):
            raise FormulaError(
                f"round()'s second argument must be a whole number from 0 to {MAX_ROUND_DIGITS}"
            )
        digits = d.value
    least, most = FUNCTIONS[fn]
    if len(args) < least or (most is not None and len(args) > most):
        want = f"{least}" if least == most else f"at least {least}"
        raise FormulaError(f"{fn}() takes {want} argument(s), not {len(node.args)}")
    return Call(fn, tuple(_walk(a, depth + 1, typed) for a in args), digits)


def _choose(node: ast.Call, fn: str, depth: int) -> Choose:
    if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
        raise FormulaError(f"{fn}() takes plain arguments only")
    n = len(node.args)
    if fn == "ifelse" and n != 3:
        raise FormulaError(f"ifelse() takes 3 arguments (condition, then, else), not {n}")
    if fn == "case" and (n < 3 or n % 2 == 0):
        raise FormulaError(
            f"case() takes condition, value pairs and a default (an odd number, 3 or more), not {n}"
        )
    args = tuple(_walk(a, depth + 1, True) for a in node.args)
    return Choose("ifelse" if fn == "ifelse" else "case", args)


def _lookup(node: ast.Call, depth: int) -> Lookup:
    args = node.args
    if (
        node.keywords
        or len(args) != 3
        or not isinstance(args[0], ast.Name)
        or not (isinstance(args[2], ast.Constant) and isinstance(args[2].value, str))
    ):
        raise FormulaError(
            "lookup() takes a table's name, a key and a column's name in quotes: "
            "lookup(table, key, 'column')"
        )
    key = _walk(args[1], depth + 1, True)
    return Lookup(args[0].id, key, args[2].value)


def _dated(node: ast.Call, fn: str, depth: int) -> Call:
    """``days_between(a, b)``, or ``date('YYYY-MM-DD')`` (its argument a literal date)."""
    n = DATE_FUNCTIONS[fn]
    if node.keywords or len(node.args) != n or any(isinstance(a, ast.Starred) for a in node.args):
        raise FormulaError(f"{fn}() takes {n} plain argument(s)")
    if fn == "date":
        arg = node.args[0]
        text = arg.value if isinstance(arg, ast.Constant) else None
        if not is_date(text):
            raise FormulaError("date() takes a date in quotes, ISO text: date('2026-03-01')")
    return Call(fn, tuple(_walk(a, depth + 1, True) for a in node.args))


def variables(tree: Node) -> Iterator[str]:
    """The variable names a formula reads, in the order written (with repeats)."""
    if isinstance(tree, Var):
        yield tree.name
    elif isinstance(tree, Neg):
        yield from variables(tree.arg)
    elif isinstance(tree, Bin):
        yield from variables(tree.left)
        yield from variables(tree.right)
    elif isinstance(tree, Call | Logic | Choose):
        for a in tree.args:
            yield from variables(a)
    elif isinstance(tree, Cmp):
        yield from variables(tree.left)
        yield from variables(tree.right)
    elif isinstance(tree, Lookup):  # the table is not a variable: its key is read
        yield from variables(tree.key)


def render(tree: Node) -> str:
    """The formula written back, with the parentheses it needs."""
    return _render(tree, 0)


_PRECEDENCE: dict[str, int] = {"+": 1, "-": 1, "*": 2, "/": 2}


def _render(tree: Node, outer: int) -> str:
    if isinstance(tree, Num):
        v = tree.value
        text = str(v.numerator) if v.denominator == 1 else str(float(v))
        return f"({text})" if v < 0 and outer else text
    if isinstance(tree, Var):
        return tree.name
    if isinstance(tree, Neg):
        return f"-{_render(tree.arg, 3)}"
    if isinstance(tree, Call):
        args = [_render(a, 0) for a in tree.args]
        if tree.fn == "round" and tree.digits:
            args.append(str(tree.digits))
        return f"{tree.fn}({', '.join(args)})"
    if isinstance(tree, Lit):
        return repr(tree.value) if isinstance(tree.value, str) else str(tree.value).lower()
    if isinstance(tree, Choose):
        return f"{tree.fn}({', '.join(_render(a, 0) for a in tree.args)})"
    if isinstance(tree, Lookup):
        return f"{LOOKUP}({tree.table}, {_render(tree.key, 0)}, {tree.column!r})"
    if isinstance(tree, Cmp):
        text = f"{_render(tree.left, 1)} {tree.op} {_render(tree.right, 1)}"
        return f"({text})" if outer else text
    if isinstance(tree, Logic):
        if tree.op == "not":
            return f"not {_render(tree.args[0], -1)}"
        text = f" {tree.op} ".join(_render(a, -1) for a in tree.args)
        return f"({text})" if outer else text
    p = _PRECEDENCE[tree.op]
    right = _render(tree.right, p + 1 if tree.op in "-/" else p)
    text = f"{_render(tree.left, p)} {tree.op} {right}"
    return f"({text})" if p < outer else text
