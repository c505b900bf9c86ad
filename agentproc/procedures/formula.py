"""Formulas of a declared workflow's steps: parsed into a tree, evaluated exactly. Pure.

A formula is ``+ - * /``, parentheses, unary minus, numeric literals, variable names
and the functions :data:`FUNCTIONS` (``min``, ``max``, ``abs``, ``round``). Python's own
parser (:mod:`ast`, expression mode) reads the text, and a strict walk keeps only those
nodes: anything else (``**``, ``//``, comparisons, attributes, keywords, strings, other
calls) is refused with a message naming it. Nothing is ever evaluated by Python.

Values are exact fractions; a step rounds its result once, to its declared decimals,
half away from zero (:func:`agentproc.arith.round_units`), as every step value is.

>>> tree = parse("max(price * qty - discount, 0) / 2")
>>> sorted(variables(tree))
['discount', 'price', 'qty']
>>> evaluate(tree, {"price": Fraction(5), "qty": Fraction(3), "discount": Fraction(1)})
Fraction(7, 1)
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from hashlib import blake2b
from typing import Literal

from agentproc.arith import round_units

MAX_LENGTH = 1000
"""Characters a formula may hold."""
MAX_DEPTH = 40
"""How deeply a formula's operations may nest."""
MAX_ROUND_DIGITS = 3
"""``round(x, n)`` takes a literal ``n`` from 0 to this."""

BinOp = Literal["+", "-", "*", "/"]
_BINOPS: dict[type[ast.operator], BinOp] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
}


class FormulaError(ValueError):
    """A formula that is not one: what is wrong, in one line."""


@dataclass(frozen=True)
class Num:
    """A numeric literal, exact."""

    value: Fraction


@dataclass(frozen=True)
class Var:
    """A variable: an input or an earlier step's output."""

    name: str


@dataclass(frozen=True)
class Neg:
    """Unary minus."""

    arg: Node


@dataclass(frozen=True)
class Bin:
    """``left op right``."""

    op: BinOp
    left: Node
    right: Node


@dataclass(frozen=True)
class Call:
    """One of :data:`FUNCTIONS` applied to its arguments (``round``'s digits a literal)."""

    fn: str
    args: tuple[Node, ...]
    digits: int = 0
    """``round``'s number of decimals (0 when not given)."""


Node = Num | Var | Neg | Bin | Call
"""A formula tree."""


def _round(args: list[Fraction], digits: int) -> Fraction:
    shift = 10**digits
    return Fraction(round_units(args[0] * shift), shift)


FUNCTIONS: dict[str, tuple[int, int | None]] = {
    "min": (2, None),
    "max": (2, None),
    "abs": (1, 1),
    "round": (1, 1),
}
"""Function name -> fewest and most arguments (``None``: any number); ``round`` may take
a second, literal argument: its decimals."""
_APPLY: dict[str, Callable[[list[Fraction], int], Fraction]] = {
    "min": lambda a, _: min(a),
    "max": lambda a, _: max(a),
    "abs": lambda a, _: abs(a[0]),
    "round": _round,
}


@lru_cache(maxsize=4096)
def parse(text: str) -> Node:
    """The tree of a formula (kept per text: every instance of a workflow, and every
    relabelled episode of it, reads the same few formulas; a tree is immutable).

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
    return _walk(tree.body, 0)


def _walk(node: ast.expr, depth: int) -> Node:
    if depth > MAX_DEPTH:
        raise FormulaError(f"nested more than {MAX_DEPTH} deep")
    if isinstance(node, ast.Constant):
        v = node.value
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise FormulaError(f"{v!r} is not a number")
        return Num(Fraction(repr(v)) if isinstance(v, float) else Fraction(v))
    if isinstance(node, ast.Name):
        if node.id in FUNCTIONS:
            raise FormulaError(f"{node.id} is a function: write {node.id}(...)")
        return Var(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        arg = _walk(node.operand, depth + 1)
        return Neg(arg) if isinstance(node.op, ast.USub) else arg
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return Bin(
            _BINOPS[type(node.op)], _walk(node.left, depth + 1), _walk(node.right, depth + 1)
        )
    if isinstance(node, ast.Call):
        return _call(node, depth)
    raise FormulaError(
        f"{_what(node)} is not allowed (only + - * /, parentheses, numbers, "
        f"variables and {', '.join(FUNCTIONS)})"
    )


def _call(node: ast.Call, depth: int) -> Call:
    if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
        name = node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
        raise FormulaError(f"unknown function {name!r} (expected one of: {', '.join(FUNCTIONS)})")
    fn = node.func.id
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
    return Call(fn, tuple(_walk(a, depth + 1) for a in args), digits)


_SYMBOLS: dict[type, str] = {
    ast.Pow: "**",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.MatMult: "@",
    ast.Not: "not",
    ast.Invert: "~",
    ast.BitAnd: "&",
    ast.BitOr: "|",
    ast.BitXor: "^",
    ast.LShift: "<<",
    ast.RShift: ">>",
}


def _what(node: ast.expr) -> str:
    if isinstance(node, ast.BinOp | ast.UnaryOp):
        return f"the operator {_SYMBOLS.get(type(node.op), type(node.op).__name__)!r}"
    if isinstance(node, ast.BoolOp):
        return "a boolean operator"
    if isinstance(node, ast.Compare):
        return "a comparison"
    return f"{type(node).__name__.lower()} {ast.unparse(node)!r}"


def variables(tree: Node) -> Iterator[str]:
    """The variable names a formula reads, in the order written (with repeats)."""
    if isinstance(tree, Var):
        yield tree.name
    elif isinstance(tree, Neg):
        yield from variables(tree.arg)
    elif isinstance(tree, Bin):
        yield from variables(tree.left)
        yield from variables(tree.right)
    elif isinstance(tree, Call):
        for a in tree.args:
            yield from variables(a)


def evaluate(tree: Node, env: Mapping[str, Fraction]) -> Fraction | None:
    """The exact value of a formula, or ``None`` where it divides by zero."""
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
    args = [evaluate(a, env) for a in tree.args]
    if any(a is None for a in args):
        return None
    return _APPLY[tree.fn]([a for a in args if a is not None], tree.digits)


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
    seen.
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
    args = [fingerprint(a, env) for a in tree.args]
    if any(a is None for a in args):
        return None
    key = f"{tree.fn}:{tree.digits}:{':'.join(map(str, args))}".encode()
    return int.from_bytes(blake2b(key, digest_size=8).digest(), "big") % PRIME


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
    p = _PRECEDENCE[tree.op]
    right = _render(tree.right, p + 1 if tree.op in "-/" else p)
    text = f"{_render(tree.left, p)} {tree.op} {right}"
    return f"({text})" if p < outer else text
