"""Tables whose whole records are drawn for every instance (workflow format 2), and the
strings drawn among a table's keys (``key_of``): checked when the file is read. Pure.

A table with ``count = [low, high]`` and ``key_pattern`` holds no rows in the file: each
instance draws how many records it has, a distinct key for each by the pattern, and every
column (each column gives how it is drawn, as an input does). Inside, the table has
``high`` *slots*, each a hidden input for its key (``accounts[#1]``: the key, or ``''``
where the instance has fewer records) and one per column (``accounts[#1].balance``); a
look-up's key is then a string, matched against the slots' drawn keys. A string input
or drawn column with ``key_of = "accounts"`` is drawn among that table's keys on the
instance (a column's among a table declared before its own).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from agentproc.arith import symbol_units
from agentproc.declared.formula_nodes import Value, Var
from agentproc.declared.formula_types import BOOLEAN, DATE, NUMBER, STRING, TableType, Type
from agentproc.declared.id_pattern import PatternError, draw_distinct, parse_pattern, size
from agentproc.declared.inputs import InputSpec
from agentproc.declared.spec import (
    MAX_DRAWN_ROWS,
    DeclaredWorkflow,
    TableSpec,
    WorkflowSpec,
)
from agentproc.errors import InputError

_KINDS = {"number": NUMBER, "boolean": BOOLEAN, "string": STRING, "date": DATE}


def slot(table: str, i: int) -> str:
    """The hidden input of a drawn table's ``i``-th record's key (from 0)."""
    return f"{table}[#{i + 1}]"


def drawn_table(
    name: str,
    table: TableSpec,
    spec: WorkflowSpec,
    where: str,
    hidden: list[tuple[str, InputSpec]],
) -> tuple[TableType, dict[str | Var, dict[str, Value | Var]]]:
    """A drawn table's type and records (one per slot, keyed by its key's variable);
    its hidden inputs are appended to ``hidden``. Raises one
    :class:`~agentproc.errors.InputError` naming the table's field."""
    field = f"tables.{name}"
    if table.count is None or table.key_pattern is None:
        missing = "count" if table.count is None else "key_pattern"
        why = "a table of drawn records gives both count and key_pattern"
        raise InputError(where, why, f"{field}.{missing}")
    low, high = table.count
    if not 1 <= low <= high <= MAX_DRAWN_ROWS:
        why = f"[low, high] with 1 <= low <= high <= {MAX_DRAWN_ROWS}, not [{low}, {high}]"
        raise InputError(where, why, f"{field}.count")
    try:
        pattern = parse_pattern(table.key_pattern)
    except PatternError as exc:
        raise InputError(where, str(exc), f"{field}.key_pattern") from None
    if size(pattern) < high * 4:
        why = f"it draws {size(pattern)} distinct keys: too few for {high} distinct records"
        raise InputError(where, why, f"{field}.key_pattern")
    if table.rows:
        why = "a table of drawn records lists no rows (every record is drawn)"
        raise InputError(where, why, f"{field}.rows")
    if table.key in table.columns:
        raise InputError(where, f"{table.key!r} is the key column", f"{field}.columns")
    drawn = {c: kind for c, kind in table.columns.items() if isinstance(kind, InputSpec)}
    for c, kind in table.columns.items():
        if c not in drawn:
            why = f"a drawn record's column gives how it is drawn (as an input does), not {kind!r}"
            raise InputError(where, why, f"{field}.columns.{c}")
    check_key_of(table, spec, name, where, field)
    key = InputSpec(type="string", pattern=table.key_pattern)
    records: dict[str | Var, dict[str, Value | Var]] = {}
    for i in range(high):
        hidden.append((slot(name, i), key))
        record: dict[str, Value | Var] = {}
        for c, kind in drawn.items():
            hidden.append((f"{slot(name, i)}.{c}", kind))
            record[c] = Var(hidden[-1][0])
        records[Var(slot(name, i))] = record
    columns: dict[str, Type] = {}
    for c, kind in drawn.items():
        if kind.kind == "category":
            columns[c] = Type.category(str(n) for n in kind.choices or ())
        else:
            columns[c] = _KINDS[kind.kind]
    return TableType((), columns, drawn=True), records


def check_key_of(table: TableSpec, spec: WorkflowSpec, name: str, where: str, field: str) -> None:
    """Each drawn column's ``key_of`` names a table declared before this one."""
    tables = list(spec.tables or {})
    before = tables[: tables.index(name)]
    for c, kind in table.columns.items():
        if isinstance(kind, InputSpec) and kind.key_of is not None and kind.key_of not in before:
            why = f"{kind.key_of!r} is no table declared before {name}"
            raise InputError(where, why, f"{field}.columns.{c}.key_of")


def check_input_keys(spec: WorkflowSpec, where: str) -> None:
    """Each input's ``key_of`` names a table of the workflow."""
    for n, i in spec.inputs.items():
        if i.key_of is not None and i.key_of not in (spec.tables or {}):
            raise InputError(where, f"{i.key_of!r} is no table", f"inputs.{n}.key_of")


def needs_records(spec: WorkflowSpec) -> bool:
    """Whether an instance's draw reads a table's keys: a table of drawn records, or a
    string drawn among a table's keys."""
    tables = spec.tables or {}
    columns = [c for t in tables.values() for c in t.columns.values() if isinstance(c, InputSpec)]
    return any(t.count is not None for t in tables.values()) or any(
        i.key_of is not None for i in (*spec.inputs.values(), *columns)
    )


def draw_records(
    wf: DeclaredWorkflow, rng: random.Random, draw_one: Callable[[InputSpec, random.Random], int]
) -> tuple[int, ...]:
    """Every input's value in units (in ``wf.input_names`` order) for a workflow that
    :func:`needs_records`: first each drawn table (how many records, their distinct
    keys, then each slot's columns), then the inputs, then the other tables' drawn
    columns; a ``key_of`` string among its table's keys on this instance, anything else
    by ``draw_one``."""
    spec = wf.spec
    tables = spec.tables or {}
    keys: dict[str, list[str]] = {
        n: [str(r[t.key]) for r in t.rows] for n, t in tables.items() if t.count is None
    }
    values: dict[str, int] = {}

    def one(s: InputSpec) -> int:
        if s.key_of is not None:
            return symbol_units(rng.choice(keys[s.key_of]))
        return draw_one(s, rng)

    for name, t in tables.items():
        if t.count is None or t.key_pattern is None:
            continue
        ids = draw_distinct(parse_pattern(t.key_pattern), rng.randint(*t.count), rng)
        keys[name] = ids
        for i in range(t.count[1]):
            values[slot(name, i)] = symbol_units(ids[i] if i < len(ids) else "")
            for c, kind in t.columns.items():
                if isinstance(kind, InputSpec):
                    values[f"{slot(name, i)}.{c}"] = one(kind)
    for name, s in spec.inputs.items():
        values[name] = one(s)
    for name, s in wf.hidden:
        if name not in values:
            values[name] = one(s)
    return tuple(values[n] for n in wf.input_names)
