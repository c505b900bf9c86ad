"""What a scenario says beside its steps: the generator parameters it came from and the
tool that ends it (re-exported by :mod:`agentproc.workflow.scenario`, whose models forbid
unknown fields, as these do)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agentproc.arith import Mode

FINISH_TOOL = "submit_answer"
"""The tool that ends a workflow (the one place it is named)."""
FINISH_ARGUMENT = "answer"
"""The argument of :data:`FINISH_TOOL` that carries the answer."""


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
