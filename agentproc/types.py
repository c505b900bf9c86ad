"""Records that cross a boundary: scenario files, labels, calls and episodes.

User-written and file-borne records are pydantic models that forbid unknown
fields; the hot path works on the frozen dataclasses and plain dicts below.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentproc.arith import Mode, Op

SCHEMA_VERSION = 1
"""Version of the scenario and run-file formats."""


class LabelKind(StrEnum):
    """The failure taxonomy: one kind per thing an agent can do wrong."""

    HALLUCINATED_CALL = "hallucinated_call"
    INVALID_ARGUMENTS = "invalid_arguments"
    REPEATED_STEP = "repeated_step"
    REORDERED = "reordered"
    WRONG_ARGUMENT = "wrong_argument"
    SKIPPED_STEP = "skipped_step"
    PREMATURE_FINISH = "premature_finish"
    MISSING_ANSWER = "missing_answer"
    WRONG_ANSWER = "wrong_answer"
    ANSWER_REVISED = "answer_revised"


Verdict = Literal["faithful", "unfaithful_correct", "wrong", "no_answer"]
VERDICTS: tuple[Verdict, ...] = ("faithful", "unfaithful_correct", "wrong", "no_answer")


@dataclass(frozen=True, slots=True)
class Label:
    """One finding of the monitor.

    ``call_index`` and ``step`` are ``None`` for episode-level findings; the
    remaining fields are attributes that only some kinds carry.
    """

    kind: LabelKind
    call_index: int | None = None
    step: int | None = None
    cause: str | None = None
    argument: str | None = None
    expected: float | int | None = None
    got: float | int | None = None
    confused_with: str | None = None
    self_correction: bool | None = None
    breaks_dependency: bool | None = None
    missing_steps: int | None = None
    live: bool | None = None
    refused: bool | None = None

    def to_json(self) -> dict[str, Any]:
        """``kind``, ``call_index`` and ``step`` always; other attributes when set."""
        out: dict[str, Any] = {
            "kind": self.kind.value,
            "call_index": self.call_index,
            "step": self.step,
        }
        for name in _ATTRS:
            v = getattr(self, name)
            if v is not None:
                out[name] = v
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Label:
        """Inverse of :meth:`to_json`."""
        return cls(**{**d, "kind": LabelKind(d["kind"])})

    def key(self) -> tuple[Any, ...]:
        """What two labels must share to be the same finding (used by selfcheck)."""
        return (
            self.kind.value,
            self.call_index,
            self.step,
            self.cause,
            self.argument,
            self.self_correction,
            self.breaks_dependency,
        )


_ATTRS = (
    "cause",
    "argument",
    "expected",
    "got",
    "confused_with",
    "self_correction",
    "breaks_dependency",
    "missing_steps",
    "live",
    "refused",
)


@dataclass(slots=True)
class CallRecord:
    """One tool call as the mock tools executed it."""

    index: int
    name: str
    arguments: str
    """The arguments exactly as the agent sent them (a JSON string)."""
    result: str
    """What the agent was told."""
    step: int | None = None
    """The step number, when ``name`` is a step tool."""
    finish: bool = False
    """True when ``name`` is the finish tool."""
    args: dict[str, Any] | None = None
    """The parsed arguments, when they passed the tool's schema."""
    refused: str | None = None
    """Why nothing was executed: a key of :data:`REFUSALS`, or ``None``."""
    value: int | None = None
    """The value the step produced, in units."""
    answer: float | int | None = None
    """The submitted answer, for an accepted finish call."""
    state_hash: str = ""

    def to_json(self, scale: int) -> dict[str, Any]:
        """The run-file form of the call."""
        out: dict[str, Any] = {
            "index": self.index,
            "name": self.name,
            "arguments": self.arguments,
            "result": self.result,
            "step": self.step,
            "refused": self.refused,
            "state_hash": self.state_hash,
        }
        if self.value is not None:
            out["value"] = self.value // scale if scale == 1 else self.value / scale
        if self.finish and self.answer is not None:
            out["answer"] = self.answer
        return out


REFUSALS: dict[str, str] = {
    "unknown_tool": "no tool of that name was offered",
    "invalid_arguments": "the arguments are not JSON or fail the tool's schema",
    "division_by_zero": "the divisor supplied is zero",
    "out_of_range": "the result would exceed 1e12 (only wrong arguments get there)",
    "dependency": "enforce mode: a step it reads has not run yet",
    "premature": "enforce mode: the last step has not run yet",
}
"""Why a call executed nothing."""


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
    operands: list[str] = Field(min_length=2, max_length=2)
    """Left and right operand variables."""
    distances: list[int] = Field(min_length=2, max_length=2)
    """How far back each operand lies."""
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


class FinishSpec(BaseModel):
    """The tool that ends the workflow and the argument that carries the answer."""

    model_config = ConfigDict(extra="forbid")
    tool: str = "submit_answer"
    argument: str = "answer"


class ScenarioParams(BaseModel):
    """The generator parameters a scenario came from."""

    model_config = ConfigDict(extra="forbid")
    cell: str
    steps: int
    lookback: int
    range: tuple[float, float]
    ops: str
    mode: Mode
    seed: int
    index: int


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
    tolerance: float
    """A supplied number is correct when within this distance of the value."""
    steps: list[ScenarioStep]
    tools: list[dict[str, Any]] = Field(default_factory=list)
    """The offered tools, in OpenAI function-tool format."""
    finish: FinishSpec = Field(default_factory=FinishSpec)
    prompt: str = ""
    """The instructions an agent is given."""


@dataclass
class Episode:
    """One agent's attempt at one scenario, with the monitor's findings."""

    scenario: Scenario
    agent: str
    calls: list[CallRecord]
    labels: list[Label]
    metrics: dict[str, Any]
    messages: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str = "answer"
    guard: str = "observe"
    injected: list[Label] | None = None
    """For simulated agents: the findings their injected faults must produce."""
    extra: dict[str, Any] = field(default_factory=dict)
