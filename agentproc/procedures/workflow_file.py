"""A declared workflow: the file a user writes (TOML or JSON), its model and its checks.

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

import re
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from agentproc.errors import InputError
from agentproc.jsonio import invalid, loads, unreadable
from agentproc.procedures import formula
from agentproc.procedures.formula import FUNCTIONS, FormulaError, Node

MAX_INPUTS = 50
"""Inputs a workflow may declare."""
MAX_WORKFLOW_STEPS = 200
"""Steps a workflow may declare (as many as a generated procedure)."""
MAX_CHOICES = 1000
"""Values a list of choices may hold."""
MAX_DECIMALS = 3
"""Decimals a value may have: values are held in thousandths."""
MAX_MAGNITUDE = 10**6
"""Every bound and choice of an input lies within ``[-1e6, 1e6]``."""
MAX_TEXT = 4000
"""Characters of a description."""
MAX_FILE_BYTES = 1 << 20
"""A workflow file larger than this is refused before it is read."""
RESERVED_TOOLS = frozenset({"add", "sub", "mul", "div"})
"""The calculator tool set's names, which no step or finish tool may take."""
NAME = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"
"""A variable name: a letter or ``_``, then letters, digits or ``_`` (64 at most)."""
TOOL = r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$"
"""A tool name as the chat-completions API accepts it (64 characters at most)."""
_NAME = re.compile(NAME)

_CONFIG = ConfigDict(extra="forbid")


