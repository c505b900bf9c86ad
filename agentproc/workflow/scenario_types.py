"""The parts of a scenario that only a branched workflow's has (format 2): the types of its
variables that are not numbers, its exits and the instance's path; and a value in units as
the typed formula grammar reads it. Pydantic models that forbid unknown fields, as the rest
of :mod:`agentproc.workflow.scenario`.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentproc.arith import SYMBOL_BASE, symbol_value


def grammar_value(units: int, scale: int) -> Any:
    """A value in units as the formula grammar reads it (a category, a boolean, or a
    fraction)."""
    return symbol_value(units) if units <= -SYMBOL_BASE else Fraction(units, scale)


Value = float | int | bool | str
"""A value of a scenario: a number, or (workflow format 2) a category's name or a boolean."""


def unset(v: object) -> bool:
    """Whether an optional field is left out (``None``): it is then not written."""
    return v is None


class VariableType(BaseModel):
    """The type of a variable that is not a number (workflow format 2)."""

    model_config = ConfigDict(extra="forbid")
    type: Literal["category", "boolean", "string", "date"]
    """``category`` (one of :attr:`choices`), ``boolean``, ``string`` (an id) or ``date``
    (ISO text, ``YYYY-MM-DD``)."""
    choices: list[str] | None = Field(default=None, exclude_if=unset)
    """A category's names."""


class ScenarioExit(BaseModel):
    """An early exit of a branched workflow: where its condition holds, the procedure
    ends with its answer and no later step is required."""

    model_config = ConfigDict(extra="forbid")
    name: str
    """The exit's name."""
    when: str
    """Its condition over the variables."""
    answer: Value
    """The answer it ends the procedure with (a multi-field answer's: its value of the
    last step's output)."""
    fields: dict[str, Value] | None = Field(default=None, exclude_if=unset)
    """A multi-field answer's: every field's value it ends the procedure with."""
    after: int = Field(ge=0)
    """How many steps are listed before it."""
    description: str = ""
    """What it means, as the agent is told."""
    operands: list[str] = Field(default_factory=list)
    """The variables its condition reads."""


class ScenarioPath(BaseModel):
    """A branched workflow's instance: the path its correct values take."""

    model_config = ConfigDict(extra="forbid")
    name: str
    """The path's name: the conditional steps it takes joined by ``+``, and
    ``exit:NAME`` when an exit fires (``base``: none of either)."""
    exit: str | None = None
    """The exit that fires, or ``None`` when the procedure runs to its answer."""


class ScenarioTable(BaseModel):
    """A table of records the instance's look-up steps read (workflow format 2): the
    state of the world behind its tools, never shown to the agent."""

    model_config = ConfigDict(extra="forbid")
    key: str
    """The key column."""
    rows: list[dict[str, Value]]
    """The records, each with its key and every column."""

    def records(self) -> dict[Any, dict[str, Any]]:
        """Key -> column -> value as the formula grammar reads it (a number an exact
        fraction)."""
        return {
            str(row[self.key]): {c: _exact(v) for c, v in row.items() if c != self.key}
            for row in self.rows
        }


def _exact(v: Value) -> Any:
    return v if isinstance(v, bool | str) else _fraction(v)


@lru_cache(maxsize=4096)
def _fraction(v: float | int) -> Fraction:
    """A table's number as an exact fraction (kept: a workflow's instances share most of
    their records' values, and reading one from its text is slow)."""
    return Fraction(repr(v)).limit_denominator(1000)


@lru_cache(maxsize=256)
def variable_type(kind: str, choices: tuple[str, ...]) -> VariableType:
    """A variable's type as a scenario's JSON gives it (kept: a suite's instances share
    them; only read)."""
    return VariableType(type=kind, choices=list(choices) or None)  # type: ignore[arg-type]


class StepLoop(BaseModel):
    """A step of a loop (workflow format 2, ``for_each``): one of the steps a looped step
    is expanded into, all offered as one tool, each call of which is the step of the
    item it names."""

    model_config = ConfigDict(extra="forbid")
    item: int = Field(ge=0)
    """Which item of the list (from 0): the step is shown as ``tool[item]``."""
    variable: str
    """The tool's parameter that names the item (``owner`` of ``owner in owners``)."""
    value: str
    """The item's name on this instance (what a faithful call passes as ``variable``)."""
    parameters: dict[str, str]
    """Each operand variable -> the tool's parameter it is passed as (the item's input
    as :attr:`variable`, a looped output of the same item by its loop name)."""
