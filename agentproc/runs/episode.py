"""An episode: one agent's attempt at one scenario, with the monitor's findings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from agentproc.labelling import Label, Metrics
from agentproc.labelling.order import OrderPolicy
from agentproc.workflow import CallRecord, Guard, Scenario

Mode = Literal["tools", "text"]
"""How the agent is given the procedure: as tools, or in the prompt (the study's protocol)."""
MODES: tuple[Mode, ...] = ("tools", "text")

StopReason = Literal["answer", "no_tool_call", "budget", "error", "no_answer", "interrupted"]
"""Why an episode ended: an accepted answer, a reply without a tool call, the call
budget, a failure of the model or the harness, (text mode) a reply without an answer, or
(``serve-mcp``) the server stopped by a signal while the episode was open."""


ErrorKind = Literal["endpoint", "context_overflow", "harness"]
"""Why an episode could not be run: the endpoint failed (down, refused, not a chat
completion), the conversation overflowed the model's context, or the harness failed."""
ERROR_KINDS: tuple[ErrorKind, ...] = ("endpoint", "context_overflow", "harness")


@dataclass(frozen=True)
class EpisodeError:
    """An infrastructure failure that ended an episode; such an episode is not scored."""

    kind: ErrorKind
    message: str
    """The failure, redacted."""
    attempts: int = 1
    """Tries of the failing model call, the first included."""
    type: str | None = None
    """The exception's class (a harness error's)."""
    frames: tuple[str, ...] = ()
    """Where the agent's own code raised it (a harness error's; see
    :mod:`agentproc.runs.frames`)."""
    cause: BaseException | None = field(default=None, repr=False, compare=False)
    """The exception itself, in the process that caught it (``--debug`` shows its
    traceback); never written."""

    def to_json(self) -> dict[str, Any]:
        """The run-file form."""
        out: dict[str, Any] = {"kind": self.kind, "message": self.message}
        out["attempts"] = self.attempts
        if self.kind == "harness" and self.type is not None:
            out["type"] = self.type
            out["frames"] = list(self.frames)
        return out


@dataclass
class Episode:
    """One agent's attempt at one scenario, with the monitor's findings."""

    scenario: Scenario
    agent: str
    calls: list[CallRecord]
    labels: list[Label]
    metrics: Metrics
    messages: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: StopReason = "answer"
    guard: Guard = "observe"
    mode: Mode = "tools"
    variant: str = "default"
    """The named variant (prompt, rendering, tool set, ...) the episode ran under."""
    trial: int = 0
    """Which repetition of the scenario this is (0-based; ``--trials k`` runs 0..k-1)."""
    variant_spec: dict[str, Any] | None = None
    """The variant's JSON when it changes anything (replay and relabel rebuild it from it)."""
    injected: list[Label] | None = None
    """For simulated agents: the findings their injected faults must produce."""
    output: str | None = None
    """Text mode: the model's reply."""
    model_calls: list[dict[str, Any]] | None = None
    """For model agents: one :class:`~agentproc.runs.records.ModelCallRecord` per model turn."""
    usage: dict[str, Any] | None = None
    """For model agents: token and time totals (:class:`~agentproc.runs.records.UsageRecord`)."""
    errors: list[str] | None = None
    """For model agents: every failed attempt of a model call, redacted."""
    error: EpisodeError | None = None
    """Set when an infrastructure failure ended the episode (``stop_reason: "error"``)."""
    order: OrderPolicy = "listed"
    """The order policy the monitor held the calls to."""
    batches: list[int] | None = None
    """Under the ``dependency`` order policy: how many calls each of the agent's messages
    held, in order."""
    redacted: dict[str, Any] | None = None
    """What a credential was cut out of before it ran and was labelled
    (:class:`~agentproc.runs.records.RedactedRecord`)."""
