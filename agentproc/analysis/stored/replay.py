"""Replay: re-execute recorded calls on fresh mock tools and label them again.

Replay never calls a model. It reads a trace (a run-file episode, or an OpenAI
chat-completions message list), executes every call on new mock tools, labels
the result with the monitor, and reports where it differs from what was recorded.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agentproc.analysis.measures.step_names import StepNames, name_json, scenario_names
from agentproc.errors import InputError
from agentproc.labelling import Label, Metrics, parse_text, run_text_episode
from agentproc.labelling.calculator import monitor_for
from agentproc.labelling.order import OrderPolicy
from agentproc.labelling.tools import message_starts
from agentproc.runs import EpisodeRecord, record_mode, text_of
from agentproc.runs.keys import record_order
from agentproc.runs.specs import resolve_spec
from agentproc.workflow import (
    GUARDS,
    CallRecord,
    Guard,
    Scenario,
    Toolkit,
    Workflow,
    build_workflow,
)
from agentproc.workflow.prefill import conditioned, given_steps
from agentproc.workflow.present import present
from agentproc.workflow.variant import Variant, variant_from_json


def labels_by_call(labels: Iterable[Label]) -> dict[int, list[Label]]:
    """The labels attached to a call, by call index, in order (episode labels left out)."""
    by_call: dict[int, list[Label]] = {}
    for lab in labels:
        if lab.call_index is not None:
            by_call.setdefault(lab.call_index, []).append(lab)
    return by_call


@dataclass
class Replay:
    """The outcome of replaying one trace."""

    scenario: Scenario
    agent: str
    workflow: Workflow
    calls: list[CallRecord]
    labels: list[Label]
    metrics: Metrics
    differences: list[str] = field(default_factory=list)
    """Where the replay disagrees with what was recorded (empty when it agrees)."""
    compared: bool = False
    """Whether there was a recording to compare with."""
    text_entries: list[str] | None = None
    """Text mode: the parsed step and answer lines, in order (labels index them)."""
    redacted: frozenset[int] = frozenset()
    """The calls whose name or arguments held a credential, cut out before they ran (the
    record's ``redacted.calls``): what is replayed is what ran."""

    def to_json(self) -> dict[str, Any]:
        """The machine-readable form printed by ``replay --json`` (a declared workflow's
        steps named: :func:`with_step_names`)."""
        scale = self.workflow.scale
        by_call = labels_by_call(self.labels)
        out = {
            "scenario_id": self.scenario.id,
            "agent": self.agent,
            "verdict": self.metrics["verdict"],
            "metrics": self.metrics,
            "labels": [lab.to_json() for lab in self.labels],
            "calls": [
                {
                    **c.to_json(scale),
                    **({"redacted": True} if c.index in self.redacted else {}),
                    "labels": [lab.to_json() for lab in by_call.get(c.index, [])],
                }
                for c in self.calls
            ],
            "differences": self.differences,
            **(
                {"mode": "text", "entries": self.text_entries}
                if self.text_entries is not None
                else {}
            ),
        }
        return with_step_names(out, scenario_names(self.scenario))


def with_step_names(out: dict[str, Any], names: StepNames) -> dict[str, Any]:
    """A replay's JSON with ``step_tool`` and ``step_output`` beside every ``step`` of its
    labels, calls and first divergence (as it is without ``names``: a procedure's)."""
    if not names:
        return out

    def named(d: dict[str, Any]) -> dict[str, Any]:
        return {**d, **name_json(d.get("step"), names)}

    metrics = dict(out["metrics"])
    if isinstance(metrics.get("first_divergence"), dict):
        metrics["first_divergence"] = named(metrics["first_divergence"])
    calls = [{**named(c), "labels": [named(lab) for lab in c["labels"]]} for c in out["calls"]]
    labels = [named(lab) for lab in out["labels"]]
    return {**out, "metrics": metrics, "labels": labels, "calls": calls}


def replay_calls(
    scenario: Scenario,
    calls: list[tuple[str, Any]],
    guard: Guard = "observe",
    agent: str = "replay",
    variant: Variant | None = None,
    order: OrderPolicy = "listed",
    batches: list[int] | None = None,
) -> Replay:
    """Execute ``(name, arguments)`` pairs on fresh mock tools and label them (presented
    as ``variant`` says: names, tool set and faults; a slow tool answers at once), under
    the ``order`` policy, with the calls in messages of ``batches`` calls each (``None``:
    one call per message)."""
    presented = None
    if variant is None or variant.is_default:
        wf = build_workflow(scenario)
    else:
        faults = variant.faults.model_copy(update={"slow_seconds": 0.0})
        presented = present(scenario, variant.model_copy(update={"faults": faults}))
        wf = build_workflow(presented.scenario, variant)
        guard = variant.with_guard(guard)
    toolkit = Toolkit(wf, guard, presented)
    given = [toolkit.call(*call, given=True) for call in calls[: given_steps(wf, variant)]]
    if given:  # judged against the state the pre-filled calls left
        wf = conditioned(wf, {c.index + 1: c.value for c in given if c.value is not None})
    monitor = monitor_for(wf, presented, order)
    for rec in given:
        monitor.give(rec)
    starts = message_starts(len(calls) - len(given), batches)
    for i, (name, arguments) in enumerate(calls[len(given) :]):
        if i in starts:
            monitor.message()
        monitor.observe(toolkit.call(name, arguments))
    labels, metrics = monitor.finish()
    return Replay(scenario, agent, wf, toolkit.calls, labels, metrics)


def record_variant_of(rec: EpisodeRecord, where: str, run: Path | None = None) -> Variant | None:
    """The variant a stored episode ran under, rebuilt from its ``variant_spec`` (or, by
    its digest, from the line of ``run`` that holds it: :mod:`agentproc.runs.specs`)."""
    spec = rec.get("variant_spec") if run is None else resolve_spec(run, rec)
    if spec is None:
        return None
    return variant_from_json(spec, f"{where}: variant_spec")


def replay_record(
    rec: EpisodeRecord,
    scenario: Scenario,
    where: str,
    run: Path | None = None,
    order: OrderPolicy | None = None,
) -> Replay:
    """Replay one run-file episode and compare with what it recorded (``run``: the file
    it was read from, where a long variant spec it refers to is found; under ``order``,
    else the episode's recorded order policy)."""
    if record_mode(rec) == "text":
        return _replay_text(rec, scenario, where)
    guard = rec.get("guard", "observe")
    if guard not in GUARDS:
        raise InputError(where, f"unknown guard {guard!r}", "guard")
    calls = []
    for i, c in enumerate(rec["calls"]):
        if not isinstance(c, dict) or not isinstance(c.get("name"), str):
            raise InputError(where, "each call needs a string name", f"calls[{i}].name")
        calls.append((c["name"], c.get("arguments", "")))
    variant = record_variant_of(rec, where, run)
    if variant is not None:  # the recorded guard is the one the variant ran under
        variant = variant.model_copy(update={"guard": None})
    policy, batches = record_order(rec, order, where)  # type: ignore[arg-type]
    result = replay_calls(
        scenario,
        calls,
        guard,  # type: ignore[arg-type]
        rec["agent"],
        variant,
        policy,
        batches,
    )
    result.differences = _differences(rec, result)
    result.compared = True
    result.redacted = redacted_calls(rec)
    return result


def redacted_calls(rec: EpisodeRecord) -> frozenset[int]:
    """The calls a stored episode says a credential was cut out of (none when its
    ``redacted`` field is absent or not the shape it should be)."""
    redacted = rec.get("redacted")
    calls = redacted.get("calls") if isinstance(redacted, dict) else None
    if not isinstance(calls, list):
        return frozenset()
    return frozenset(i for i in calls if isinstance(i, int) and not isinstance(i, bool))


def _replay_text(rec: EpisodeRecord, scenario: Scenario, where: str) -> Replay:
    output = rec.get("output")
    if not isinstance(output, str):
        raise InputError(where, "a text-mode episode needs its model output", "output")
    labels, metrics, trace = run_text_episode(scenario, output)
    result = Replay(
        scenario,
        rec["agent"],
        build_workflow(scenario),
        [],
        labels,
        metrics,
        text_entries=[e.raw for e in trace.entries],
    )
    result.differences = _differences(rec, result)
    result.compared = True
    return result


def _differences(rec: EpisodeRecord, replay: Replay) -> list[str]:
    out = []
    scale = replay.workflow.scale
    for old, new in zip(rec["calls"], replay.calls, strict=False):
        fresh = new.to_json(scale)
        for key in ("result", "state_hash", "refused"):
            if old.get(key) != fresh.get(key):
                out.append(
                    f"call {new.index}: {key} was {old.get(key)!r}, replay gives {fresh.get(key)!r}"
                )
    fresh_json = [lab.to_json() for lab in replay.labels]
    if rec["labels"] == fresh_json and rec.get("verdict") == replay.metrics["verdict"]:
        return out
    recorded = [_label_key(d) for d in rec["labels"]]
    fresh_labels = [_label_key(d) for d in fresh_json]
    for d in sorted(set(recorded) - set(fresh_labels), key=str):
        out.append(f"label recorded but not found on replay: {dict(d)}")
    for d in sorted(set(fresh_labels) - set(recorded), key=str):
        out.append(f"label found on replay but not recorded: {dict(d)}")
    if rec.get("verdict") != replay.metrics["verdict"]:
        out.append(
            f"verdict was {rec.get('verdict')!r}, replay gives {replay.metrics['verdict']!r}"
        )
    return out


def _label_key(d: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted((k, v) for k, v in d.items()))


def calls_from_messages(
    messages: Any, path: Path
) -> tuple[list[tuple[str, Any]], list[str | None]]:
    """``(name, arguments)`` of every assistant tool call in an OpenAI message list,
    and the tool result recorded for each (``None`` when there is none)."""
    if isinstance(messages, dict) and "messages" in messages:
        messages = messages["messages"]
    if not isinstance(messages, list):
        raise InputError(path, "expected a list of chat messages", "messages")
    calls: list[tuple[str, Any]] = []
    ids: list[str | None] = []
    results: dict[str, str] = {}
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict) or "role" not in msg:
            raise InputError(path, "each message needs a role", f"messages[{i}].role")
        if msg["role"] == "tool":
            results[str(msg.get("tool_call_id"))] = text_of(msg.get("content"))
        if msg["role"] != "assistant":
            continue
        tool_calls = msg.get("tool_calls") or []
        if not isinstance(tool_calls, list):
            raise InputError(path, "expected a list of tool calls", f"messages[{i}].tool_calls")
        for j, tc in enumerate(tool_calls):
            fn = tc.get("function") if isinstance(tc, dict) else None
            if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
                raise InputError(
                    path,
                    "a tool call needs a function name",
                    f"messages[{i}].tool_calls[{j}].function.name",
                )
            calls.append((fn["name"], fn.get("arguments", "")))
            ids.append(tc.get("id"))
    return calls, [results.get(str(i)) if i is not None else None for i in ids]


