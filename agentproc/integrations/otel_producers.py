"""What each trace producer records of a tool call, read from one span's attributes.

Three vocabularies are read:

- the OpenTelemetry GenAI conventions (``opentelemetry-instrumentation-openai-v2``,
  traceloop's OpenLLMetry instrumentations, ``agentproc export --otel``): tool spans with
  ``gen_ai.operation.name = execute_tool``, ``gen_ai.tool.name``,
  ``gen_ai.tool.call.arguments`` / ``.result`` / ``.id``; chat spans with
  ``gen_ai.input.messages`` and ``gen_ai.output.messages`` (``tool_call`` parts);
- traceloop's older flattened attributes: ``gen_ai.prompt.N.role`` / ``.content``,
  ``gen_ai.completion.N.tool_calls.M.name`` / ``.arguments``;
- OpenInference (Arize Phoenix): ``llm.input_messages.N.message.*``,
  ``llm.output_messages.N.message.tool_calls.M.tool_call.function.name`` /
  ``.arguments``, and TOOL spans (``openinference.span.kind = TOOL``) with ``tool.name``,
  ``input.value`` and ``output.value``.

LangChain's callback wrapper, which traceloop's LangChain instrumentation records as a
tool's arguments (``{"input_str": ..., "inputs": {...}, "tags": ...}``) and result
(``{"output": {... "kwargs": {"content": ...}}}``), is unwrapped to what the tool got
and gave.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentproc.errors import InputError
from agentproc.integrations.otlp_json import Span

EXECUTE_TOOL = "execute_tool"
"""The ``gen_ai.operation.name`` of a tool execution span."""
CONVERSATION_KEYS = ("gen_ai.conversation.id", "session.id")
"""Attributes that name a conversation: traces that share one are one episode."""

_FLAT = re.compile(r"^(?:llm\.(input|output)_messages|gen_ai\.(prompt|completion))\.(\d+)\.(.+)$")
_FLAT_CALL = re.compile(r"^(?:message\.)?tool_calls\.(\d+)\.(?:tool_call\.)?(?:function\.)?(\w+)$")


@dataclass(frozen=True)
class ToolSpan:
    """A tool's execution, as a tool span records it."""

    name: str
    arguments: str | None
    result: str | None
    call_id: str | None
    start: int
    where: str


@dataclass(frozen=True)
class ChatCall:
    """A tool call the model asked for in a chat span's output."""

    name: str
    arguments: str | None
    """``None`` when the span recorded the call without its arguments."""
    call_id: str | None
    message: int
    """Which output message of the span held it (one message: one batch)."""


@dataclass
class ChatSpan:
    """A chat span: the calls of its output, and its input messages (for grouping)."""

    start: int
    where: str
    calls: list[ChatCall] = field(default_factory=list)
    inputs: tuple[str, ...] | None = None
    """Each input message as canonical JSON, when recorded."""
    told: list[str] = field(default_factory=list)
    """What the agent was told: its input messages and system instructions, as JSON."""


def tool_span(span: Span, path: Path) -> ToolSpan | None:
    """The tool call a tool span records, or ``None`` for another span."""
    a = span.attrs
    if a.get("openinference.span.kind") == "TOOL":
        name, args, result = a.get("tool.name"), a.get("input.value"), a.get("output.value")
        call_id = a.get("tool_call.id")
    elif a.get("gen_ai.operation.name") == EXECUTE_TOOL or "gen_ai.tool.name" in a:
        name, args = a.get("gen_ai.tool.name"), a.get("gen_ai.tool.call.arguments")
        result, call_id = a.get("gen_ai.tool.call.result"), a.get("gen_ai.tool.call.id")
    else:
        return None
    if not isinstance(name, str) or not name:
        raise InputError(path, "a tool span needs gen_ai.tool.name", f"{span.where}.attributes")
    return ToolSpan(
        name=name,
        arguments=None if args is None else _unwrap_arguments(args),
        result=None if result is None else _unwrap_result(result),
        call_id=str(call_id) if call_id else None,
        start=span.start,
        where=span.where,
    )


