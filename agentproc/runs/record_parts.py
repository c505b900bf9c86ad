"""The parts of a run file's line that stand apart: a model turn, the token totals, the
failure that ended an episode, what a credential was cut out of, a scenario by reference
and the run's settings (:mod:`agentproc.runs.records` declares the line itself)."""

from __future__ import annotations

from typing import Literal, NotRequired

from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict

from agentproc.runs.episode import ErrorKind

_CONFIG = ConfigDict(extra="forbid", use_attribute_docstrings=True)


@with_config(_CONFIG)
class ModelCallRecord(TypedDict):
    """One model turn of a model agent."""

    latency_s: float
    """Seconds from the first attempt to the reply (or the last failure)."""
    attempts: int
    """Tries, the first included."""
    input_tokens: int
    output_tokens: int
    error: str | None
    """The last error (redacted) when every attempt failed."""
    cache_hit: NotRequired[bool]
    """With ``run --cache``: the reply came from the response cache (no model was asked)."""


@with_config(_CONFIG)
class UsageRecord(TypedDict):
    """Token and time totals of an episode's model calls."""

    input_tokens: int
    output_tokens: int
    model_seconds: float
    """Seconds of the model calls the model answered (cache hits left out)."""
    model_calls: int
    cache_hits: NotRequired[int]
    """With ``run --cache``: model calls the response cache answered."""


@with_config(_CONFIG)
class ErrorRecord(TypedDict):
    """The infrastructure failure that ended an episode (not scored)."""

    kind: ErrorKind
    """``endpoint``, ``context_overflow`` or ``harness``."""
    message: str
    """What failed, redacted."""
    attempts: int
    """Tries of the failing model call, the first included."""
    type: NotRequired[str]
    """A harness error's exception class (``KeyError``)."""
    frames: NotRequired[list[str]]
    """A harness error's frames in the agent's own code, innermost last
    (``file:line in function: source``; redacted, at most 8)."""


@with_config(_CONFIG)
class RedactedRecord(TypedDict):
    """What a credential (:mod:`agentproc.runs.redact`) was cut out of before the episode
    ran and was labelled: ``[REDACTED]`` stands in its place in the file, as it did for the
    mock tools and the monitor, so replay and relabel find what the run found."""

    calls: NotRequired[list[int]]
    """The calls (their index) whose name or arguments held one; such an argument holds
    ``"[REDACTED]"``, a value of no step."""
    output: NotRequired[bool]
    """Text mode: the model's reply held one."""


@with_config(_CONFIG)
class ScenarioRef(TypedDict):
    """A scenario by reference: its suite and the digest of its procedure."""

    suite: str
    """The suite folder (absolute path) the scenario was read from."""
    sha256: str
    """SHA-256 of its compact procedure (its ``procedures.jsonl`` line, as written), or of a
    declared workflow's scenario (its ``scenarios.jsonl`` line, without the newline)."""


@with_config(_CONFIG)
class SettingsRecord(TypedDict):
    """What a run was given that changes what its agent sees or does, each only when not
    the default: the agent's setup (:func:`~agentproc.runs.keys.episode_key`)."""

    guard: NotRequired[Literal["enforce", "feedback"]]
    """``--guard``, when the variant sets none of its own."""
    endpoint: NotRequired[str]
    """An ``openai:`` model's server (``--base-url``, ``OPENAI_BASE_URL``), no credential."""
    tool_choice: NotRequired[Literal["auto"]]
    """``--tool-choice auto`` of the embedded model (absent: ``any``)."""
    max_tokens: NotRequired[int]
    """``--max-tokens``."""
    budget: NotRequired[int]
    """``--budget`` (absent: the procedure's default)."""
    continue_after_answer: NotRequired[Literal[True]]
    """``--continue-after-answer``."""
    seed: NotRequired[int]
    """``--seed`` (absent: 0)."""