ReplayMode = Literal["tools", "text"]
"""How a message list is read: its tool calls, or the text of its replies (text mode)."""


def _replies(listed: list[Any]) -> str:
    """The text of every assistant message, in order, one after another."""
    return "\n".join(text_of(m.get("content")) for m in listed if m["role"] == "assistant")


def replay_messages(
    scenario: Scenario,
    messages: Any,
    path: Path,
    guard: Guard = "observe",
    order: OrderPolicy = "listed",
    *,
    mode: ReplayMode = "tools",
    variant: Variant | None = None,
) -> Replay:
    """Replay a trace given as an OpenAI chat-completions message list (the tool calls of
    one assistant message are one batch, under the ``dependency`` order policy), under
    ``variant`` (the calculator's: ``add``/``sub``/``mul``/``div`` calls); in ``text``
    mode, the text of its replies is read and labelled as a text-mode reply.

    Raises:
        InputError: the trace's shape does not match ``mode`` (a text conversation without
            tool calls replayed as tools, or tool calls replayed as text), naming the mode
            to use.
    """
    calls, results = calls_from_messages(messages, path)
    listed = messages["messages"] if isinstance(messages, dict) else messages
    if mode == "text":
        return _replay_text_messages(scenario, calls, _replies(listed), path)
    if not calls and parse_text(_replies(listed)).entries:
        raise InputError(
            path,
            "no tool calls, only a text reply with step or answer lines: "
            "replay it with --mode text",
            "messages",
        )
    batches = [
        len(m.get("tool_calls") or [])
        for m in listed
        if m["role"] == "assistant" and m.get("tool_calls")
    ]
    replay = replay_calls(scenario, calls, guard, "messages", variant, order=order, batches=batches)
    replay.compared = True
    for rec, seen in zip(replay.calls, results, strict=True):
        if seen is not None and seen != rec.result:
            replay.differences.append(
                f"call {rec.index}: tool result was {seen!r}, replay gives {rec.result!r}"
            )
    return replay


def _replay_text_messages(
    scenario: Scenario, calls: list[tuple[str, Any]], text: str, path: Path
) -> Replay:
    if calls:
        raise InputError(
            path,
            f"{len(calls)} tool calls, not a text reply: replay it with --mode tools",
            "messages",
        )
    labels, metrics, trace = run_text_episode(scenario, text)
    return Replay(
        scenario,
        "messages",
        build_workflow(scenario),
        [],
        labels,
        metrics,
        text_entries=[e.raw for e in trace.entries],
    )
