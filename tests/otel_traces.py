"""OTLP JSON traces made with the OpenTelemetry SDK, under the GenAI conventions, for tests."""

from __future__ import annotations

import json
from typing import Any

from agentproc.workflow import Scenario, Toolkit, build_workflow


def _provider() -> tuple[Any, Any]:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "shop-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider.get_tracer("tests"), exporter


def _otlp(exporter: Any) -> dict[str, Any]:
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    return MessageToDict(encode_spans(exporter.get_finished_spans()))


def tool_span_traces(
    scenario: Scenario, episodes: list[list[tuple[str, Any]]], agent: str = "my-agent"
) -> dict[str, Any]:
    """One trace per episode: an ``invoke_agent`` span over one ``execute_tool`` span per
    call, whose result is what the mock tools answer."""
    tracer, exporter = _provider()
    for calls in episodes:
        toolkit = Toolkit(build_workflow(scenario), "observe")
        root = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent}
        with tracer.start_as_current_span(f"invoke_agent {agent}", attributes=root):
            for i, (name, args) in enumerate(calls):
                text = args if isinstance(args, str) else json.dumps(args)
                attrs = {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": name,
                    "gen_ai.tool.call.id": f"call_{i}",
                    "gen_ai.tool.call.arguments": text,
                }
                with tracer.start_as_current_span(f"execute_tool {name}", attributes=attrs) as s:
                    s.set_attribute("gen_ai.tool.call.result", toolkit.call(name, text).result)
    return _otlp(exporter)


def chat_message_traces(scenario: Scenario, turns: list[list[tuple[str, Any]]]) -> dict[str, Any]:
    """One trace whose chat spans hold the model's tool calls (one turn: one message) in
    ``gen_ai.output.messages``, with no tool span."""
    tracer, exporter = _provider()
    with tracer.start_as_current_span("invoke_agent", attributes={"gen_ai.agent.name": "chat"}):
        for turn in turns:
            parts = [
                {"type": "tool_call", "id": f"c{i}", "name": name, "arguments": args}
                for i, (name, args) in enumerate(turn)
            ]
            message = [{"role": "assistant", "parts": parts}]
            attrs = {
                "gen_ai.operation.name": "chat",
                "gen_ai.output.messages": json.dumps(message),
            }
            with tracer.start_as_current_span("chat model", attributes=attrs):
                pass
    return _otlp(exporter)


def spans_without_tools() -> dict[str, Any]:
    """A trace of one chat span and nothing else."""
    tracer, exporter = _provider()
    with tracer.start_as_current_span("chat", attributes={"gen_ai.operation.name": "chat"}):
        pass
    return _otlp(exporter)
