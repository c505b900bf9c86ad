"""A declared workflow: the file a user writes (TOML or JSON), read and checked (its models
in :mod:`agentproc.procedures.workflow_spec`, its checks in
:mod:`agentproc.procedures.workflow_check`, both re-exported here).

A workflow names its inputs and how each is drawn (a range with decimals, an integer
range or a list of choices), then its steps, each a tool that computes one output
variable by a formula (:mod:`agentproc.procedures.formula`) over inputs and earlier
outputs, rounded to the step's decimals; the answer is the last step's output, given to
the finish tool. ``schemas/workflow.schema.json`` is generated from :class:`WorkflowSpec` by
:func:`agentproc.workflow.declared.workflow_schema`.

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

from agentproc.errors import InputError
from agentproc.jsonio import loads, unreadable
from agentproc.procedures.workflow_check import check_spec
from agentproc.procedures.workflow_spec import (
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
    DeclaredWorkflow,
    Exit,
    ExitSpec,
    InputSpec,
    StepSpec,
    WorkflowSpec,
)

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
    "WorkflowSpec",
    "check_workflow",
    "read_workflow",
    "workflow_from_json",
]


def check_workflow(spec: WorkflowSpec, where: str = "workflow") -> DeclaredWorkflow:
    """The checked workflow, or one :class:`InputError` naming ``where``, the step and the
    field (:func:`agentproc.procedures.workflow_check.check_spec`)."""
    return check_spec(spec, where)


def workflow_from_json(data: Any, where: str = "workflow") -> DeclaredWorkflow:
    """A checked workflow from parsed TOML or JSON."""
    try:
        spec = WorkflowSpec.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = first["loc"]
        if len(loc) > 2 and loc[0] == "steps" and loc[2] in ("step", "exit"):
            loc = (*loc[:2], *loc[3:])  # the kind of step the union tried: not a field
        field = ".".join(map(str, loc)) or None
        raise InputError(where, first["msg"].removeprefix("Value error, "), field) from None
    return check_workflow(spec, where)


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

            data = tomllib.loads(raw)
    except ValueError as exc:  # tomllib.TOMLDecodeError is one
        kind = "JSON" if path.suffix == ".json" else "TOML"
        raise InputError(path, f"not valid {kind} ({exc})") from None
    except RecursionError:
        raise InputError(path, "nested too deeply") from None
    return workflow_from_json(data, str(path))
