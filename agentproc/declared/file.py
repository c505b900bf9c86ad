"""A declared workflow: the file a user writes (TOML or JSON), read and checked (its models
in :mod:`agentproc.declared.spec`, its checks in
:mod:`agentproc.declared.check`, both re-exported here).

A workflow names its inputs and how each is drawn (a range with decimals, an integer
range or a list of choices), then its steps, each a tool that computes one output
variable by a formula (:mod:`agentproc.declared.formula`) over inputs and earlier
outputs, rounded to the step's decimals; the answer is the last step's output, given to
the finish tool. ``schemas/workflow.schema.json`` is generated from :class:`WorkflowSpec` by
:func:`agentproc.workflow.declared.compile.workflow_schema`.

:func:`check_workflow` turns a valid model into a :class:`DeclaredWorkflow` (formula
trees, dependencies, live steps) or raises one :class:`~agentproc.errors.InputError`
naming the file, the step and the field.

>>> spec = WorkflowSpec(
...     description="Total of a line.",
...     inputs={"qty": InputSpec(integers=(1, 9)), "price": InputSpec(range=(1.0, 5.0))},
...     steps=[StepSpec(tool="line_total", output="total", formula="qty * price")],
...     answer="total",
... )
>>> check_workflow(spec).depends
((),)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentproc.declared.check import check_spec
from agentproc.declared.inputs import (
    MAX_CHOICES,
    MAX_DECIMALS,
    MAX_FILE_BYTES,
    MAX_INPUTS,
    MAX_MAGNITUDE,
    MAX_TEXT,
    MAX_WORKFLOW_STEPS,
    NAME,
    RESERVED_TOOLS,
    TOOL,
    InputSpec,
)
from agentproc.declared.loops import check_looped, has_loops
from agentproc.declared.spec import (
    DeclaredWorkflow,
    Exit,
    ExitSpec,
    StepSpec,
    TableSpec,
    WorkflowSpec,
)
from agentproc.errors import InputError
from agentproc.jsonio import loads, unreadable

__all__ = [
    "MAX_CHOICES",
    "MAX_DECIMALS",
    "MAX_FILE_BYTES",
    "MAX_INPUTS",
    "MAX_MAGNITUDE",
    "MAX_TEXT",
    "MAX_WORKFLOW_STEPS",
    "NAME",
    "RESERVED_TOOLS",
    "TOOL",
    "DeclaredWorkflow",
    "Exit",
    "ExitSpec",
    "InputSpec",
    "StepSpec",
    "TableSpec",
    "WorkflowSpec",
    "check_workflow",
    "read_workflow",
    "workflow_from_json",
]


def check_workflow(spec: WorkflowSpec, where: str = "workflow") -> DeclaredWorkflow:
    """The checked workflow, or one :class:`InputError` naming ``where``, the step and the
    field (:func:`agentproc.declared.check.check_spec`; a file with lists and
    loops, on its expansion: :func:`agentproc.declared.loops.check_looped`)."""
    if has_loops(spec):
        return check_looped(spec, where)
    return check_spec(spec, where)


def workflow_from_json(data: Any, where: str = "workflow") -> DeclaredWorkflow:
    """A checked workflow from parsed TOML or JSON."""
    try:
        spec = WorkflowSpec.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        field = field_name(data, errors[0]["loc"])
        # A union's members each give an error at one field: the one of the member the
        # value's own type is says what is wrong (``answer = inf``: not a finite number).
        same = [e for e in errors if field_name(data, e["loc"]) == field]
        first = next((e for e in same if type(e["input"]).__name__ in e["loc"]), errors[0])
        message = first["msg"].removeprefix("Value error, ")
        raise InputError(where, message, field) from None
    return check_workflow(spec, where)


_MEMBERS = frozenset(
    {"step", "exit", "bool", "int", "float", "str", "tuple[float, float]", "tuple[str, str]"}
)
"""The members of a union pydantic names in a location (the kind of step tried, the type
of a value tried): no field is so named."""


def field_name(data: Any, loc: tuple[int | str, ...]) -> str | None:
    """A validation error's location named as the checks name a field: a step by its
    index and name (``steps[0] (line).decimals``, an exit by its ``name``), an input by
    its name (``inputs.rate.choices[2]``), an index in brackets.

    >>> field_name({"steps": [{"tool": "line"}]}, ("steps", 0, "step", "decimals"))
    'steps[0] (line).decimals'
    >>> field_name({}, ("inputs", "rate", "choices", 2, "float"))
    'inputs.rate.choices[2]'
    """
    if not loc:
        return None
    head, rest = str(loc[0]), loc[1:]
    if loc[0] == "steps" and rest and isinstance(rest[0], int):
        head, rest = _step_label(data, rest[0]), rest[1:]
    elif loc[0] == "inputs" and rest:
        head, rest = f"inputs.{rest[0]}", rest[1:]
    for part in rest:
        if isinstance(part, int):
            head += f"[{part}]"
        elif part not in _MEMBERS:
            head += f".{part}"
    return head


def _step_label(data: Any, index: int) -> str:
    """``steps[2] (name)``: the listed step's tool, or an exit's name, as the file gives
    it (left out when it gives none that could be one)."""
    steps = data.get("steps") if isinstance(data, dict) else None
    entry = steps[index] if isinstance(steps, list) and index < len(steps) else None
    name = None
    if isinstance(entry, dict):
        name = entry.get("name" if entry.get("kind") == "exit" else "tool")
    if isinstance(name, str) and 0 < len(name) <= 64:
        return f"steps[{index}] ({name})"
    return f"steps[{index}]"


class _Underflow(ValueError):
    """A TOML number whose nonzero digits a float cannot hold (``1e-400`` reads as 0)."""

    def __init__(self, spelled: str) -> None:
        super().__init__(f"the number {spelled} is too small: it would read as 0")
        self.spelled = spelled


def _toml_float(spelled: str) -> float:
    value = float(spelled)
    if value == 0 and any(d in spelled.lower().partition("e")[0] for d in "123456789"):
        raise _Underflow(spelled)
    return value


def read_workflow(path: str | Path) -> DeclaredWorkflow:
    """A workflow file (``.toml`` or ``.json``), checked, or one :class:`InputError`."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise InputError(path, f"{size} bytes, over the limit of {MAX_FILE_BYTES}")
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise unreadable(path, exc) from None
    try:
        if path.suffix == ".json":
            data = loads(raw)
        else:
            import tomllib  # here: only a TOML file needs it

            data = tomllib.loads(raw, parse_float=_toml_float)
    except _Underflow as exc:
        lines = (n for n, text in enumerate(raw.splitlines(), 1) if exc.spelled in text)
        line = next(lines, None)  # tomllib drops a number's underscores
        raise InputError(path, str(exc), f"line {line}" if line else None) from None
    except ValueError as exc:  # tomllib.TOMLDecodeError is one
        kind = "JSON" if path.suffix == ".json" else "TOML"
        raise InputError(path, f"not valid {kind} ({exc})") from None
    except RecursionError:
        raise InputError(path, "nested too deeply") from None
    return workflow_from_json(data, str(path))
