"""An instance's records of a table drawn for every instance, as its scenario holds them,
and what a look-up step's tool says of a key that is no record of the instance."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from agentproc.arith import SCALE, to_number
from agentproc.declared import formula
from agentproc.declared.drawn_tables import slot
from agentproc.declared.file import TableSpec


def drawn_rows(name: str, table: TableSpec, drawn: Mapping[str, int]) -> list[dict[str, Any]]:
    """The instance's records of a drawn table, in slot order: each its key and every
    column (a slot the instance leaves empty, its key ``''``, is no record)."""
    scale = SCALE["decimal"]
    rows = []
    for i in range((table.count or (0, 0))[1]):
        key = to_number(drawn[slot(name, i)], scale)
        if key == "":
            continue
        row = {table.key: key}
        for column in table.columns:
            row[column] = to_number(drawn[f"{slot(name, i)}.{column}"], scale)
        rows.append(row)
    return rows


def no_record(step: Any, args: Mapping[str, Any]) -> str | None:
    """Why a look-up step's call reads no record: ``orders has no record 'ORD-00000'``
    for the first key argument that is no key of its table on this instance (``None``:
    every key is one). ``step``: a scenario's step, its ``tree`` its formula bound to the
    instance's tables (a step whose formula looks nothing up is never walked)."""
    if step.formula is None or not _keys_read(step.formula):
        return None
    for look in formula.lookups(step.tree):
        if not isinstance(look.key, formula.Var) or look.rows is None:
            continue
        got = args.get(look.key.name)
        if isinstance(got, str) and all(k != got for k, _ in look.rows):
            return f"{look.table} has no record {got!r}"
    return None


def lookup_keys(steps: Iterable[Any]) -> frozenset[str]:
    """The variables some step's look-up reads as its key (the steps' ``formula``:
    ``None`` for a procedure's step)."""
    return frozenset().union(*(_keys_read(s.formula) for s in steps if s.formula is not None))


@lru_cache(maxsize=4096)
def _keys_read(text: str) -> frozenset[str]:
    """The variables a formula's look-ups read as their keys (kept per text: a workflow's
    instances share their formulas, and the keys are the same whatever the tables)."""
    tree = formula.parse(text, True)
    return frozenset(
        look.key.name for look in formula.lookups(tree) if isinstance(look.key, formula.Var)
    )
