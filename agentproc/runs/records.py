"""The run-file format, declared once: what one line of a run file holds.

These TypedDicts describe the JSON that :func:`episode_record` writes and every
reader (report, replay, relabel, resume) reads; the runtime objects they come
from are :class:`~agentproc.runs.episode.Episode`,
:class:`~agentproc.workflow.CallRecord` and :class:`~agentproc.labelling.Label`.
``schemas/run.schema.json`` is generated from :data:`EpisodeRecord` by
:func:`run_schema` (``python -m agentproc.runs.records > schemas/run.schema.json``).
"""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any, Literal, NotRequired

from pydantic import ConfigDict, Field, TypeAdapter, with_config
from typing_extensions import TypedDict

from agentproc.arith import SCALE
from agentproc.labelling import LabelKind, Metrics
from agentproc.labelling.order import OrderPolicy
from agentproc.runs.episode import Episode, Mode, StopReason
from agentproc.runs.layout import RUN_SCHEMA_VERSION
from agentproc.runs.record_parts import (
    ErrorRecord,
    ModelCallRecord,
    RedactedRecord,
    ScenarioRef,
    SettingsRecord,
    UsageRecord,
)
from agentproc.workflow import Scenario

_CONFIG = ConfigDict(extra="forbid", use_attribute_docstrings=True)


@with_config(_CONFIG)
class LabelRecord(TypedDict):
    """A label as written: ``kind``, ``call_index`` and ``step`` always, attributes when set."""

    kind: LabelKind
    """The label kind."""
    call_index: int | None
    """The call it is attached to; ``null`` for episode-level labels."""
    step: int | None
    """The step it concerns, if any."""
    cause: NotRequired[str]
    """``wrong_argument``/``wrong_answer``: why the value is wrong."""
    argument: NotRequired[str]
    """``wrong_argument``, ``unreadable``, ``unreturned_value``: the argument (text: variable)."""
    expected: NotRequired[float | int | bool | str]
    """The correct value (a branched workflow's: a category's name or a boolean too)."""
    got: NotRequired[float | int | bool | str | None]
    """The value the agent gave (``null``: an optional argument it left out)."""
    confused_with: NotRequired[str]
    """``lookback_confusion``: the variable whose value explains the wrong one."""
    self_correction: NotRequired[bool]
    """``repeated_step``/``answer_revised``: the previous one was wrong, this one right."""
    breaks_dependency: NotRequired[bool]
    """``reordered``: it ran before a step whose output it reads."""
    missing_steps: NotRequired[int]
    """``premature_finish``: steps not yet executed."""
    live: NotRequired[bool]
    """``skipped_step``: whether the step's output reaches the answer."""
    refused: NotRequired[bool]
    """Enforce mode: the mock tools refused the call."""
    truncated: NotRequired[bool]
    """``wrong_argument``: the value is a candidate cut to fewer decimals (``-4.0`` for
    ``-4.002``)."""
    reason: NotRequired[str]
    """``unneeded_step``: ``condition`` (its ``when`` is false on the instance) or
    ``after_exit`` (it lies past the exit that fired)."""
    field: NotRequired[str]
    """``wrong_answer`` of a multi-field answer: the field that is wrong (one label per
    wrong field)."""


@with_config(_CONFIG)
class CallJSON(TypedDict):
    """One tool call as the mock tools executed it."""

    index: int
    """Position in the episode, from 0."""
    name: str
    """The tool name exactly as the agent sent it."""
    arguments: str
    """The argument text exactly as the agent sent it."""
    result: str
    """What the agent was told."""
    step: int | None
    """The step number, when ``name`` is a step tool."""
    refused: str | None
    """Why nothing was executed (a key of :data:`~agentproc.workflow.REFUSALS`)."""
    state_hash: str
    """Canonical hash of the mock tools' state after the call."""
    value: NotRequired[float | int]
    """The value the step produced."""
    answer: NotRequired[float | int | bool | str | dict[str, float | int | bool | str]]
    """The answer an accepted finish call submitted (a multi-field answer's: the fields
    given, field -> value)."""
    given: NotRequired[bool]
    """A pre-filled call (a variant's ``[prefill]``), not the agent's: the first
    ``metrics.given_steps`` calls (a line stores the count, not the flag)."""


_VERSION = (
    "Version of the run-file format (``2``: :data:`~agentproc.runs.layout.RUN_SCHEMA_VERSION`)."
)
_SCENARIO_SHA256 = (
    "The scenario's fingerprint (:func:`scenario_digest`): ``run --resume`` refuses a suite"
    " that holds another version of a scenario already run."
)
_NAME = (
    "The name the run was given (``run --name``): the agent's name in report, compare"
    " and the HTML report, and what tells two runs of one agent spec apart."
)


