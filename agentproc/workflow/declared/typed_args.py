"""A branched workflow's arguments checked by their types, without a schema validator:
each argument of its kind (a number, a boolean, any text, an ISO date, or one of a
category's names), no argument unknown, every required one given. A call that fits needs
nothing more; one that does not is explained by the tool's JSON Schema."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agentproc.declared.dates import is_date
from agentproc.workflow.declared.records import lookup_keys

if TYPE_CHECKING:
    from agentproc.workflow.present import Presented
    from agentproc.workflow.runtime import Workflow

Kind = frozenset[str] | bool | str | None
"""A parameter's kind: a category's names, ``True`` for a boolean, ``"string"`` or
``"date"``, ``None`` for a number."""
ToolKinds = dict[str, dict[str, tuple[Kind, bool]]]
"""Tools as shown -> each parameter as shown -> its kind and whether it is optional."""


def is_number(v: object, integer: bool) -> bool:
    """Whether ``v`` is a JSON number (a whole one when ``integer``), never a boolean."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return False
    return not (isinstance(v, float) and integer and not v.is_integer())


def fits(kinds: dict[str, tuple[Kind, bool]] | None, args: dict[str, Any]) -> bool:
    """Whether a call's ``args`` fit its tool's parameters ``kinds``."""
    if kinds is None or len(args) > len(kinds):
        return False
    for param, (kind, optional) in kinds.items():
        if param not in args:
            if optional:
                continue
            return False
        v = args[param]
        if kind is None:  # a number
            if not is_number(v, False) or (isinstance(v, float) and not math.isfinite(v)):
                return False
        elif isinstance(kind, bool):  # a boolean
            if not isinstance(v, bool):
                return False
        elif isinstance(kind, str):  # a string (any text) or a date (ISO text)
            if not isinstance(v, str) or (kind == "date" and not is_date(v)):
                return False
        elif not isinstance(v, str) or v not in kind:  # a category's names
            return False
    return all(p in kinds for p in args)


def tool_kinds(wf: Workflow, pres: Presented | None, shown: Callable[[str], str]) -> ToolKinds:
    """Each tool of a branched workflow, as ``pres`` shows it, with its parameters' kinds
    (a look-up's key is any text: a name of no record is the tool's to say) and whether
    each is optional (a variable a conditional step defines); a loop's tool once, by its
    parameters' names in the loop. In the workflow's own names (``pres`` ``None``), found
    once per process for all its instances (kept by everything it reads; only read)."""
    if pres is not None:  # a variant's names, drawn per scenario
        return _tool_kinds(wf, pres, shown)
    key = (
        wf.var_names,  # these two are shared by the instances (``runtime._shape``)
        wf.operands,
        tuple(
            (s.name, s.when is not None, s.formula, s.loop and tuple(s.loop.parameters.items()))
            for s in wf.steps
        ),
        tuple((k, t.type, tuple(t.choices or ())) for k, t in (wf.types or {}).items()),
        (wf.finish_tool, wf.finish_argument, wf.scenario.answer_variable),
    )
    found = _KINDS.get(key)
    if found is None:
        if len(_KINDS) >= 256:  # bounded: a process may run many workflows
            _KINDS.clear()
        found = _KINDS[key] = _tool_kinds(wf, None, shown)
    return found


_KINDS: dict[tuple[Any, ...], ToolKinds] = {}
""":func:`tool_kinds` of a workflow in its own names, by everything it reads."""


def _tool_kinds(wf: Workflow, pres: Presented | None, shown: Callable[[str], str]) -> ToolKinds:
    types = wf.types or {}
    optional = {s.output for s in wf.steps if s.when is not None}
    keys = lookup_keys(wf.steps)

    def kind(var: str) -> Kind:
        t = types.get(var)
        if t is None:
            return None
        if t.type in ("string", "date"):
            return t.type
        if var in keys:
            return "string"
        return True if t.type == "boolean" else frozenset(t.choices or ())

    out: ToolKinds = {}
    for s in wf.steps:  # a loop's tool: its first item's step (each item's reads alike)
        # A loop's parameter is its variable of that item (``owner`` of ``owners__0``).
        var = {p: v for v, p in (s.loop.parameters if s.loop else {}).items()}
        tool = s.name if pres is None else pres.tool_names[s.name]
        out.setdefault(
            tool, {shown(p): (kind(var.get(p, p)), var.get(p, p) in optional) for p in s.params}
        )
    out[wf.finish_tool] = {wf.finish_argument: (kind(wf.scenario.answer_variable), False)}
    return out
