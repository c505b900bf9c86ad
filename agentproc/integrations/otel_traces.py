"""OpenTelemetry GenAI traces in: the tool calls of each trace of an OTLP JSON file.

An agent instrumented with the GenAI semantic conventions records each tool execution as
a span whose ``gen_ai.operation.name`` is ``execute_tool``, with ``gen_ai.tool.name``,
``gen_ai.tool.call.id``, ``gen_ai.tool.call.arguments`` and ``gen_ai.tool.call.result``
(the last two are opt-in content). A trace without such spans may still hold the model's
tool calls as ``tool_call`` parts of ``gen_ai.output.messages`` on its chat spans; those
are read instead. One trace is one episode. Only there do several calls form one batch
(one message of the agent's, for ``--order dependency``): tool spans say nothing of the
message that asked for them, so each is a message of its own.

The file is read as JSON, not through the OpenTelemetry protobuf classes: OTLP JSON writes
trace and span ids in hex where protobuf's JSON mapping expects base64, so files from
collectors and from ``MessageToJson`` differ; here ids are only grouping keys, either way.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentproc.errors import InputError
from agentproc.jsonio import read_json

EXECUTE_TOOL = "execute_tool"
"""The ``gen_ai.operation.name`` of a tool execution span."""
DEFAULT_AGENT = "otel"
"""An imported episode's agent when the trace names none (``gen_ai.agent.name`` or the
resource's ``service.name``)."""


@dataclass
class TraceCall:
    """One tool call read from a trace."""

    name: str
    arguments: str
    """The arguments as the agent sent them (JSON text)."""
    result: str | None
    """What the tool returned, when the trace recorded it."""
    start: int
    batch: str
    """Calls with the same batch came in one message of the agent's."""


@dataclass
class Trace:
    """The tool calls of one trace, in the order they started."""

    trace_id: str
    agent: str
    calls: list[TraceCall] = field(default_factory=list)

    @property
    def batches(self) -> list[int]:
        """How many calls each of the agent's messages held, in order."""
        return [len(calls) for calls in self.messages()]

    def messages(self) -> list[list[TraceCall]]:
        """The calls of each of the agent's messages, in order."""
        return [list(calls) for _, calls in itertools.groupby(self.calls, key=lambda c: c.batch)]


def read_traces(path: Path) -> list[Trace]:
    """The traces of an OTLP JSON file that hold tool calls, each an episode.

    Raises:
        InputError: the file is not OTLP JSON, a tool span lacks its name or arguments,
            or no trace holds a tool call.
    """
    data = read_json(path)
    spans = list(_spans(data, path))
    traces: dict[str, Trace] = {}
    by_message: dict[str, list[tuple[str, Mapping[str, Any], dict[str, Any], str]]] = {}
    for where, span, attrs, agent in spans:
        trace_id = str(span.get("traceId", span.get("trace_id", "")))
        trace = traces.setdefault(trace_id, Trace(trace_id, agent))
        if attrs.get("gen_ai.agent.name"):
            trace.agent = str(attrs["gen_ai.agent.name"])
        if attrs.get("gen_ai.operation.name") == EXECUTE_TOOL or "gen_ai.tool.name" in attrs:
            trace.calls.append(_tool_call(where, span, attrs, path))
        elif "gen_ai.output.messages" in attrs:
            by_message.setdefault(trace_id, []).append((where, span, attrs, agent))
    for trace_id, chats in by_message.items():
        if not traces[trace_id].calls:  # execute_tool spans are the better record
            for where, span, attrs, _ in chats:
                traces[trace_id].calls.extend(_message_calls(where, span, attrs, path))
    found = [t for t in traces.values() if t.calls]
    if not found:
        raise InputError(
            path,
            "holds no tool call: no span with gen_ai.operation.name = execute_tool, and no "
            "tool_call part in any gen_ai.output.messages",
            "resourceSpans",
        )
    for trace in found:
        trace.calls.sort(key=lambda c: c.start)
    return found