@with_config(_CONFIG)
class _Line(TypedDict):
    """The fields a run-file line and a record, as readers see it, share.

    A field's attribute docstring reaches the JSON Schema of the class that declares it
    only (pydantic reads a class's own source): the fields :data:`RunLine`'s schema
    describes carry their description in their type instead.
    """

    schema_version: Annotated[int, Field(description=_VERSION)]
    scenario_id: str
    scenario_sha256: NotRequired[Annotated[str, Field(description=_SCENARIO_SHA256)]]
    agent: str
    """The agent spec, e.g. ``sim:decay``, ``openai:MODEL`` or ``local:STEM`` (your own
    weights, by the file's stem)."""
    name: NotRequired[Annotated[str, Field(description=_NAME)]]
    settings: NotRequired[SettingsRecord]
    guard: NotRequired[str]
    """``observe`` or ``enforce``."""
    variant: NotRequired[str]
    """The variant the episode ran under (``default`` when absent)."""
    trial: NotRequired[int]
    """The repetition of the scenario, 0-based (``0`` when absent)."""
    cell: str
    """The grid cell id."""
    params: dict[str, Any]
    """The generator parameters (``steps``, ``lookback``, ``range``, ``ops``, ``mode``, ...)."""
    verdict: Literal["faithful", "unfaithful_correct", "wrong", "no_answer"]
    metrics: Metrics
    labels: list[LabelRecord]
    stop_reason: NotRequired[StopReason]
    variant_spec: NotRequired[dict[str, Any]]
    """The variant's JSON (``schemas/variant.schema.json``), when it changes anything:
    what replay and relabel rebuild its prompt, tools and names from. A long one (64 KiB
    of JSON or more: a long prompt template) is stored once per file (per writer): the
    later records of its variant hold ``variant_spec_sha256`` instead."""
    variant_spec_sha256: NotRequired[str]
    """SHA-256 of a long ``variant_spec`` (:mod:`agentproc.runs.specs`): set beside it in
    the line that holds it whole, and alone in the later lines of its variant."""
    order: NotRequired[OrderPolicy]
    """The order policy the monitor held the calls to: ``listed`` (when absent) or
    ``dependency`` (a step whose inputs were all produced is in order, in any position)."""
    batches: NotRequired[list[int]]
    """Under ``dependency``: how many calls each of the agent's messages held, in order
    (absent: one call per message)."""
    usage: NotRequired[UsageRecord]
    redacted: NotRequired[RedactedRecord]
    """Set when a credential was cut out of a call or the reply before the episode ran."""
    error: NotRequired[ErrorRecord]
    """Set when an infrastructure failure ended the episode: it counts in no figure."""
    output: NotRequired[
        Annotated[str, Field(description="Text mode: the model's reply (what is labelled).")]
    ]
    scenario_ref: NotRequired[ScenarioRef]
    """The scenario by reference, when it came from a suite and the run was not
    ``--self-contained``; one of ``scenario_ref``, ``procedure`` and ``scenario`` is set."""
    procedure: NotRequired[dict[str, Any]]
    """The compact procedure the scenario is compiled from (a ``procedures.jsonl`` line)."""
    scenario: NotRequired[dict[str, Any]]
    """The whole scenario without its tools and prompt (``schemas/scenario.schema.json``),
    for one not compiled from a procedure (and in version-1 files)."""


@with_config(_CONFIG)
class EpisodeRecord(_Line):
    """A finished episode as readers see it: a run-file line, its calls as objects and its
    bulk fields at the top level (:mod:`agentproc.runs.layout` says how it is stored)."""

    mode: NotRequired[Mode]
    """``tools`` or ``text``; files written before it existed hold tool-mode episodes."""
    messages: NotRequired[list[dict[str, Any]]]
    """The conversation in OpenAI chat-completions format, raw argument text kept."""
    calls: list[CallJSON]
    injected: NotRequired[list[LabelRecord]]
    """Simulated agents: the labels their injected faults must cause."""
    model_calls: NotRequired[list[ModelCallRecord]]
    errors: NotRequired[list[str]]
    """Every failed attempt of a model call, redacted."""


CompactCall = tuple[str, str, int | None, str | None, float | int | None]
"""A call as a version-2 line stores it: ``[name, arguments, step, refused, value]``
(``value``: the step's value, or the answer an accepted finish call submitted)."""


@with_config(_CONFIG)
class BulkRecord(TypedDict):
    """What a version-2 line keeps last, for replay and the drill-down."""

    results: list[str]
    """What the agent was told, per call."""
    state_hashes: list[str]
    """Canonical hash of the mock tools' state after each call."""
    messages: NotRequired[list[dict[str, Any]]]
    model_calls: NotRequired[list[ModelCallRecord]]
    errors: NotRequired[list[str]]
    injected: NotRequired[list[LabelRecord]]