def chat_span(span: Span, path: Path) -> ChatSpan | None:
    """The tool calls and input messages a chat span records, or ``None``."""
    a = span.attrs
    chat = ChatSpan(span.start, span.where)
    where = f"{span.where}.attributes"
    if "gen_ai.output.messages" in a or "gen_ai.input.messages" in a:
        outputs = _json_list(a.get("gen_ai.output.messages"), path, where, "gen_ai.output.messages")
        for m, msg in enumerate(outputs):
            chat.calls.extend(_part_calls(msg, m, path, where))
        if "gen_ai.input.messages" in a:
            inputs = _json_list(a["gen_ai.input.messages"], path, where, "gen_ai.input.messages")
            chat.inputs = tuple(_canonical(m) for m in inputs)
            chat.told = list(chat.inputs)
        if a.get("gen_ai.system_instructions") is not None:
            chat.told.append(_canonical(a["gen_ai.system_instructions"]))
        return chat
    flat = _flat_messages(a)
    if not flat:
        return None
    for m, msg in sorted(flat.get("output", {}).items()):
        for _, call in sorted(msg.get("calls", {}).items()):
            if not isinstance(call.get("name"), str):
                raise InputError(path, f"a tool call of output message {m} needs a name", where)
            args = call.get("arguments")
            chat.calls.append(ChatCall(call["name"], _opt_text(args), _opt(call.get("id")), m))
    inputs = [msg for _, msg in sorted(flat.get("input", {}).items())]
    if inputs:
        chat.inputs = tuple(_canonical(m) for m in inputs)
        chat.told = list(chat.inputs)
    return chat


def _flat_messages(a: dict[str, Any]) -> dict[str, dict[int, dict[str, Any]]]:
    """OpenInference's and traceloop's flattened messages, by side and index."""
    out: dict[str, dict[int, dict[str, Any]]] = {}
    for key, value in a.items():
        match = _FLAT.match(key)
        if match is None:
            continue
        side = "input" if (match[1] or match[2]) in ("input", "prompt") else "output"
        msg = out.setdefault(side, {}).setdefault(int(match[3]), {})
        rest = match[4]
        call = _FLAT_CALL.match(rest)
        if call is not None:
            msg.setdefault("calls", {}).setdefault(int(call[1]), {})[call[2]] = value
        else:
            msg[rest.removeprefix("message.")] = value
    return out


def _json_list(raw: Any, path: Path, where: str, key: str) -> list[Any]:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except (ValueError, RecursionError):
            raise InputError(path, f"{key} is not JSON", where) from None
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise InputError(path, f"{key} must be a list of messages", where)
    return raw


def _part_calls(msg: Any, m: int, path: Path, where: str) -> list[ChatCall]:
    parts = msg.get("parts") if isinstance(msg, dict) else None
    calls = []
    for part in parts if isinstance(parts, list) else []:
        if not isinstance(part, dict) or part.get("type") != "tool_call":
            continue
        name = part.get("name")
        if not isinstance(name, str):
            raise InputError(path, "a tool_call part needs a name", where)
        calls.append(ChatCall(name, _opt_text(part.get("arguments")), _opt(part.get("id")), m))
    return calls


def _canonical(msg: Any) -> str:
    try:
        return json.dumps(msg, sort_keys=True, default=str)
    except (ValueError, RecursionError):
        return "\0unreadable"  # nests too deep to write: compared as one value


def _text(value: Any) -> str:
    """Arguments as the agent sent them: JSON text."""
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _opt_text(value: Any) -> str | None:
    return None if value is None else _text(value)


def _opt(value: Any) -> str | None:
    return str(value) if value else None


def _unwrap_arguments(value: Any) -> str:
    """Arguments, with LangChain's callback wrapper taken off."""
    obj = _maybe_json(value)
    if isinstance(obj, dict) and "input_str" in obj and "inputs" in obj:
        inputs = obj["inputs"]
        return _text(inputs) if isinstance(inputs, dict) else _text(obj["input_str"])
    return _text(value)


def _unwrap_result(value: Any) -> str:
    """A tool's result, with LangChain's wrappers of its ``ToolMessage`` taken off:
    traceloop's ``{"output": {"kwargs": {"content": ...}}}``, OpenInference's
    ``{"type": "tool", "data": {"content": ...}}``."""
    obj = _maybe_json(value)
    if isinstance(obj, dict):
        out = obj.get("output", obj)
        for key in ("kwargs", "data"):
            inner = out.get(key) if isinstance(out, dict) else None
            if isinstance(inner, dict) and isinstance(inner.get("content"), str):
                return str(inner["content"])
    return value if isinstance(value, str) else _text(value)


def _maybe_json(value: Any) -> Any:
    if isinstance(value, str) and value.startswith("{"):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return value
    return value
