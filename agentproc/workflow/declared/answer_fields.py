"""A multi-field answer at the finish tool: one argument per field, named by the field and
typed by its kind (a number, a category's name, a boolean).

A field left out is accepted (the monitor labels it a wrong field); an argument that is no
field, or a value not of its field's kind, refuses the call as invalid arguments, as a
step tool's would.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from agentproc.workflow.indexed import Workflow
from agentproc.workflow.scenario_types import VariableType


def fields_problem(wf: Workflow, args: Mapping[str, Any]) -> str | None:
    """Why a finish call's arguments do not fit the fields (``None``: they do)."""
    names = [f for f, _ in wf.answer_fields]
    for arg, v in args.items():
        if arg not in names:
            return f"{arg!r} is not a field of the answer (the fields are {', '.join(names)})"
        kind = (wf.types or {}).get(arg)
        if not _fits(v, kind):
            return f"{arg}: expected {_kind_text(kind)}"
    return None


def _fits(v: Any, kind: VariableType | None) -> bool:
    if kind is None:
        return (
            isinstance(v, int | float)
            and not isinstance(v, bool)
            and not (isinstance(v, float) and not math.isfinite(v))
        )
    if kind.type == "boolean":
        return isinstance(v, bool)
    return isinstance(v, str) and v in (kind.choices or ())


def _kind_text(kind: VariableType | None) -> str:
    if kind is None:
        return "a finite number"
    if kind.type == "boolean":
        return "a boolean"
    return "one of " + ", ".join(kind.choices or ())


def submitted(wf: Workflow, args: Mapping[str, Any]) -> dict[str, Any]:
    """The fields a finish call gave, in the fields' order."""
    return {f: args[f] for f, _ in wf.answer_fields if f in args}


def recorded(answer: Mapping[str, Any]) -> str:
    """The finish tool's reply to an accepted multi-field answer."""
    given = ", ".join(f"{f}={v}" for f, v in answer.items())
    return f"Answer recorded: {given or 'no field'}."


def finish_tool(
    tool: str,
    fields: Sequence[str],
    number_type: str,
    types: Mapping[str, VariableType] | None,
) -> dict[str, Any]:
    """The finish tool of a multi-field answer, in OpenAI function-tool format."""
    props: dict[str, Any] = {}
    for f in fields:
        t = (types or {}).get(f)
        prop: dict[str, Any] = {"type": number_type}
        if t is not None:
            prop = (
                {"type": "boolean"}
                if t.type == "boolean"
                else {"type": "string", "enum": list(t.choices or ())}
            )
        props[f] = {**prop, "description": f"The value of {f}."}
    return {
        "type": "function",
        "function": {
            "name": tool,
            "description": (
                f"Submit the final answer, one argument per field ({', '.join(fields)}), "
                "after every step has been executed. This ends the workflow."
            ),
            "parameters": {
                "type": "object",
                "properties": props,
                "required": list(fields),
                "additionalProperties": False,
            },
        },
    }
