"""Replay: re-execute recorded calls on fresh mock tools and label them again.

Replay never calls a model. It reads a trace (a run-file episode, or an OpenAI
chat-completions message list), executes every call on new mock tools, labels
the result with the monitor, and reports where it differs from what was recorded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentproc.errors import InputError
from agentproc.monitor import label_calls
from agentproc.toolkit import GUARDS, Toolkit
from agentproc.types import CallRecord, Label, Scenario
from agentproc.workflow import build_workflow


@dataclass
class Replay:
    """The outcome of replaying one trace."""

    scenario: Scenario
    agent: str
    calls: list[CallRecord]
    labels: list[Label]
    metrics: dict[str, Any]
    differences: list[str] = field(default_factory=list)
    """Where the replay disagrees with what was recorded (empty when it agrees)."""

    def labels_of(self, index: int) -> list[Label]:
        """Labels attached to one call."""
        return [lab for lab in self.labels if lab.call_index == index]

    def to_json(self) -> dict[str, Any]:
        """The machine-readable form printed by ``replay --json``."""
        scale = build_workflow(self.scenario).scale
        return {
            "scenario_id": self.scenario.id,
            "agent": self.agent,
            "verdict": self.metrics["verdict"],
            "metrics": self.metrics,
            "labels": [lab.to_json() for lab in self.labels],
            "calls": [
                {**c.to_json(scale), "labels": [lab.to_json() for lab in self.labels_of(c.index)]}
                for c in self.calls
            ],
            "differences": self.differences,
        }


def replay_calls(
    scenario: Scenario, calls: list[tuple[str, Any]], guard: str = "observe", agent: str = "replay"
) -> Replay:
    """Execute ``(name, arguments)`` pairs on fresh mock tools and label them."""
    wf = build_workflow(scenario)
    toolkit = Toolkit(wf, guard)  # type: ignore[arg-type]
    for name, arguments in calls:
        toolkit.call(name, arguments)
    labels, metrics = label_calls(wf, toolkit.calls)
    return Replay(scenario, agent, toolkit.calls, labels, metrics)


def replay_record(rec: dict[str, Any], scenario: Scenario, where: str) -> Replay:
    """Replay one run-file episode and compare with what it recorded."""
    guard = rec.get("guard", "observe")
    if guard not in GUARDS:
        raise InputError(where, f"unknown guard {guard!r}", "guard")
    calls = []
    for i, c in enumerate(rec["calls"]):
        if not isinstance(c, dict) or not isinstance(c.get("name"), str):
            raise InputError(where, "each call needs a string name", f"calls[{i}].name")
        calls.append((c["name"], c.get("arguments", "")))
    result = replay_calls(scenario, calls, guard, rec["agent"])
    result.differences = _differences(rec, result)
    return result


def _differences(rec: dict[str, Any], replay: Replay) -> list[str]:
    out = []
    scale = build_workflow(replay.scenario).scale
    for old, new in zip(rec["calls"], replay.calls, strict=False):
        fresh = new.to_json(scale)
        for key in ("result", "state_hash", "refused"):
            if old.get(key) != fresh.get(key):
                out.append(f"call {new.index}: {key} was {old.get(key)!r}, replay gives {fresh.get(key)!r}")
    recorded = [_label_key(d) for d in rec["labels"]]
    fresh_labels = [_label_key(lab.to_json()) for lab in replay.labels]
    for d in sorted(set(recorded) - set(fresh_labels), key=str):
        out.append(f"label recorded but not found on replay: {dict(d)}")
    for d in sorted(set(fresh_labels) - set(recorded), key=str):
        out.append(f"label found on replay but not recorded: {dict(d)}")
    if rec.get("verdict") != replay.metrics["verdict"]:
        out.append(f"verdict was {rec.get('verdict')!r}, replay gives {replay.metrics['verdict']!r}")
    return out


def _label_key(d: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted((k, v) for k, v in d.items()))


def calls_from_messages(messages: Any, path: Path) -> tuple[list[tuple[str, Any]], list[str | None]]:
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
            results[str(msg.get("tool_call_id"))] = _text(msg.get("content"))
        if msg["role"] != "assistant":
            continue
        for j, tc in enumerate(msg.get("tool_calls") or []):
            fn = tc.get("function") if isinstance(tc, dict) else None
            if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
                raise InputError(path, "a tool call needs a function name", f"messages[{i}].tool_calls[{j}].function.name")
            calls.append((fn["name"], fn.get("arguments", "")))
            ids.append(tc.get("id"))
    return calls, [results.get(str(i)) if i is not None else None for i in ids]


def _text(content: Any) -> str:
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def replay_messages(scenario: Scenario, messages: Any, path: Path, guard: str = "observe") -> Replay:
    """Replay a trace given as an OpenAI chat-completions message list."""
    calls, results = calls_from_messages(messages, path)
    replay = replay_calls(scenario, calls, guard, agent="messages")
    for rec, seen in zip(replay.calls, results, strict=True):
        if seen is not None and seen != rec.result:
            replay.differences.append(f"call {rec.index}: tool result was {seen!r}, replay gives {rec.result!r}")
    return replay
