"""Types of the typed formula grammar (workflow format 2), checked when a file is read.

Every value is a number, a boolean or a category (one name of a closed list). A formula's
type follows from its variables' and literals': arithmetic and ``min``/``max``/``abs``/
``round`` take and give numbers; ``< <= > >=`` compare numbers; ``==`` and ``!=`` compare
two values of one type (a category literal must be one of the other side's names: a typo
is caught here, not at run time); ``and or not`` and the conditions of ``ifelse``/``case``
take booleans; the branches of ``ifelse``/``case`` share one type, and a category result
may be any of their names. Nothing is evaluated.

>>> from agentproc.declared.formula import parse
>>> tier = Type.category(["gold", "silver"])
>>> check(parse("ifelse(tier == 'gold', 'priority', 'standard')", typed=True), {"tier": tier})
Type(kind='category', choices=('priority', 'standard'))
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from agentproc.declared.formula import (
    DATE_FUNCTIONS,
    Bin,
    Call,
    Choose,
    Cmp,
    FormulaError,
    Lit,
    Logic,
    Lookup,
    Neg,
    Node,
    Num,
    Var,
    render,
)

Kind = Literal["number", "category", "boolean", "string", "date"]
KINDS: tuple[Kind, ...] = ("number", "category", "boolean", "string", "date")
"""The value types of a workflow."""


@dataclass(frozen=True)
class Type:
    """A value's type: its kind and, for a category, its names (sorted)."""

    kind: Kind
    choices: tuple[str, ...] = ()

    @classmethod
    def category(cls, names: Iterable[str]) -> Type:
        """A category of these names."""
        return cls("category", tuple(sorted(set(names))))

    def text(self, name: str | None = None) -> str:
        """How an error names it: ``tier (a category: gold, silver)``."""
        what = _WHAT.get(self.kind)
        if what is None:
            shown = ", ".join(self.choices[:8]) + (", ..." if len(self.choices) > 8 else "")
            what = f"a category: {shown}"
        return f"{name} ({what})" if name else what


_WHAT = {"number": "a number", "boolean": "a boolean", "string": "a string", "date": "a date"}
NUMBER = Type("number")
BOOLEAN = Type("boolean")
STRING = Type("string")
"""An id: text drawn by a pattern or a table's key, compared only with ``==``/``!=``."""
DATE = Type("date")
"""A date (ISO text), compared with ``== != < <= > >=``, read by ``days_between``."""


@dataclass(frozen=True)
class TableType:
    """A table's type (workflow format 2): its records' keys and each column's type."""

    keys: tuple[str, ...]
    columns: Mapping[str, Type]
    drawn: bool = False
    """Whether its records are drawn for every instance (``count``): its keys are then
    unknown until an instance is drawn, and a look-up's key is a string."""


def check(tree: Node, env: Mapping[str, Type | TableType]) -> Type:
    """The type of ``tree`` over variables of the types ``env`` gives, or one
    :class:`FormulaError` saying what does not fit."""
    if isinstance(tree, Num):
        return NUMBER
    if isinstance(tree, Var):
        got = env[tree.name]
        if isinstance(got, TableType):
            raise FormulaError(f"{tree.name} is a table: read it with lookup({tree.name}, ...)")
        return got
    if isinstance(tree, Lit):
        return BOOLEAN if isinstance(tree.value, bool) else Type.category([tree.value])
    if isinstance(tree, Neg):
        _want(tree.arg, env, NUMBER, "unary '-'")
        return NUMBER
    if isinstance(tree, Bin):
        _want(tree.left, env, NUMBER, f"'{tree.op}'")
        _want(tree.right, env, NUMBER, f"'{tree.op}'")
        return NUMBER
    if isinstance(tree, Call) and tree.fn in DATE_FUNCTIONS:
        return _dated(tree, env)
    if isinstance(tree, Call):
        for a in tree.args:
            _want(a, env, NUMBER, f"{tree.fn}()")
        return NUMBER
    if isinstance(tree, Cmp):
        return _compare(tree, env)
    if isinstance(tree, Logic):
        for a in tree.args:
            _want(a, env, BOOLEAN, f"'{tree.op}'")
        return BOOLEAN
    if isinstance(tree, Choose):
        return _choose(tree, env)
    if isinstance(tree, Lookup):
        return _lookup(tree, env)
    raise TypeError(f"not a formula node: {tree!r}")  # pragma: no cover