def _spans(data: Any, path: Path) -> Iterator[tuple[str, Mapping[str, Any], dict[str, Any], str]]:
    """``(where, span, its attributes, the resource's agent name)`` of every span."""
    resources = (
        _list(data, "resourceSpans", path, "resourceSpans") if isinstance(data, dict) else None
    )
    if resources is None:
        raise InputError(path, "not OTLP JSON: expected an object with resourceSpans")
    for i, rs in enumerate(resources):
        where = f"resourceSpans[{i}]"
        resource = _attributes(_get(_get(rs, "resource") or {}, "attributes") or [], path, where)
        agent = str(resource.get("service.name") or DEFAULT_AGENT)
        for j, ss in enumerate(_list(rs, "scopeSpans", path, f"{where}.scopeSpans")):
            for k, span in enumerate(_list(ss, "spans", path, f"{where}.scopeSpans[{j}].spans")):
                at = f"{where}.scopeSpans[{j}].spans[{k}]"
                if not isinstance(span, dict):
                    raise InputError(path, "a span must be an object", at)
                attrs = _attributes(_get(span, "attributes") or [], path, f"{at}.attributes")
                yield at, span, attrs, agent


def _tool_call(where: str, span: Mapping[str, Any], attrs: dict[str, Any], path: Path) -> TraceCall:
    name = attrs.get("gen_ai.tool.name")
    if not isinstance(name, str) or not name:
        raise InputError(path, "a tool span needs gen_ai.tool.name", f"{where}.attributes")
    arguments = attrs.get("gen_ai.tool.call.arguments")
    if arguments is None:
        raise InputError(
            path,
            f"tool span {name!r} has no gen_ai.tool.call.arguments (the instrumentation must "
            "record tool call content)",
            f"{where}.attributes",
        )
    result = attrs.get("gen_ai.tool.call.result")
    return TraceCall(
        name=name,
        arguments=arguments if isinstance(arguments, str) else json.dumps(arguments),
        result=None if result is None else str(result),
        start=_start(span),
        batch=str(_get(span, "spanId") or where),  # a message of its own (see module doc)
    )


def _message_calls(
    where: str, span: Mapping[str, Any], attrs: dict[str, Any], path: Path
) -> list[TraceCall]:
    raw = attrs["gen_ai.output.messages"]
    try:
        messages = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        raise InputError(
            path, "gen_ai.output.messages is not JSON", f"{where}.attributes"
        ) from None
    calls = []
    for m, msg in enumerate(messages if isinstance(messages, list) else []):
        parts = msg.get("parts") if isinstance(msg, dict) else None
        for part in parts if isinstance(parts, list) else []:
            if not isinstance(part, dict) or part.get("type") != "tool_call":
                continue
            name = part.get("name")
            if not isinstance(name, str):
                raise InputError(path, "a tool_call part needs a name", f"{where}.attributes")
            args = part.get("arguments", {})
            calls.append(
                TraceCall(
                    name=name,
                    arguments=args if isinstance(args, str) else json.dumps(args),
                    result=None,
                    start=_start(span),
                    batch=f"{where}:{m}",
                )
            )
    return calls


def _start(span: Mapping[str, Any]) -> int:
    try:
        return int(_get(span, "startTimeUnixNano") or 0)
    except (TypeError, ValueError):
        return 0


def _get(d: Any, camel: str) -> Any:
    """A field by its OTLP JSON name, or its protobuf (snake_case) name."""
    if not isinstance(d, dict):
        return None
    if camel in d:
        return d[camel]
    return d.get("".join(f"_{c.lower()}" if c.isupper() else c for c in camel))


def _list(d: Any, key: str, path: Path, where: str) -> list[Any]:
    value = _get(d, key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(path, "expected a list", where)
    return value


def _attributes(items: Any, path: Path, where: str) -> dict[str, Any]:
    """OTLP key-value attributes as a plain dict."""
    if not isinstance(items, list):
        raise InputError(path, "attributes must be a list of key-value pairs", where)
    out: dict[str, Any] = {}
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("key"), str):
            raise InputError(path, "an attribute needs a key", where)
        out[item["key"]] = _value(item.get("value"))
    return out


def _value(v: Any) -> Any:
    if not isinstance(v, dict):
        return v
    for key in ("stringValue", "string_value", "boolValue", "bool_value", "doubleValue"):
        if key in v:
            return v[key]
    for key in ("intValue", "int_value"):
        if key in v:  # int64 is a string in OTLP JSON
            try:
                return int(v[key])
            except (TypeError, ValueError):
                return v[key]
    array = _get(v, "arrayValue")
    if isinstance(array, dict):
        return [_value(x) for x in array.get("values", [])]
    return None
