"""A declared workflow's models: the file a user writes (TOML or JSON) as pydantic models
(format 1, and format 2's typed values, conditions and exits), and the checked workflow
(:class:`DeclaredWorkflow`) that :func:`agentproc.declared.check.check_spec`
makes of it. ``schemas/workflow.schema.json`` is generated from :class:`WorkflowSpec` by
:func:`agentproc.workflow.declared.compile.workflow_schema`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    Discriminator,
    Field,
    Tag,
)

from agentproc.declared import formula
from agentproc.declared.formula import MAX_LENGTH as FORMULA_LENGTH
from agentproc.declared.formula import Node
from agentproc.declared.formula_types import Kind, Type
from agentproc.declared.formula_values import Tables
from agentproc.declared.inputs import (
    _CONFIG,
    MAX_DECIMALS,
    MAX_INPUTS,
    MAX_TEXT,
    MAX_WORKFLOW_STEPS,
    NAME,
    TOOL,
    InputSpec,
    _unset,
)

MAX_ROWS = 1000
"""Records a table may hold."""


MAX_DRAWN_ROWS = 50
"""Records a table drawn for every instance may hold (``count``'s high)."""


class TableSpec(BaseModel):
    """A table of records (format 2), read by a step's ``lookup(table, key, 'column')``:
    the state of the world behind the tools, never shown to the agent."""

    model_config = _CONFIG
    description: str = Field(default="", max_length=MAX_TEXT)
    """What the records are."""
    key: str = Field(pattern=NAME)
    """The key column: each record's name (a category), unique in the table."""
    columns: dict[str, Kind | InputSpec] = Field(min_length=1, max_length=MAX_INPUTS)
    """Every other column -> its type (its value given by each row), or how it is drawn
    (an input's specification: each record's value drawn for every instance, so that
    every instance has its own records; the rows then leave it out)."""
    rows: list[dict[str, bool | float | str]] = Field(
        default_factory=list, max_length=MAX_ROWS, exclude_if=lambda v: not v
    )
    """The records: each gives its key and every column (none where ``count`` is given)."""
    count: tuple[int, int] | None = Field(default=None, exclude_if=_unset)
    """Whole records drawn for every instance: how many, ``[low, high]`` (1 to 50), each
    with a distinct key drawn by :attr:`key_pattern` and every column drawn."""
    key_pattern: str | None = Field(default=None, max_length=64, exclude_if=_unset)
    """The pattern a drawn record's key is drawn by (``ACC-[0-9]{4}``)."""


class StepSpec(BaseModel):
    """One step: a tool that computes ``output`` by ``formula``."""

    model_config = _CONFIG
    tool: str = Field(pattern=TOOL)
    """The step's tool name, unique in the workflow."""
    description: str = Field(default="", max_length=MAX_TEXT)
    """What the step does, as its tool describes it."""
    output: str = Field(pattern=NAME)
    """The variable the step defines, unique in the workflow."""
    formula: str = Field(max_length=FORMULA_LENGTH)
    """Over inputs and earlier outputs: ``+ - * /``, parentheses, unary minus, numbers,
    ``min``, ``max``, ``abs``, ``round``."""
    decimals: int = Field(default=2, ge=0, le=MAX_DECIMALS)
    """The output is rounded to this many decimals, half away from zero."""
    when: str | None = Field(default=None, max_length=FORMULA_LENGTH, exclude_if=_unset)
    """A boolean condition (format 2): the step is required only on instances where it
    holds; its tool is offered on every instance."""
    for_each: str | None = Field(default=None, max_length=200, exclude_if=_unset)
    """``"item in list"`` (format 2): the step is done once for each item of a list
    input, ``item`` naming it in the formula and ``when``
    (:mod:`agentproc.declared.loops`)."""


class ExitSpec(BaseModel):
    """An early exit (format 2): where its condition holds, the procedure ends here with
    its fixed answer, and no later step is required."""

    model_config = _CONFIG
    kind: Literal["exit"]
    """Marks an exit among the steps."""
    name: str = Field(pattern=NAME)
    """The exit's name, unique in the workflow (no tool is offered for it)."""
    description: str = Field(default="", max_length=MAX_TEXT)
    """What the exit means, as the agent is told."""
    when: str = Field(max_length=FORMULA_LENGTH)
    """The boolean condition on which the procedure ends here."""
    answer: bool | float | str | dict[str, bool | float | str]
    """The answer given to the finish tool when it does: of the answer's type (a
    multi-field answer's: a table giving every field, ``{ decision = "reject", ... }``)."""


def _step_kind(v: Any) -> str:
    kind = v.get("kind") if isinstance(v, dict) else getattr(v, "kind", None)
    return "exit" if kind == "exit" else "step"


Entry = Annotated[
    Annotated[StepSpec, Tag("step")] | Annotated[ExitSpec, Tag("exit")],
    Discriminator(_step_kind),
]
"""A listed step: a tool step, or (``kind = "exit"``) an exit."""


class WorkflowSpec(BaseModel):
    """A declared workflow file."""

    model_config = _CONFIG
    format: Literal[1, 2] | None = Field(default=None, exclude_if=_unset)
    """2: typed values, conditions and exits (a file without it reads as format 1)."""
    description: str = Field(min_length=1, max_length=MAX_TEXT)
    """What the workflow is for, as the agent is told."""
    inputs: dict[str, InputSpec] = Field(min_length=1, max_length=MAX_INPUTS)
    """Input name -> how it is drawn, in the order the agent is shown them."""
    tables: dict[str, TableSpec] | None = Field(
        default=None, min_length=1, max_length=MAX_INPUTS, exclude_if=_unset
    )
    """Format 2: tables of records that steps look up (``lookup(table, key, 'column')``)."""
    steps: list[Entry] = Field(min_length=1, max_length=MAX_WORKFLOW_STEPS)
    """The steps (and, in format 2, exits), in their listed order."""
    answer: Annotated[str, Field(pattern=NAME)] | list[str]
    """The answer variable: the last step's output; format 2, a multi-field answer: a
    list of 2 to 8 distinct step outputs, the last step's among them."""
    finish_tool: str = Field(default="submit_answer", pattern=TOOL)
    """The tool the answer is given to, which ends the workflow."""

    @property
    def fields(self) -> tuple[str, ...]:
        """A multi-field answer's fields, in listed order (empty: a single answer)."""
        return () if isinstance(self.answer, str) else tuple(self.answer)

    @property
    def answer_variable(self) -> str:
        """The answer's variable: a multi-field answer's, the last step's output."""
        if isinstance(self.answer, str):
            return self.answer
        last = self.steps[-1]
        return last.output if isinstance(last, StepSpec) else self.answer[-1]


@dataclass(frozen=True)
class Exit:
    """A checked exit (format 2)."""

    name: str
    position: int
    """Its index among the listed steps (``steps[position]`` in the file)."""
    after: int
    """How many tool steps are listed before it."""
    tree: Node
    """Its condition."""
    reads: tuple[str, ...]
    """The variables its condition reads."""
    answer: formula.Value
    """The answer it ends the procedure with (a number as an exact fraction; a
    multi-field answer's: its value of the last step's output)."""
    fields: Mapping[str, formula.Value] | None = None
    """A multi-field answer's: every field's value (``None``: a single answer)."""


@dataclass(frozen=True)
class DeclaredWorkflow:
    """A checked workflow: its model and what its formulas say."""

    spec: WorkflowSpec
    trees: tuple[Node, ...]
    """Each step's formula tree."""
    reads: tuple[tuple[str, ...], ...]
    """Each step's distinct variables, in the order its formula writes them."""
    depends: tuple[tuple[int, ...], ...]
    """Each step's steps (numbered from 1) whose outputs it reads (format 2: its
    formula, its condition, and the conditions of the exits listed before it)."""
    live: tuple[bool, ...]
    """Each step: whether its output reaches the answer."""
    where: str = "workflow"
    """The file it was read from (errors name it)."""
    types: Mapping[str, Type] | None = None
    """Format 2: every variable's type (``None``: format 1, every value a number)."""
    conditions: tuple[Node | None, ...] = ()
    """Format 2: each step's ``when`` (``None``: always required)."""
    exits: tuple[Exit, ...] = ()
    """Format 2: the exits, in listed order."""
    tables: Tables = dataclasses.field(default_factory=dict)
    """Format 2: each table's records, table -> key -> column -> value (a number an
    exact fraction; a drawn value the variable of its hidden input); the step formulas'
    look-ups are bound to them."""
    hidden: tuple[tuple[str, InputSpec], ...] = ()
    """Format 2: the hidden inputs, drawn after the inputs and never shown: a table's
    drawn values, one per record and drawn column (``products[SKU-1].in_stock``)."""
    looped: WorkflowSpec | None = None
    """A workflow with lists and loops: the file as written, :attr:`spec` being its
    expansion (:mod:`agentproc.declared.loops`); ``None`` for any other."""

    @property
    def steps(self) -> tuple[StepSpec, ...]:
        """The tool steps, in listed order (the exits left out)."""
        return tuple(s for s in self.spec.steps if isinstance(s, StepSpec))

    @property
    def positions(self) -> tuple[int, ...]:
        """Each tool step's index among the listed steps."""
        return tuple(i for i, s in enumerate(self.spec.steps) if isinstance(s, StepSpec))

    @property
    def fields(self) -> tuple[str, ...]:
        """A multi-field answer's fields, in listed order (empty: a single answer)."""
        return self.spec.fields

    @property
    def branched(self) -> bool:
        """Whether some step has a condition or the workflow has an exit."""
        return bool(self.exits) or any(c is not None for c in self.conditions)

    @property
    def input_names(self) -> tuple[str, ...]:
        """The inputs, in declared order, then the hidden ones."""
        return (*self.spec.inputs, *(name for name, _ in self.hidden))

    @property
    def input_specs(self) -> tuple[InputSpec, ...]:
        """How each of :attr:`input_names` is drawn."""
        return (*self.spec.inputs.values(), *(spec for _, spec in self.hidden))

    def field(self, index: int, name: str) -> str:
        """How an error names a tool step's field: ``steps[2] (net_amount).formula``."""
        at = self.positions[index] if self.types is not None else index
        return f"steps[{at}] ({self.spec.steps[at].tool}).{name}"  # type: ignore[union-attr]
