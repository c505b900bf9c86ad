"""The scenario file format: a compiled procedure, what the agent is offered and
what it should do. User-written and file-borne, so pydantic models that forbid
unknown fields; ``schemas/scenario.schema.json`` documents the same shape.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from agentproc.arith import Mode, Op, to_units

SCHEMA_VERSION = 1
"""Version of the scenario and run-file formats."""

FINISH_TOOL = "submit_answer"
"""The tool that ends a workflow (the one place it is named)."""
FINISH_ARGUMENT = "answer"
"""The argument of :data:`FINISH_TOOL` that carries the answer."""
CALCULATOR_TOOLS = frozenset(op.value for op in (Op.ADD, Op.SUB, Op.MUL, Op.DIV))
"""The tool names of the calculator tool set (a variant's), which no finish tool may take."""


_VARIABLE = re.compile(r"S[1-9][0-9]{0,5}")
"""A variable name: ``S`` and its number."""


def var_index(name: str) -> int:
    """``"S7"`` -> ``7``."""
    return int(name[1:])


def constant_text(constant: float | int) -> str:
    """A constant operand as a step writes it: ``4.217`` (3 decimals) or ``4``."""
    return f"{constant:.3f}" if isinstance(constant, float) else str(constant)


def step_tool_name(step: int) -> str:
    """The tool name of a step: ``step_7``."""
    return f"step_{step}"


class ExpectedCall(BaseModel):
    """The call a faithful agent makes for a step."""

    model_config = ConfigDict(extra="forbid")
    name: str
    """Tool name."""
    arguments: dict[str, float | int]
    """Argument name to value."""


class ScenarioStep(BaseModel):
    """One step of a scenario."""

    model_config = ConfigDict(extra="forbid")
    step: int = Field(ge=1)
    """Step number, from 1."""
    output: str
    """The variable this step defines, e.g. ``S9``."""
    op: Op
    """The operation."""
    operands: list[str] = Field(min_length=1, max_length=2)
    """Left and right operand variables; the left alone when the right operand is the
    :attr:`constant`."""
    constant: float | int | None = Field(default=None, exclude_if=lambda v: v is None)
    """The right operand when it is a number written in the step, not a variable
    (``S9 = S8 - 4.217``: look-back 1's ``sub`` and ``div``, from procedure format 3);
    the step's tool takes only the variable. Absent otherwise."""
    distances: list[int] = Field(min_length=1, max_length=2)
    """How far back each operand variable lies."""
    value: float | int
    """The correct value of ``output``."""
    depends_on: list[int]
    """Step numbers whose outputs this step reads."""
    live: bool
    """Whether this step's output reaches the answer."""
    text: str
    """The English rendering shown to the agent."""
    expected_call: ExpectedCall
    """The call a faithful agent makes."""

    # Indexed views for the mock tools and the monitor, computed once per step.

    @cached_property
    def name(self) -> str:
        """The step's tool name."""
        return self.expected_call.name

    @cached_property
    def target(self) -> int:
        """Index of the variable this step defines (9 for ``S9``)."""
        return var_index(self.output)

    @cached_property
    def operand_vars(self) -> tuple[int, ...]:
        """The operand variable indices: left and right, or the left alone beside a
        :attr:`constant`."""
        return tuple(var_index(v) for v in self.operands)

    def terms(self, name: Callable[[str], str] = str) -> tuple[str, str]:
        """Left and right operands as the step writes them: each variable as ``name``
        gives it, the constant as its number."""
        if self.constant is not None:
            return name(self.operands[0]), constant_text(self.constant)
        return name(self.operands[0]), name(self.operands[-1])

    def arguments(self, value_of: Callable[[int], int], scale: int) -> tuple[int, int]:
        """Left and right operand values in units: each variable's as ``value_of`` gives
        it (by variable index), the constant's own."""
        left = value_of(self.operand_vars[0])
        if self.constant is not None:
            return left, to_units(self.constant, scale)
        return left, value_of(self.operand_vars[-1])

    @cached_property
    def params(self) -> tuple[str, ...]:
        """The tool's argument names, in schema order (one per distinct operand)."""
        return tuple(dict.fromkeys(self.operands))

    @cached_property
    def reads(self) -> frozenset[int]:
        """:attr:`depends_on` as a set."""
        return frozenset(self.depends_on)


class FinishSpec(BaseModel):
    """The tool that ends the workflow and the argument that carries the answer."""

    model_config = ConfigDict(extra="forbid")
    tool: str = FINISH_TOOL
    """Tool name."""
    argument: str = FINISH_ARGUMENT
    """The argument that carries the answer."""


class ScenarioParams(BaseModel):
    """The generator parameters a scenario came from."""

    model_config = ConfigDict(extra="forbid")
    cell: str
    steps: int
    lookback: int
    realised_lookback: int | None = Field(default=None, exclude_if=lambda v: v is None)
    """The farthest any operand variable of the procedure lies from the variable it
    defines: at most ``lookback`` from procedure format 3 (format 2 read an input at any
    distance at look-back 1); absent for procedures of format 1."""
    range: tuple[float, float]
    ops: str
    mode: Mode
    seed: int
    index: int
    sweeps: list[str] | None = Field(default=None, exclude_if=lambda v: v is None)
    """The sweeps of the suite's design that list this cell (from its ``suite.json``);
    absent for a scenario read from a file, or recorded before sweeps were named."""


class Scenario(BaseModel):
    """A compiled procedure: what the agent is offered and what it should do."""

    model_config = ConfigDict(extra="forbid")
    schema_version: int = SCHEMA_VERSION
    id: str
    """Unique within a suite."""
    params: ScenarioParams
    inputs: dict[str, float | int]
    """``S1`` and ``S2``."""
    answer: float | int
    """The correct final answer."""
    answer_variable: str
    """The variable whose value is the answer."""
    mode: Mode
    tolerance: float | int
    """A supplied number is correct when within this distance of the value (half a
    unit: 0.0005 in decimal mode, 0 in integer mode); the monitor compares with it."""
    steps: list[ScenarioStep]
    finish: FinishSpec = Field(default_factory=FinishSpec)
    """The tool that ends the workflow."""
    tools: list[dict[str, Any]] = Field(default_factory=list)
    """The offered tools, in OpenAI function-tool format."""
    prompt: str = ""
    """The instructions an agent is given."""
    _procedure: dict[str, Any] | None = PrivateAttr(default=None)
    """The compact procedure this scenario was compiled from (its ``procedures.jsonl``
    line), when it was: a run file can then store that instead of the scenario."""
    _suite: str | None = PrivateAttr(default=None)
    """The suite folder it was read from, when it was: a run file can then refer to it."""

    def __eq__(self, other: object) -> bool:
        """Scenarios are equal when their fields are (where they came from does not count)."""
        if not isinstance(other, Scenario):
            return NotImplemented
        return self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]

    @field_validator("tools")
    @classmethod
    def _function_tools(cls, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Each tool an OpenAI function tool with a name: what a model is offered."""
        for i, tool in enumerate(tools):
            fn = tool.get("function")
            if tool.get("type") != "function" or not isinstance(fn, dict) or not fn.get("name"):
                raise ValueError(
                    f"tools[{i}]: expected an OpenAI function tool "
                    '({"type": "function", "function": {"name": ..., ...}})'
                )
            if not isinstance(fn["name"], str):
                raise ValueError(f"tools[{i}].function.name: expected a string")
        return tools

    @model_validator(mode="after")
    def _well_formed(self) -> Scenario:
        """Steps that define S3, S4, ... in order, each reading variables defined before."""
        if not self.steps:
            raise ValueError("steps: a scenario needs at least one step")
        if set(self.inputs) != {"S1", "S2"}:
            raise ValueError(f"inputs: expected S1 and S2 (not {', '.join(self.inputs)})")
        defined = {"S1", "S2"}  # the variables defined so far, as f"S{k}" spells them
        for i, st in enumerate(self.steps):
            if st.step != i + 1 or st.output != f"S{i + 3}":
                raise ValueError(
                    f"steps[{i}]: expected step {i + 1} defining S{i + 3} "
                    f"(not step {st.step} defining {st.output})"
                )
            if (len(st.operands) == 1) != (st.constant is not None):
                raise ValueError(
                    f"steps[{i}]: expected two operand variables, or one and a constant"
                )
            if len(st.distances) != len(st.operands):
                raise ValueError(f"steps[{i}].distances: expected one per operand variable")
            if not all(a in defined for a in st.operands):  # a set look-up: the common case
                for j, name in enumerate(st.operands):
                    if not _VARIABLE.fullmatch(name) or not 1 <= int(name[1:]) < i + 3:
                        raise ValueError(
                            f"steps[{i}].operands[{j}]: {name!r} is not a variable defined "
                            f"before S{i + 3}"
                        )
            for j, d in enumerate(st.depends_on):
                if not 1 <= d < st.step:  # a later, own or missing step breaks the step graph
                    raise ValueError(
                        f"steps[{i}].depends_on[{j}]: {d} is not a step before step {st.step}"
                    )
            defined.add(st.output)
        if self.answer_variable not in defined:
            raise ValueError(f"answer_variable: {self.answer_variable!r} is not a variable")
        taken = {st.expected_call.name for st in self.steps} | CALCULATOR_TOOLS
        if self.finish.tool in taken:  # the answer would never reach the finish tool
            raise ValueError(
                f"finish.tool: {self.finish.tool!r} is also a step or calculator tool "
                "(the finish tool needs a name of its own)"
            )
        return self
