"""A declared workflow's models: the file a user writes (TOML or JSON) as pydantic models
(format 1, and format 2's typed values, conditions and exits), and the checked workflow
(:class:`DeclaredWorkflow`) that :func:`agentproc.procedures.workflow_check.check_spec`
makes of it. ``schemas/workflow.schema.json`` is generated from :class:`WorkflowSpec` by
:func:`agentproc.workflow.declared.workflow_schema`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    model_validator,
)

from agentproc.procedures import formula
from agentproc.procedures.dates import parse_date
from agentproc.procedures.formula import MAX_LENGTH as FORMULA_LENGTH
from agentproc.procedures.formula import Node
from agentproc.procedures.formula_types import Kind, Type
from agentproc.procedures.formula_values import Tables
from agentproc.procedures.id_pattern import PatternError, parse_pattern

MAX_INPUTS = 50
"""Inputs a workflow may declare."""
MAX_WORKFLOW_STEPS = 200
"""Steps a workflow may declare (as many as a generated procedure)."""
MAX_FIELDS = 8
"""Fields a multi-field answer may list."""
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

_CONFIG = ConfigDict(extra="forbid", allow_inf_nan=False)
"""No unknown field; no infinite or NaN number (TOML writes ``inf``, ``nan``, and both
TOML and JSON read ``1e999`` as infinity)."""


def _unset(v: object) -> bool:
    return v is None


class InputSpec(BaseModel):
    """One input and how it is drawn: a number gives exactly one of ``range``,
    ``integers``, ``choices``; a category its ``choices`` (names); a boolean its
    ``p_true`` (format 2)."""

    model_config = _CONFIG
    description: str = Field(default="", max_length=MAX_TEXT)
    """What the input is, as the agent is told."""
    type: Kind | Literal["list"] | None = Field(default=None, exclude_if=_unset)
    """``number`` (the default), ``category``, ``boolean``, ``string`` or ``date`` (format
    2); ``list``: a list of distinct names drawn from ``choices``
    (:mod:`agentproc.procedures.workflow_loops`)."""
    range: tuple[float, float] | tuple[str, str] | None = None
    """Drawn uniformly from ``[low, high]`` on the grid of ``decimals``; a date's: two
    ISO dates, drawn uniformly over the days between them (both included)."""
    decimals: int = Field(default=2, ge=0, le=MAX_DECIMALS)
    """Decimals of a ``range`` draw."""
    integers: tuple[int, int] | None = None
    """Drawn uniformly among the whole numbers of ``[low, high]``."""
    choices: list[float | str] | None = Field(default=None, min_length=1, max_length=MAX_CHOICES)
    """Drawn from these values (at most 3 decimals each), uniformly unless ``weights``
    are given; a category's: its names."""
    weights: list[float] | None = Field(default=None, exclude_if=_unset)
    """The relative weight of each of ``choices`` (format 2; default: all equal)."""
    p_true: float | None = Field(default=None, gt=0, lt=1, exclude_if=_unset)
    """A boolean input's chance of ``true`` (format 2; default 0.5)."""
    pattern: str | None = Field(default=None, max_length=64, exclude_if=_unset)
    """A string's (an id's) pattern, drawn per instance: literal characters, classes
    ``[A-Z]``, ``[a-z]``, ``[0-9]`` (or together, ``[A-Z0-9]``), a repeat ``{n}``."""
    key_of: str | None = Field(default=None, pattern=NAME, exclude_if=_unset)
    """A string's table: drawn among the keys of that table's records on the instance."""
    count: tuple[int, int] | None = Field(default=None, exclude_if=_unset)
    """A list input's: how many items it holds, ``[low, high]``, drawn for every
    instance (its items drawn from ``choices`` without replacement, in the order drawn)."""

    @property
    def kind(self) -> Kind:
        """Its type: ``number`` unless given (a list's items are categories)."""
        return "category" if self.type == "list" else self.type or "number"

    @property
    def is_list(self) -> bool:
        """Whether this is a list input (``type = "list"``)."""
        return self.type == "list"

    @model_validator(mode="after")
    def _one_way(self) -> InputSpec:
        if self.is_list or self.count is not None:
            _list_count(self)
        if self.weights is not None:
            _weights(self.weights, self.choices)
        if self.kind in ("string", "date"):
            return check_text_input(self)
        if self.kind != "number":
            return _typed_input(self)
        if self.p_true is not None:
            raise ValueError('p_true is for a boolean input (type = "boolean")')
        if self.pattern is not None or self.key_of is not None:
            raise ValueError('pattern and key_of are for a string input (type = "string")')
        given = [k for k in ("range", "integers", "choices") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(
                "give exactly one of range, integers, choices "
                f"(not {' and '.join(given) or 'none'})"
            )
        dated = self.range
        if dated is not None and (isinstance(dated[0], str) or isinstance(dated[1], str)):
            raise ValueError('range: dates are for a date input (type = "date")')
        bounds = (float(dated[0]), float(dated[1])) if dated is not None else self.integers
        if bounds is not None:
            if bounds[0] > bounds[1]:
                raise ValueError(f"{given[0]}: low {bounds[0]} is above high {bounds[1]}")
            values: list[float] = list(bounds)
        else:
            if any(isinstance(v, str) for v in self.choices or []):
                raise ValueError('choices: names are for a category input (type = "category")')
            values = [float(v) for v in self.choices or []]
            for v in values:
                if Fraction(repr(v)) * 10**MAX_DECIMALS % 1:
                    raise ValueError(f"choices: {v} has more than {MAX_DECIMALS} decimals")
        if any(abs(v) > MAX_MAGNITUDE for v in values):
            raise ValueError(f"{given[0]}: values must lie within [-1e6, 1e6]")
        return self


def _weights(weights: list[float], choices: list[Any] | None) -> None:
    if choices is None or len(weights) != len(choices):
        raise ValueError("weights: give one weight for each of choices")
    if any(w < 0 for w in weights) or not sum(weights) > 0:
        raise ValueError("weights: each at least 0, and not all 0")


MAX_ITEMS = 20
"""Items a list input may hold."""


def _list_count(spec: InputSpec) -> None:
    """A list's ``count``: within its distinct choices (items are drawn without
    replacement), given only on a list."""
    if not spec.is_list:
        raise ValueError('count is for a list input (type = "list")')
    if spec.count is None:
        raise ValueError("a list input gives its count = [low, high]")
    if spec.weights is not None:
        raise ValueError("weights: a list's items are drawn uniformly")
    low, high = spec.count
    names = len(spec.choices or ())
    if not 1 <= low <= high <= min(names, MAX_ITEMS):
        raise ValueError(
            f"count: expected 1 <= low <= high <= {min(names, MAX_ITEMS)} (its "
            f"{names} choices, at most {MAX_ITEMS}; not [{low}, {high}])"
        )


def _typed_input(spec: InputSpec) -> InputSpec:
    """A category's or boolean's own fields, and none of a number's."""
    kind = spec.kind
    extra = [k for k in ("range", "integers", "pattern", "key_of") if getattr(spec, k) is not None]
    if kind == "boolean" and spec.choices is not None:
        extra.append("choices")
    if kind == "category" and spec.p_true is not None:
        extra.append("p_true")
    if extra:
        raise ValueError(f"a {kind} input takes no {' or '.join(extra)}")
    if kind == "category":
        names = spec.choices or []
        if not names or not all(isinstance(n, str) for n in names):
            raise ValueError("choices: a category input lists its names (strings)")
        for n in names:
            if not 0 < len(str(n)) <= formula.MAX_CATEGORY:
                raise ValueError(f"choices: {n!r} is not 1 to {formula.MAX_CATEGORY} characters")
        if len(set(names)) != len(names):
            raise ValueError("choices: a name is listed twice")
    return spec


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
    (:mod:`agentproc.procedures.workflow_loops`)."""


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


def check_text_input(spec: InputSpec) -> InputSpec:
    """A string's fields (a ``pattern`` or a ``key_of``, not both) or a date's (a
    ``range`` of two ISO dates), and none of another kind's."""
    kind = spec.kind
    own = ("pattern", "key_of") if kind == "string" else ("range",)
    others = ("range", "integers", "choices", "weights", "p_true", "pattern", "key_of")
    extra = [k for k in others if k not in own and getattr(spec, k) is not None]
    if extra:
        raise ValueError(f"a {kind} input takes no {' or '.join(extra)}")
    if kind == "string":
        if (spec.pattern is None) == (spec.key_of is None):
            raise ValueError("a string input gives exactly one of pattern, key_of")
        if spec.pattern is not None:
            try:
                parse_pattern(spec.pattern)
            except PatternError as exc:
                raise ValueError(f"pattern: {exc}") from None
        return spec
    if spec.range is None:
        raise ValueError('a date input gives its range: ["2026-01-01", "2026-12-31"]')
    days = [parse_date(v) for v in spec.range]
    for v, d in zip(spec.range, days, strict=True):
        if d is None:
            raise ValueError(f"range: {v!r} is not an ISO date (YYYY-MM-DD)")
    if days[0] > days[1]:  # type: ignore[operator]
        raise ValueError(f"range: {spec.range[0]} is after {spec.range[1]}")
    return spec


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
    expansion (:mod:`agentproc.procedures.workflow_loops`); ``None`` for any other."""

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
