"""Traces in: the tool calls of each conversation of an OTLP JSON file, one episode each.

The spans are read by :mod:`~agentproc.integrations.otlp_json` (one request, or JSON
Lines of them), and what each producer records of a call by
:mod:`~agentproc.integrations.otel_producers`. Within one trace:

- when chat spans record the tool calls the model asked for, those are the calls (the
  record that holds the arguments as the model sent them: a framework's tool span may
  hold its own wrapper of them), the calls of one output message being one batch (one
  message of the agent's, for ``--order dependency``); a tool span's result is matched
  to its call by call id, else by name in order;
- otherwise the tool spans are the calls, in the order they started, each a message of
  its own (a tool span says nothing of the message that asked for it).

Instrumentations of a client library (the OpenAI client under
``opentelemetry-instrumentation-openai-v2`` or traceloop's) make each chat call its own
trace unless the app opens a span around the conversation. Traces are joined into one
conversation when they share ``gen_ai.conversation.id`` (or OpenInference's
``session.id``), or when the input messages of a trace's first chat call start with all
the input messages of another's last one (the conversation so far: the longest such
prefix wins, the latest on a tie).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agentproc.errors import InputError
from agentproc.integrations.otel_producers import (
    CONVERSATION_KEYS,
    ChatSpan,
    ToolSpan,
    chat_span,
    tool_span,
)
from agentproc.integrations.otlp_json import read_spans

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
    """The tool calls of one conversation (a trace, or traces joined), in order."""

    trace_id: str
    agent: str
    calls: list[TraceCall] = field(default_factory=list)
    scenario_id: str | None = None
    """The trace's ``agentproc.scenario_id``, when it names one."""
    told: dict[str, None] = field(default_factory=dict)
    """What its chat spans recorded the agent was told (each input message and system
    instruction as JSON text; a dict for a set in order)."""
    conversation: str | None = None
    first_inputs: tuple[str, ...] | None = None
    last_inputs: tuple[str, ...] | None = None
    start: int = 0

    @property
    def batches(self) -> list[int]:
        """How many calls each of the agent's messages held, in order."""
        return [len(calls) for calls in self.messages()]

    def messages(self) -> list[list[TraceCall]]:
        """The calls of each of the agent's messages, in order."""
        return [list(calls) for _, calls in itertools.groupby(self.calls, key=lambda c: c.batch)]


@dataclass
class _Spans:
    trace: Trace
    tools: list[ToolSpan] = field(default_factory=list)
    chats: list[ChatSpan] = field(default_factory=list)


def read_traces(path: Path) -> list[Trace]:
    """The conversations of an OTLP JSON file that hold tool calls, each an episode.

    Raises:
        InputError: the file is not OTLP JSON (nor JSON Lines of it), a value is
            malformed, a tool span lacks its name or arguments, or no trace holds a call.
    """
    found: dict[str, _Spans] = {}
    for span in read_spans(path):
        agent = str(span.resource.get("service.name") or DEFAULT_AGENT)
        acc = found.setdefault(span.trace_id, _Spans(Trace(span.trace_id, agent, start=span.start)))
        trace, a = acc.trace, span.attrs
        trace.start = min(trace.start, span.start)
        if a.get("gen_ai.agent.name"):
            trace.agent = str(a["gen_ai.agent.name"])
        if a.get("agentproc.scenario_id") is not None:
            trace.scenario_id = str(a["agentproc.scenario_id"])
        for key in CONVERSATION_KEYS:
            if a.get(key):
                trace.conversation = str(a[key])
        tool = tool_span(span, path)
        if tool is not None:
            acc.tools.append(tool)
            continue
        chat = chat_span(span, path)
        if chat is not None:
            acc.chats.append(chat)
    traces = join_conversations([_calls(acc, path) for acc in found.values()])
    kept = [t for t in traces if t.calls]
    if not kept:
        raise InputError(
            path,
            "holds no tool call: no tool span (gen_ai.operation.name = execute_tool, or an "
            "OpenInference TOOL span), and no tool call in any chat span's output messages "
            "(turn on the instrumentation's content capture)",
            "resourceSpans",
        )
    return kept


def _calls(acc: _Spans, path: Path) -> Trace:
    """The trace with its calls: the chat spans' when they hold any, else the tool spans'."""
    trace = acc.trace
    chats = sorted(acc.chats, key=lambda c: c.start)
    tools = sorted(acc.tools, key=lambda t: t.start)
    for chat in chats:
        trace.told.update(dict.fromkeys(chat.told))
    with_inputs = [c.inputs for c in chats if c.inputs is not None]
    if with_inputs:
        trace.first_inputs, trace.last_inputs = with_inputs[0], with_inputs[-1]
    if any(chat.calls for chat in chats):
        matched = _matcher(tools)
        for chat in chats:
            for call in chat.calls:
                tool = matched(call.name, call.call_id)
                arguments = call.arguments
                if arguments is None:  # the chat span left them out: the tool span's, if any
                    arguments = tool.arguments if tool and tool.arguments is not None else "{}"
                batch = f"{chat.where}:{call.message}"
                result = tool.result if tool else None
                trace.calls.append(TraceCall(call.name, arguments, result, chat.start, batch))
        return trace
    for tool in tools:
        if tool.arguments is None:
            raise InputError(
                path,
                f"tool span {tool.name!r} has no gen_ai.tool.call.arguments (the "
                "instrumentation must record tool call content)",
                f"{tool.where}.attributes",
            )
        trace.calls.append(
            TraceCall(tool.name, tool.arguments, tool.result, tool.start, tool.where)
        )
    return trace


def _matcher(tools: list[ToolSpan]) -> Callable[[str, str | None], ToolSpan | None]:
    """A lookup of the tool span of a chat call: by call id, else the next unclaimed tool
    span of its name."""
    by_id = {t.call_id: t for t in tools if t.call_id}
    unclaimed = list(tools)

    def match(name: str, call_id: str | None) -> ToolSpan | None:
        tool = by_id.get(call_id) if call_id else None
        if tool is None:
            tool = next((t for t in unclaimed if t.name == name and not t.call_id), None)
        if tool is not None and tool in unclaimed:
            unclaimed.remove(tool)
        return tool

    return match


def join_conversations(traces: list[Trace]) -> list[Trace]:
    """Traces of one conversation joined into one, in the order they started (see the
    module's docstring for the rule)."""
    out: list[Trace] = []
    by_conversation: dict[str, Trace] = {}
    for trace in sorted(traces, key=lambda t: t.start):
        into = by_conversation.get(trace.conversation) if trace.conversation else None
        if into is None and trace.conversation is None:
            into = _continued(out, trace)
        if into is None:
            out.append(trace)
            if trace.conversation:
                by_conversation[trace.conversation] = trace
            continue
        into.calls.extend(trace.calls)
        into.told.update(trace.told)
        into.last_inputs = trace.last_inputs or into.last_inputs
        into.scenario_id = into.scenario_id or trace.scenario_id
    return out


def _continued(earlier: list[Trace], trace: Trace) -> Trace | None:
    first = trace.first_inputs
    if first is None:
        return None
    best: Trace | None = None
    for cand in earlier:
        tail = cand.last_inputs
        if cand.conversation or tail is None or len(tail) >= len(first):
            continue
        if first[: len(tail)] == tail and (
            best is None or len(tail) >= len(best.last_inputs or ())
        ):
            best = cand
    return best