def _want(tree: Node, env: Mapping[str, Type | TableType], want: Type, where: str) -> None:
    got = check(tree, env)
    if got.kind != want.kind:
        raise FormulaError(f"{where} takes {want.text()}, not {got.text(_name(tree))}")


def _name(tree: Node) -> str:
    return render(tree)


def _compare(tree: Cmp, env: Mapping[str, Type | TableType]) -> Type:
    left, right = check(tree.left, env), check(tree.right, env)
    if tree.op not in ("==", "!=") and not (left.kind == right.kind == "date"):
        for side, t in ((tree.left, left), (tree.right, right)):
            if t.kind != "number":
                dated = {left.kind, right.kind} & {"date", "string"}
                what = "numbers or two dates" if dated else "numbers"
                raise FormulaError(f"'{tree.op}' compares {what}, not {t.text(_name(side))}")
        return BOOLEAN
    if left.kind != right.kind:
        raise FormulaError(
            f"'{tree.op}' compares values of one type, not {left.text(_name(tree.left))} "
            f"with {right.text(_name(tree.right))}"
        )
    if left.kind == "category":
        sides = ((tree.left, tree.right, right), (tree.right, tree.left, left))
        for lit, other, other_type in sides:
            if (
                isinstance(lit, Lit)
                and not isinstance(other, Lit)
                and lit.value not in other_type.choices
            ):
                shown = other_type.text(_name(other))
                raise FormulaError(f"{lit.value!r} is not one of {shown}")
        if not set(left.choices) & set(right.choices):
            raise FormulaError(
                f"{_name(tree.left)} and {_name(tree.right)} share no category: "
                f"'{tree.op}' would never change"
            )
    return BOOLEAN


def _choose(tree: Choose, env: Mapping[str, Type | TableType]) -> Type:
    for cond, _ in tree.branches:
        _want(cond, env, BOOLEAN, f"a condition of {tree.fn}()")
    values = [v for _, v in tree.branches] + [tree.default]
    types = [check(v, env) for v in values]
    first = types[0]
    for v, t in zip(values[1:], types[1:], strict=True):
        if t.kind != first.kind:
            raise FormulaError(
                f"the branches of {tree.fn}() have one type, not {first.text(_name(values[0]))} "
                f"and {t.text(_name(v))}"
            )
    if first.kind == "category":
        return Type.category(c for t in types for c in t.choices)
    return first


def _dated(tree: Call, env: Mapping[str, Type | TableType]) -> Type:
    """``date('...')`` is a date; ``days_between(a, b)`` takes two dates, gives a number."""
    if tree.fn == "date":
        return DATE
    for a in tree.args:
        _want(a, env, DATE, "days_between()")
    return NUMBER


def _lookup(tree: Lookup, env: Mapping[str, Type | TableType]) -> Type:
    table = env.get(tree.table)
    if not isinstance(table, TableType):
        raise FormulaError(f"lookup() reads a table: {tree.table!r} is not one")
    column = table.columns.get(tree.column)
    if column is None:
        raise FormulaError(
            f"table {tree.table} has no column {tree.column!r} "
            f"(its columns: {', '.join(table.columns)})"
        )
    key = check(tree.key, env)
    if table.drawn or key.kind == "string":
        if key.kind != "string":
            raise FormulaError(
                f"the key of table {tree.table} is a string (an id), not "
                f"{key.text(_name(tree.key))}"
            )
        return column
    if key.kind != "category":
        raise FormulaError(
            f"the key of table {tree.table} is a category, not {key.text(_name(tree.key))}"
        )
    lacking = [c for c in key.choices if c not in table.keys]
    if lacking:
        raise FormulaError(f"table {tree.table} has no record {lacking[0]!r}")
    return column
