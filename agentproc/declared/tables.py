"""A workflow's tables (format 2): checked, typed and read into exact values.

A table is the state of the world behind the tools: records with a key (a name) and
typed columns, read by a step's ``lookup(table, key, 'column')``. Its key column's names
are a category: a look-up's key is a category whose names are all the table's keys, so
that a look-up of a record that does not exist is refused when the file is read. The
agent never sees a table; it sees what the step's tool returns.
"""

from __future__ import annotations

import math
from fractions import Fraction

from agentproc.declared.dates import is_date
from agentproc.declared.drawn_tables import check_input_keys, drawn_table
from agentproc.declared.drawn_tables import check_key_of as _check_key_of
from agentproc.declared.formula import (
    CHOOSERS,
    DATE_FUNCTIONS,
    FUNCTIONS,
    LITERALS,
    LOOKUP,
    MAX_CATEGORY,
    Value,
)
from agentproc.declared.formula_nodes import Var
from agentproc.declared.formula_types import (
    BOOLEAN,
    DATE,
    NUMBER,
    STRING,
    Kind,
    TableType,
    Type,
)
from agentproc.declared.formula_values import Tables
from agentproc.declared.inputs import _NAME, MAX_DECIMALS, MAX_MAGNITUDE, NAME, InputSpec
from agentproc.declared.spec import StepSpec, TableSpec, WorkflowSpec
from agentproc.errors import InputError

_KINDS = {"number": NUMBER, "boolean": BOOLEAN, "string": STRING, "date": DATE}


Hidden = list[tuple[str, InputSpec]]
"""The hidden inputs of a workflow's drawn table values, in order."""


def check_tables(spec: WorkflowSpec, where: str) -> tuple[dict[str, TableType], Tables, Hidden]:
    """Each table's type and records (none without tables), and the hidden inputs its
    drawn columns make: one per record and drawn column, named
    ``table[key].column``, which the record holds as that variable. Raises one
    :class:`~agentproc.errors.InputError` for a table that needs format 2, or whose
    name is not one or is also a variable's or a function's."""
    check_input_keys(spec, where)
    if not spec.tables:
        return {}, {}, []
    if spec.format != 2:
        raise InputError(where, "tables need format = 2", "tables")
    outputs = {s.output for s in spec.steps if isinstance(s, StepSpec)}
    types: dict[str, TableType] = {}
    values: dict[str, dict[str | Var, dict[str, Value | Var]]] = {}
    hidden: Hidden = []
    for name, table in spec.tables.items():
        field = f"tables.{name}"
        if not _NAME.match(name):
            raise InputError(where, f"{name!r} is not a table name ({NAME})", field)
        if name in spec.inputs or name in outputs:
            what = "an input" if name in spec.inputs else "a step's output"
            why = f"{name!r} is also {what}: a table needs a name of its own"
            raise InputError(where, why, field)
        grammar = (FUNCTIONS, CHOOSERS, LITERALS, DATE_FUNCTIONS)
        if any(name in names for names in grammar) or name == LOOKUP:
            raise InputError(where, f"{name!r} is a name of the formula grammar", field)
        if table.count is not None or table.key_pattern is not None:
            types[name], values[name] = drawn_table(name, table, spec, where, hidden)
            continue
        if not table.rows:
            why = "a table lists its rows, or gives count and key_pattern (drawn records)"
            raise InputError(where, why, f"{field}.rows")
        _check_key_of(table, spec, name, where, field)
        _check_rows(table, where, field)
        records: dict[str | Var, dict[str, Value | Var]] = {}
        for row in table.rows:
            key = str(row[table.key])
            record: dict[str, Value | Var] = {}
            for c, kind in table.columns.items():
                if isinstance(kind, InputSpec):  # drawn for every instance: a hidden input
                    hidden.append((f"{name}[{key}].{c}", kind))
                    record[c] = Var(hidden[-1][0])
                else:
                    record[c] = _value(row[c])
            records[key] = record
        types[name] = TableType(tuple(str(k) for k in records), column_types(table))
        values[name] = records
    return types, values, hidden


def column_types(table: TableSpec) -> dict[str, Type]:
    """Each column's type: given, drawn (as its specification's), or a category of the
    names its rows hold."""
    out: dict[str, Type] = {}
    for c, kind in table.columns.items():
        if isinstance(kind, InputSpec):
            if kind.kind == "category":
                out[c] = Type.category(str(n) for n in kind.choices or ())
            else:
                out[c] = _KINDS[kind.kind]
        else:
            out[c] = _KINDS.get(kind) or Type.category(str(r[c]) for r in table.rows)
    return out


def _value(v: bool | float | str) -> Value:
    """A table's value as the formula grammar reads it (a number an exact fraction)."""
    return v if isinstance(v, bool | str) else Fraction(repr(v)).limit_denominator(1000)


def _check_rows(table: TableSpec, where: str, field: str) -> None:
    """Column names, then every row: its key (a name, unique) and each column's value."""
    for name in table.columns:
        if not _NAME.match(name):
            raise InputError(where, f"{name!r} is not a column name ({NAME})", f"{field}.columns")
    if table.key in table.columns:
        raise InputError(where, f"{table.key!r} is the key column", f"{field}.columns")
    keys: set[str] = set()
    given = {c: kind for c, kind in table.columns.items() if not isinstance(kind, InputSpec)}
    want = {table.key, *given}
    for i, row in enumerate(table.rows):
        at = f"{field}.rows[{i}]"
        if set(row) != want:
            odd = sorted(set(row) ^ want)[0]
            what = "missing" if odd not in row else "not a column"
            if isinstance(table.columns.get(odd), InputSpec):  # drawn, never given
                what = "drawn for every instance (its column gives how): not given in a row"
            raise InputError(where, what, f"{at}.{odd}")
        key = row[table.key]
        if not isinstance(key, str) or not 0 < len(key) <= MAX_CATEGORY:
            why = f"a key is a name of 1 to {MAX_CATEGORY} characters, not {key!r}"
            raise InputError(where, why, f"{at}.{table.key}")
        if key in keys:
            raise InputError(where, f"{key!r} is listed twice", f"{at}.{table.key}")
        keys.add(key)
        for column, kind in given.items():
            problem = _cell(row[column], kind)
            if problem:
                raise InputError(where, problem, f"{at}.{column}")


def _cell(v: bool | float | str, kind: Kind) -> str | None:
    """What is wrong with a table's value for a column of ``kind`` (``None``: nothing)."""
    if kind == "boolean":
        return None if isinstance(v, bool) else f"{v!r} is not a boolean"
    if kind == "date":
        return None if is_date(v) else f"{v!r} is not an ISO date (YYYY-MM-DD)"
    if kind in ("category", "string"):
        if isinstance(v, str) and 0 < len(v) <= MAX_CATEGORY:
            return None
        return f"{v!r} is not a name of 1 to {MAX_CATEGORY} characters"
    if isinstance(v, bool | str):
        return f"{v!r} is not a number"
    if not math.isfinite(v) or abs(v) > MAX_MAGNITUDE:
        return f"{v} is not within [-1e6, 1e6]"
    if Fraction(repr(v)) * 10**MAX_DECIMALS % 1:
        return f"{v} has more than {MAX_DECIMALS} decimals"
    return None