@with_config(_CONFIG)
class RunLine(_Line):
    """One line of a run file, version 2, keys in this order but for ``mode`` (after
    ``name`` and ``settings``) and ``calls`` (before ``output``), which differ from a
    record's (:mod:`agentproc.runs.layout`)."""

    mode: Mode
    calls: list[CompactCall]
    bulk: BulkRecord


def procedure_digest(procedure: dict[str, Any]) -> str:
    """SHA-256 of a compact procedure as ``procedures.jsonl`` writes it."""
    return hashlib.sha256(json.dumps(procedure, separators=(",", ":")).encode()).hexdigest()


def scenario_digest(scenario: Scenario) -> str:
    """A scenario's fingerprint (``scenario_sha256``): the digest of the procedure it was
    compiled from, else of its line in a declared workflow's suite, else of its JSON
    without tools and prompt (keys sorted). Two versions of one scenario id differ in it.
    """
    if scenario._procedure is not None:
        return procedure_digest(scenario._procedure)
    if scenario._digest is not None:
        return scenario._digest
    whole = scenario.model_dump(mode="json", exclude={"tools", "prompt"})
    return hashlib.sha256(json.dumps(whole, sort_keys=True).encode()).hexdigest()


def _scenario_fields(scenario: Scenario, digest: str, self_contained: bool) -> dict[str, Any]:
    procedure, suite = scenario._procedure, scenario._suite
    referable = procedure is not None or scenario._digest is not None
    if suite is not None and not self_contained and referable:
        return {"scenario_ref": {"suite": suite, "sha256": digest}}
    if procedure is None:
        return {"scenario": scenario.model_dump(mode="json", exclude={"tools", "prompt"})}
    return {"procedure": procedure}


def episode_record(
    ep: Episode,
    self_contained: bool = False,
    name: str | None = None,
    settings: SettingsRecord | None = None,
) -> EpisodeRecord:
    """The run-file form of an episode.

    A scenario read from a suite is referred to by the suite and its procedure's digest
    (or, a declared workflow's, its line's: ``scenario_ref``), unless ``self_contained``:
    then, like any scenario compiled from a procedure, it is stored as its compact
    procedure. Any other scenario is stored whole. Every record holds the scenario's
    fingerprint (:func:`scenario_digest`), and the run's ``name`` and ``settings`` when set.
    """
    scenario = ep.scenario
    digest = scenario_digest(scenario)
    rec: EpisodeRecord = {
        "schema_version": RUN_SCHEMA_VERSION,
        "scenario_id": scenario.id,
        "scenario_sha256": digest,
        "agent": ep.agent,
        **({"name": name} if name else {}),  # type: ignore[typeddict-item]
        **({"settings": settings} if settings else {}),  # type: ignore[typeddict-item]
        "mode": ep.mode,
        "guard": ep.guard,
        "variant": ep.variant,
        "trial": ep.trial,
        "cell": scenario.params.cell,
        "params": scenario.params.model_dump(mode="json"),
        "verdict": ep.metrics["verdict"],
        "metrics": ep.metrics,
        "labels": [lab.to_json() for lab in ep.labels],
        "stop_reason": ep.stop_reason,
        "messages": ep.messages,
        "calls": [c.to_json(SCALE[scenario.mode]) for c in ep.calls],  # type: ignore[misc]
        **_scenario_fields(scenario, digest, self_contained),  # type: ignore[typeddict-item]
    }
    listed = ep.order == "listed"
    optional = {  # written when set, in this order
        "variant_spec": ep.variant_spec,
        "order": None if listed else ep.order,
        "batches": None if listed else ep.batches,
        "injected": None if ep.injected is None else [lab.to_json() for lab in ep.injected],
        "output": ep.output,
        "model_calls": ep.model_calls,
        "usage": ep.usage,
        "errors": ep.errors,
        "redacted": ep.redacted,
        "error": None if ep.error is None else ep.error.to_json(),
    }
    rec.update((k, v) for k, v in optional.items() if v is not None)  # type: ignore[typeddict-item]
    return rec


def is_error(rec: EpisodeRecord) -> bool:
    """Whether an infrastructure failure ended a stored episode (it is then not scored)."""
    return rec.get("stop_reason") == "error" or "error" in rec


def error_kind_of(rec: EpisodeRecord) -> str:
    """The kind of a stored episode's failure (``unknown`` for files that predate it)."""
    error = rec.get("error")
    return error["kind"] if isinstance(error, dict) else "unknown"


def run_schema() -> dict[str, Any]:
    """The JSON Schema of one run-file line (version 2), generated from :data:`RunLine`."""
    schema = TypeAdapter(RunLine).json_schema()
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "agentproc run-file line (version 2)",
        **schema,
    }


if __name__ == "__main__":  # pragma: no cover
    print(json.dumps(run_schema(), indent=2))
