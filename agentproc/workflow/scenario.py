"""The scenario file format: a compiled procedure, what the agent is offered and
what it should do. User-written and file-borne, so pydantic models that forbid
unknown fields; ``schemas/scenario.schema.json`` documents the same shape.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from agentproc.arith import (
    Mode,
    Op,
    apply_units,
    round_scaled,
    symbol_units,
    to_units,
)
from agentproc.declared import formula as formulas
from agentproc.declared.formula_values import Tables, bind
from agentproc.declared.formula_values import evaluate as evaluate_formula
from agentproc.workflow.declared.checks import declared_index, step_structure
from agentproc.workflow.scenario_params import FINISH_ARGUMENT as FINISH_ARGUMENT
from agentproc.workflow.scenario_params import FINISH_TOOL as FINISH_TOOL
from agentproc.workflow.scenario_params import FinishSpec as FinishSpec
from agentproc.workflow.scenario_params import ScenarioParams as ScenarioParams
from agentproc.workflow.scenario_types import (
    ScenarioExit,
    ScenarioPath,
    ScenarioTable,
    StepLoop,
    VariableType,
    grammar_value,
    unset,
)

SCHEMA_VERSION = 1
"""Version of the scenario and run-file formats."""

CALCULATOR_TOOLS = frozenset(op.value for op in (Op.ADD, Op.SUB, Op.MUL, Op.DIV))
"""The tool names of the calculator tool set (a variant's), which no finish tool may take."""


_VARIABLE = re.compile(r"S[1-9][0-9]{0,5}")
"""A variable name: ``S`` and its number."""


MAX_READS = 64
"""Variables one step may read (a procedure's step reads one or two)."""


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
    arguments: dict[str, float | int | bool | str]
    """Argument name to value (a branched workflow's: a category's name or a boolean)."""


class ScenarioStep(BaseModel):
    """One step of a scenario."""

    model_config = ConfigDict(extra="forbid")
    step: int = Field(ge=1)
    """Step number, from 1."""
    output: str
    """The variable this step defines, e.g. ``S9``."""
    op: Op | None = Field(default=None, exclude_if=lambda v: v is None)
    """The operation (absent on a declared workflow's step, which has a :attr:`formula`)."""
    operands: list[str] = Field(min_length=1, max_length=MAX_READS)
    """Left and right operand variables; the left alone when the right operand is the
    :attr:`constant`. A declared workflow's step: every variable its formula reads, in
    the order written."""
    constant: float | int | None = Field(default=None, exclude_if=lambda v: v is None)
    """The right operand when it is a number written in the step, not a variable
    (``S9 = S8 - 4.217``: look-back 1's ``sub`` and ``div``, from procedure format 3);
    the step's tool takes only the variable. Absent otherwise."""
    formula: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """A declared workflow's step: the formula over :attr:`operands` that defines
    ``output`` (:mod:`agentproc.declared.formula`). Absent on a procedure's step."""
    decimals: int | None = Field(default=None, ge=0, le=3, exclude_if=lambda v: v is None)
    """A declared workflow's step: the decimals ``output`` is rounded to, half away from
    zero. Absent on a procedure's step (every value has the mode's)."""
    distances: list[int] = Field(min_length=1, max_length=MAX_READS)
    """How far back each operand variable lies."""
    value: float | int | bool | str | None
    """The correct value of ``output`` (``None``: a step of a branch not taken that has
    no value on this instance)."""
    when: str | None = Field(default=None, exclude_if=unset)
    """A branched workflow's step: the condition on which it is required."""
    required: bool | None = Field(default=None, exclude_if=unset)
    """A branched workflow's step: whether this instance requires it (absent: it does)."""
    depends_on: list[int]
    """Step numbers whose outputs this step reads."""
    live: bool
    """Whether this step's output reaches the answer."""
    text: str
    """The English rendering shown to the agent."""
    expected_call: ExpectedCall
    """The call a faithful agent makes."""
    loop: StepLoop | None = Field(default=None, exclude_if=unset)
    """A step of a loop: its item and the tool's parameters (absent on any other)."""

    # A declared workflow's tables and variable index are set by its :class:`Scenario`
    # (:func:`_attach`) and read by :attr:`lookup_tables` and :attr:`var_indexes`.

    @property
    def lookup_tables(self) -> Tables | None:
        """A declared workflow's tables, as its look-ups read them (``None``: none)."""
        return self.__dict__.get(_TABLES)  # type: ignore[no-any-return]

    @property
    def var_indexes(self) -> Mapping[str, int] | None:
        """A declared workflow's variable name -> index; ``None``: variables are ``S1``,
        ``S2``, ... and their index is their number."""
        return self.__dict__.get(_INDEX)  # type: ignore[no-any-return]

    # Indexed views for the mock tools and the monitor, computed once per step.

    @property
    def operation(self) -> Op:
        """The operation of a procedure's step (a declared workflow's step has a
        :attr:`formula` instead: what reads this never runs on one)."""
        if self.op is None:
            raise TypeError(f"step {self.step} has a formula, not an operation")
        return self.op

    @cached_property
    def tree(self) -> formulas.Node | None:
        """The parsed :attr:`formula` (``None`` on a procedure's step), its look-ups
        bound to the scenario's tables."""
        if self.formula is None:
            return None
        tree = formulas.parse(self.formula, True)
        tables = self.lookup_tables
        return tree if tables is None else bind(tree, tables)

    def compute(self, supplied: Mapping[str, int], scale: int) -> int | None:
        """The step's value in units from its arguments (by parameter, in units), as its
        tool computes it; ``None`` for a division by zero."""
        if self.formula is None:
            if self.op is None:  # pragma: no cover (a scenario's steps are validated)
                raise ValueError(f"step {self.step}: neither an operation nor a formula")
            a, b = self.arguments(lambda v: supplied[f"S{v}"], scale)
            return apply_units(self.op, a, b, scale)
        if self.loop is not None:  # arguments by the loop's names, the formula by the item's
            given = self.loop.parameters
            supplied = {
                v: supplied[given.get(v, v)] for v in self.operands if given.get(v, v) in supplied
            }
        env = {p: grammar_value(u, scale) for p, u in supplied.items()}
        tree = self.tree
        assert tree is not None  # a formula's step has its tree
        exact = evaluate_formula(tree, env)  # a KeyError: an argument it needs is missing
        if exact is None:
            return None
        if isinstance(exact, str | bool):
            return symbol_units(exact)
        shift = 10 ** (self.decimals or 0)
        return round_scaled(exact, shift) * scale // shift

    @cached_property
    def name(self) -> str:
        """The step's tool name."""
        return self.expected_call.name

    @cached_property
    def target(self) -> int:
        """Index of the variable this step defines (9 for ``S9``)."""
        index = self.var_indexes
        return var_index(self.output) if index is None else index[self.output]

    @cached_property
    def operand_vars(self) -> tuple[int, ...]:
        """The operand variable indices: left and right, or the left alone beside a
        :attr:`constant`."""
        index = self.var_indexes
        return tuple(var_index(v) if index is None else index[v] for v in self.operands)

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
        """The tool's argument names, in schema order (one per distinct operand; a step
        of a loop's by their names in the loop)."""
        if self.loop is not None:
            return tuple(dict.fromkeys(self.loop.parameters.get(v, v) for v in self.operands))
        return tuple(dict.fromkeys(self.operands))

    @cached_property
    def reads(self) -> frozenset[int]:
        """:attr:`depends_on` as a set."""
        return frozenset(self.depends_on)


_TABLES, _INDEX = "_tables", "_index"
"""Where a declared workflow's step keeps its tables and variable index: the instance's
own attributes, as a cached property writes them (no field: never dumped or validated).
Not pydantic private attributes: setting those up on each model costs about what
validating a whole step does."""


def _attach(step: ScenarioStep, tables: Tables | None, index: Mapping[str, int]) -> None:
    """Give a declared workflow's step its scenario's tables and variable index."""
    step.__dict__[_TABLES] = tables
    step.__dict__[_INDEX] = index


class Scenario(BaseModel):
    """A compiled procedure: what the agent is offered and what it should do."""

    model_config = ConfigDict(extra="forbid")
    schema_version: int = SCHEMA_VERSION
    id: str
    """Unique within a suite."""
    params: ScenarioParams
    inputs: dict[str, float | int | bool | str]
    """``S1`` and ``S2`` (a declared workflow's: its own)."""
    answer: float | int | bool | str
    """The correct final answer."""
    answer_variable: str
    """The variable whose value is the answer."""
    answer_fields: dict[str, float | int | bool | str] | None = Field(
        default=None, exclude_if=unset
    )
    """A declared workflow's multi-field answer: each field (a step's output, the finish
    tool's argument of that name) with its correct value on the instance (where an exit
    fires, the exit's); ``answer`` is then the value of ``answer_variable``."""
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
    description: str | None = Field(default=None, exclude_if=lambda v: v is None)
    """A declared workflow's description (its steps have formulas, its inputs and
    outputs their declared names); absent on a compiled procedure."""
    types: dict[str, VariableType] | None = Field(default=None, exclude_if=unset)
    """A branched workflow's: the type of each variable that is not a number."""
    exits: list[ScenarioExit] | None = Field(default=None, exclude_if=unset)
    """A branched workflow's early exits, in listed order."""
    tables: dict[str, ScenarioTable] | None = Field(default=None, exclude_if=unset)
    """A workflow's tables that its look-up steps read (never shown to the agent)."""
    path: ScenarioPath | None = Field(default=None, exclude_if=unset)
    """A branched workflow's: the path this instance's correct values take (which steps
    are required is each step's :attr:`~ScenarioStep.required`)."""
    lists: dict[str, list[str]] | None = Field(default=None, exclude_if=unset)
    """A workflow with loops: each list input's items, in order (its variables are the
    inputs ``owners__0``, ``owners__1``, ...)."""
    _procedure: dict[str, Any] | None = PrivateAttr(default=None)
    """The compact procedure this scenario was compiled from (its ``procedures.jsonl``
    line), when it was: a run file can then store that instead of the scenario."""
    _suite: str | None = PrivateAttr(default=None)
    """The suite folder it was read from, when it was: a run file can then refer to it."""
    _digest: str | None = PrivateAttr(default=None)
    """A declared workflow's scenario read from its suite: the SHA-256 of its line in
    ``scenarios.jsonl`` (:func:`~agentproc.procedures.files.line_digest`), which a run
    file refers to it by."""

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

    @property
    def declared(self) -> bool:
        """Whether this is a declared workflow's scenario (steps with formulas)."""
        return self.description is not None

    @property
    def variables(self) -> tuple[str, ...]:
        """Every variable in index order (index 1 first): inputs, then step outputs (a
        plain property: a cached one would be a key of ``__dict__``, which equality reads)."""
        return (*self.inputs, *(s.output for s in self.steps))

    @model_validator(mode="after")
    def _well_formed(self) -> Scenario:
        """Steps that define S3, S4, ... in order, each reading variables defined before."""
        if not self.steps:
            raise ValueError("steps: a scenario needs at least one step")
        if self.declared:
            return self._well_declared()
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
        return self._finish_tool()

    def _finish_tool(self) -> Scenario:
        taken = {st.expected_call.name for st in self.steps} | CALCULATOR_TOOLS
        if self.finish.tool in taken:  # the answer would never reach the finish tool
            raise ValueError(
                f"finish.tool: {self.finish.tool!r} is also a step or calculator tool "
                "(the finish tool needs a name of its own)"
            )
        return self

    def _well_declared(self) -> Scenario:
        """A declared workflow's steps: each with a formula over variables defined before
        it, defining a new one, with a tool name of its own; the answer the last output
        (checked once per process for all the instances of a workflow: the same
        structure passes or fails the same way)."""
        structure = step_structure(self.steps)
        problem, index = declared_index(tuple(self.inputs), structure, self.answer_variable)
        if problem is not None:
            raise ValueError(problem)
        tables = None
        if self.tables:
            tables = {name: t.records() for name, t in self.tables.items()}
        for st in self.steps:
            _attach(st, tables, index)
        for f in self.answer_fields or ():
            if index.get(f, 0) <= len(self.inputs):
                raise ValueError(f"answer_fields: {f!r} is not a step's output")
        return self._finish_tool()
