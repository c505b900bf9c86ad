"""Labelled episodes out, as OpenTelemetry GenAI spans in OTLP JSON (``export --otel``).

Each episode is one trace: an ``invoke_agent`` span (the agent, the scenario, the verdict,
the metrics, and the episode's own labels as events) over one ``execute_tool`` span per
call, with the GenAI attributes ``gen_ai.tool.name``, ``gen_ai.tool.call.id``,
``gen_ai.tool.call.arguments`` and ``gen_ai.tool.call.result``, and the monitor's labels of
that call as ``agentproc.label`` events. Trace viewers show labelled trajectories; an LLM
judge reading them can be scored against the labels; ``import-traces`` reads them back.

Written by hand, not through the OpenTelemetry SDK's encoder: that encoder makes protobuf,
whose JSON mapping writes ids in base64 where OTLP JSON wants hex, and the SDK stamps
spans with the clock and random ids, where an export should be the same file twice. Ids
are digests of the episode's key; times are synthetic (a run file holds no call times):
one millisecond per call from a fixed epoch, one second apart per episode.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from agentproc.runs import EpisodeRecord

EPOCH_NS = 1_700_000_000 * 10**9
"""The synthetic start of the first exported episode (2023-11-14, UTC)."""
LABEL_EVENT = "agentproc.label"
"""The name of a label's span event."""
INTERNAL = 1
"""OTLP ``SPAN_KIND_INTERNAL``."""


def otlp_json(records: Iterable[EpisodeRecord]) -> dict[str, Any]:
    """The OTLP JSON of every episode (one trace each)."""
    spans: list[dict[str, Any]] = []
    for n, rec in enumerate(records):
        spans.extend(_episode_spans(rec, EPOCH_NS + n * 10**9))
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": [_attr("service.name", "agentproc")]},
                "scopeSpans": [{"scope": {"name": "agentproc"}, "spans": spans}],
            }
        ]
    }


def _episode_spans(rec: EpisodeRecord, start: int) -> list[dict[str, Any]]:
    key = f"{rec['scenario_id']}\0{rec['agent']}\0{rec.get('variant')}\0{rec.get('trial', 0)}"
    trace_id = hashlib.sha256(key.encode()).hexdigest()[:32]
    root_id = _span_id(trace_id, "root")
    calls = rec["calls"]
    by_call: dict[int | None, list[dict[str, Any]]] = {}
    for lab in rec["labels"]:
        by_call.setdefault(lab.get("call_index"), []).append(dict(lab))
    end = start + (len(calls) + 1) * 10**6
    root = _span(
        trace_id,
        root_id,
        None,
        f"invoke_agent {rec['agent']}",
        start,
        end,
        {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": rec["agent"],
            "agentproc.scenario_id": rec["scenario_id"],
            "agentproc.verdict": rec["verdict"],
            "agentproc.guard": rec.get("guard", "observe"),
            "agentproc.variant": rec.get("variant", "default"),
            "agentproc.trial": rec.get("trial", 0),
            "agentproc.stop_reason": rec.get("stop_reason"),
            "agentproc.metrics": json.dumps(rec["metrics"], sort_keys=True),
        },
        _events(by_call.get(None, []), end),
    )
    out = [root]
    for i, call in enumerate(calls):
        at = start + (i + 1) * 10**6
        index = call.get("index", i)
        attrs = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call["name"],
            "gen_ai.tool.call.id": f"call_{index}",
            "gen_ai.tool.call.arguments": call.get("arguments", ""),
            "gen_ai.tool.call.result": call.get("result", ""),
            "agentproc.step": call.get("step"),
            "agentproc.refused": call.get("refused"),
        }
        name = f"execute_tool {call['name']}"
        span_id = _span_id(trace_id, str(i))
        events = _events(by_call.get(index, []), at + 10**6 - 1)
        out.append(_span(trace_id, span_id, root_id, name, at, at + 10**6 - 1, attrs, events))
    return out


def _span_id(trace_id: str, part: str) -> str:
    return hashlib.sha256(f"{trace_id}:{part}".encode()).hexdigest()[:16]


def _span(
    trace_id: str,
    span_id: str,
    parent: str | None,
    name: str,
    start: int,
    end: int,
    attrs: dict[str, Any],
    events: list[dict[str, Any]],
) -> dict[str, Any]:
    span: dict[str, Any] = {"traceId": trace_id, "spanId": span_id}
    if parent is not None:
        span["parentSpanId"] = parent
    span |= {
        "name": name,
        "kind": INTERNAL,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(end),
        "attributes": [_attr(k, v) for k, v in attrs.items() if v is not None],
        "events": events,
    }
    return span


def _events(labels: list[dict[str, Any]], at: int) -> list[dict[str, Any]]:
    return [
        {
            "timeUnixNano": str(at),
            "name": LABEL_EVENT,
            "attributes": [
                _attr(f"agentproc.label.{k}", v) for k, v in lab.items() if v is not None
            ],
        }
        for lab in labels
    ]


def _attr(key: str, value: Any) -> dict[str, Any]:
    """One OTLP key-value (int64 as a string, as OTLP JSON writes it)."""
    if isinstance(value, bool):
        typed: dict[str, Any] = {"boolValue": value}
    elif isinstance(value, int):
        typed = {"intValue": str(value)}
    elif isinstance(value, float):
        typed = {"doubleValue": value}
    else:
        typed = {"stringValue": str(value)}
    return {"key": key, "value": typed}