class InputSpec(BaseModel):
    """One input and how it is drawn: exactly one of ``range``, ``integers``, ``choices``."""

    model_config = _CONFIG
    description: str = Field(default="", max_length=MAX_TEXT)
    """What the input is, as the agent is told."""
    range: tuple[float, float] | None = None
    """Drawn uniformly from ``[low, high]`` on the grid of ``decimals``."""
    decimals: int = Field(default=2, ge=0, le=MAX_DECIMALS)
    """Decimals of a ``range`` draw."""
    integers: tuple[int, int] | None = None
    """Drawn uniformly among the whole numbers of ``[low, high]``."""
    choices: list[float] | None = Field(default=None, min_length=1, max_length=MAX_CHOICES)
    """Drawn uniformly from these values (at most 3 decimals each)."""

    @model_validator(mode="after")
    def _one_way(self) -> InputSpec:
        given = [k for k in ("range", "integers", "choices") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(
                "give exactly one of range, integers, choices "
                f"(not {' and '.join(given) or 'none'})"
            )
        bounds = self.range or self.integers
        if bounds is not None:
            if bounds[0] > bounds[1]:
                raise ValueError(f"{given[0]}: low {bounds[0]} is above high {bounds[1]}")
            values: list[float] = list(bounds)
        else:
            values = list(self.choices or [])
            for v in values:
                if Fraction(repr(v)) * 10**MAX_DECIMALS % 1:
                    raise ValueError(f"choices: {v} has more than {MAX_DECIMALS} decimals")
        if any(abs(v) > MAX_MAGNITUDE for v in values):
            raise ValueError(f"{given[0]}: values must lie within [-1e6, 1e6]")
        return self


class StepSpec(BaseModel):
    """One step: a tool that computes ``output`` by ``formula``."""

    model_config = _CONFIG
    tool: str = Field(pattern=TOOL)
    """The step's tool name, unique in the workflow."""
    description: str = Field(default="", max_length=MAX_TEXT)
    """What the step does, as its tool describes it."""
    output: str = Field(pattern=NAME)
    """The variable the step defines, unique in the workflow."""
    formula: str = Field(max_length=formula.MAX_LENGTH)
    """Over inputs and earlier outputs: ``+ - * /``, parentheses, unary minus, numbers,
    ``min``, ``max``, ``abs``, ``round``."""
    decimals: int = Field(default=2, ge=0, le=MAX_DECIMALS)
    """The output is rounded to this many decimals, half away from zero."""


class WorkflowSpec(BaseModel):
    """A declared workflow file."""

    model_config = _CONFIG
    description: str = Field(min_length=1, max_length=MAX_TEXT)
    """What the workflow is for, as the agent is told."""
    inputs: dict[str, InputSpec] = Field(min_length=1, max_length=MAX_INPUTS)
    """Input name -> how it is drawn, in the order the agent is shown them."""
    steps: list[StepSpec] = Field(min_length=1, max_length=MAX_WORKFLOW_STEPS)
    """The steps, in their listed order."""
    answer: str = Field(pattern=NAME)
    """The answer variable: the last step's output."""
    finish_tool: str = Field(default="submit_answer", pattern=TOOL)
    """The tool the answer is given to, which ends the workflow."""


@dataclass(frozen=True)
class DeclaredWorkflow:
    """A checked workflow: its model and what its formulas say."""

    spec: WorkflowSpec
    trees: tuple[Node, ...]
    """Each step's formula tree."""
    reads: tuple[tuple[str, ...], ...]
    """Each step's distinct variables, in the order its formula writes them."""
    depends: tuple[tuple[int, ...], ...]
    """Each step's steps (numbered from 1) whose outputs it reads."""
    live: tuple[bool, ...]
    """Each step: whether its output reaches the answer."""
    where: str = "workflow"
    """The file it was read from (errors name it)."""

    @property
    def input_names(self) -> tuple[str, ...]:
        """The inputs, in declared order."""
        return tuple(self.spec.inputs)

    def field(self, index: int, name: str) -> str:
        """How an error names a step's field: ``steps[2] (net_amount).formula``."""
        return f"steps[{index}] ({self.spec.steps[index].tool}).{name}"


def check_workflow(spec: WorkflowSpec, where: str = "workflow") -> DeclaredWorkflow:
    """The checked workflow, or one :class:`InputError` naming ``where``, the step and the
    field: an input or output name that is not one or is taken twice, a tool name used
    twice or clashing with the finish tool, a formula that does not parse or reads an
    unknown, own or later variable (a cycle, when that later step reads this one), an
    answer that is not the last step's output. The identities are checked by
    :func:`agentproc.procedures.workflow_draw.check_identities`."""
    for name in spec.inputs:
        _variable_name(name, where, f"inputs.{name}")
    defined: dict[str, int] = {name: 0 for name in spec.inputs}
    outputs = {s.output: i for i, s in enumerate(spec.steps)}
    tools: dict[str, int] = {}
    trees, reads, depends = [], [], []
    for i, s in enumerate(spec.steps):
        label = f"steps[{i}] ({s.tool})"
        _variable_name(s.output, where, f"{label}.output")
        if s.output in defined:
            first = "an input" if defined[s.output] == 0 else f"step {defined[s.output]}'s output"
            raise InputError(where, f"{s.output!r} is already {first}", f"{label}.output")
        if s.tool in tools:
            raise InputError(
                where, f"tool {s.tool!r} is also step {tools[s.tool]}'s", f"{label}.tool"
            )
        if s.tool == spec.finish_tool or s.tool in RESERVED_TOOLS:
            what = "the finish tool" if s.tool == spec.finish_tool else "a calculator tool"
            raise InputError(where, f"tool {s.tool!r} is {what}'s name", f"{label}.tool")
        tools[s.tool] = i + 1
        try:
            tree = formula.parse(s.formula)
        except FormulaError as exc:
            raise InputError(where, f"{s.formula!r}: {exc}", f"{label}.formula") from None
        names = tuple(dict.fromkeys(formula.variables(tree)))
        for name in names:
            if name not in defined:
                raise InputError(where, _not_readable(spec, name, i, outputs), f"{label}.formula")
        if not names:
            raise InputError(where, "reads no input or earlier output", f"{label}.formula")
        trees.append(tree)
        reads.append(names)
        depends.append(tuple(sorted({defined[n] for n in names} - {0})))
        defined[s.output] = i + 1
    if spec.finish_tool in RESERVED_TOOLS:
        raise InputError(where, f"{spec.finish_tool!r} is a calculator tool's name", "finish_tool")
    if spec.answer != spec.steps[-1].output:
        raise InputError(
            where,
            f"{spec.answer!r} is not the last step's output ({spec.steps[-1].output!r}; "
            "a step after the answer would never be needed)",
            "answer",
        )
    return DeclaredWorkflow(spec, tuple(trees), tuple(reads), tuple(depends), _live(depends), where)


def _variable_name(name: str, where: str, field: str) -> None:
    if not _NAME.match(name):
        raise InputError(where, f"{name!r} is not a variable name ({NAME})", field)
    if name in FUNCTIONS:
        raise InputError(where, f"{name!r} is a function's name", field)


def _not_readable(spec: WorkflowSpec, name: str, index: int, outputs: Mapping[str, int]) -> str:
    """Why step ``index`` cannot read ``name``: unknown, its own, later, or a cycle."""
    if name not in outputs:
        return f"unknown variable {name!r} (not an input or an earlier step's output)"
    at = outputs[name]
    if at == index:
        return f"reads its own output {name!r} (a cycle)"
    path = _path_back(spec, at, spec.steps[index].output, outputs)
    if path is not None:
        chain = " -> ".join([spec.steps[index].output, *path])
        return f"a cycle: {chain}"
    return f"{name!r} is step {at + 1}'s output, defined later (steps read earlier outputs only)"


def _path_back(
    spec: WorkflowSpec, at: int, target: str, outputs: Mapping[str, int]
) -> list[str] | None:
    """The variables from step ``at``'s output back to ``target`` through what each reads,
    or ``None`` when step ``at`` does not (even indirectly) read ``target``."""
    seen: set[int] = set()
    stack: list[tuple[int, list[str]]] = [(at, [spec.steps[at].output])]
    while stack:
        i, path = stack.pop()
        if i in seen:
            continue
        seen.add(i)
        try:
            names = set(formula.variables(formula.parse(spec.steps[i].formula)))
        except FormulaError:
            continue
        if target in names:
            return [*path, target]
        stack.extend((outputs[n], [*path, n]) for n in names if n in outputs)
    return None


def _live(depends: list[tuple[int, ...]]) -> tuple[bool, ...]:
    """Per step: whether the answer (the last step) reads it, directly or not."""
    live = [False] * len(depends)
    live[-1] = True
    for k in range(len(depends), 0, -1):
        if live[k - 1]:
            for d in depends[k - 1]:
                live[d - 1] = True
    return tuple(live)


def workflow_from_json(data: Any, where: str = "workflow") -> DeclaredWorkflow:
    """A checked workflow from parsed TOML or JSON."""
    try:
        spec = WorkflowSpec.model_validate(data)
    except ValidationError as exc:
        err = invalid(where, exc)
        message = str(err).removeprefix(f"{err.path}: {err.field}: ")
        raise InputError(where, message.removeprefix("Value error, "), err.field) from None
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
