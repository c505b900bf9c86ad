"""A formula's tree: the nodes :func:`agentproc.declared.formula.parse` makes of its
text (the number grammar's and the typed grammar's), immutable and compared by value. Pure
data; reading, evaluating and checking a tree are the other ``formula`` modules'.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

BinOp = Literal["+", "-", "*", "/"]
"""An arithmetic operator."""
CmpOp = Literal["==", "!=", "<", "<=", ">", ">="]
"""A comparison (typed grammar)."""


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


@dataclass(frozen=True)
class Lit:
    """A category (string) or ``true``/``false`` literal (typed grammar)."""

    value: str | bool


@dataclass(frozen=True)
class Cmp:
    """``left op right``, a comparison (typed grammar)."""

    op: CmpOp
    left: Node
    right: Node


@dataclass(frozen=True)
class Logic:
    """``and`` / ``or`` of two or more operands, lazy; ``not`` of one (typed grammar)."""

    op: Literal["and", "or", "not"]
    args: tuple[Node, ...]


@dataclass(frozen=True)
class Choose:
    """``ifelse(c, a, b)`` or ``case(c1, v1, ..., default)``: the value of the first
    branch whose condition holds, else the default; only that branch is evaluated."""

    fn: Literal["ifelse", "case"]
    args: tuple[Node, ...]

    @property
    def branches(self) -> tuple[tuple[Node, Node], ...]:
        """``(condition, value)`` pairs, in order."""
        a = self.args
        return tuple((a[k], a[k + 1]) for k in range(0, len(a) - 1, 2))

    @property
    def default(self) -> Node:
        """The value when no condition holds."""
        return self.args[-1]


@dataclass(frozen=True)
class Lookup:
    """``lookup(table, key, 'column')``: the column of the table's record whose key is
    ``key``'s value (typed grammar, a step's formula only). Parsed unbound; the workflow
    binds its table's values (:func:`agentproc.declared.formula_values.bind`)."""

    table: str
    key: Node
    column: str
    rows: tuple[tuple[str | Var, Value | Var], ...] | None = None
    """Key -> the column's value, for every record (``None``: not bound yet); a record
    drawn for every instance is keyed by the variable of its drawn key."""


Node = Num | Var | Neg | Bin | Call | Lit | Cmp | Logic | Choose | Lookup
"""A formula tree."""
Value = Fraction | str | bool
"""A value of the typed grammar."""


def lookups(tree: Node) -> Iterator[Lookup]:
    """The look-ups a formula makes, in the order written."""
    if isinstance(tree, Lookup):
        yield tree
        yield from lookups(tree.key)
    elif isinstance(tree, Neg):
        yield from lookups(tree.arg)
    elif isinstance(tree, Bin | Cmp):
        yield from lookups(tree.left)
        yield from lookups(tree.right)
    elif isinstance(tree, Call | Logic | Choose):
        for a in tree.args:
            yield from lookups(a)
