"""Record the OTLP fixtures of ``tests/integrations/fixtures/otel`` with the real
instrumentation packages: one conversation of the demo endpoint's ``skipper`` profile
(seed 0) through scenario ``n5-L1-r1_10-mixed-decimal-0002`` (it skips step 2), driven by
the real OpenAI client or LangChain, traced by each producer.

Run on demand, from the repository's root, in a venv of its own::

    python -m venv /tmp/otel-rec
    /tmp/otel-rec/bin/pip install -e ".[otel]" openai langchain-openai langgraph \\
        opentelemetry-instrumentation-openai-v2 opentelemetry-instrumentation-openai \\
        opentelemetry-instrumentation-langchain openinference-instrumentation-openai \\
        openinference-instrumentation-langchain opentelemetry-exporter-otlp-proto-http \\
        "opentelemetry-util-genai==1.1b0"
    PYTHONPATH=$PWD /tmp/otel-rec/bin/python tests/integrations/record_otel_fixtures.py

Recorded with opentelemetry-sdk 1.45.2, opentelemetry-instrumentation-openai-v2 2.4b0
with opentelemetry-util-genai 1.1b0 (under the newest, 1.3b0, openai-v2 2.4b0 does not
import: ``opentelemetry.util.genai.instruments`` is gone), traceloop's
opentelemetry-instrumentation-openai and -langchain 0.62.4,
openinference-instrumentation-openai 0.1.66 and -langchain 0.1.80,
opentelemetry-exporter-otlp-proto-http 1.45.2, openai 3.63.0, langchain-openai 1.8.1,
langchain-core 1.8.3, langgraph 1.2.24.

Each producer runs in a process of its own (instrumentors patch their library for good).
The in-memory exports are protobuf's JSON mapping of an ``ExportTraceServiceRequest`` (ids
in base64). ``collector-openai-v2.jsonl`` is what an OpenTelemetry Collector's file
exporter writes: the SDK's OTLP/HTTP exporter sends protobuf to a receiver started here on
127.0.0.1, which writes each request as one line of OTLP JSON (ids in hex, enums as
numbers).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent / "fixtures" / "otel"
SCENARIO_INDEX = 2
"""The suite's third procedure: with seed 0 the skipper leaves out its step 2."""
OTHER_INDEX = 0
"""A second scenario of the same suite, for the file of two scenarios."""
PRODUCERS = [
    "openai-v2-no-parent",
    "openai-v2-parent",
    "traceloop-openai",
    "traceloop-langchain",
    "openinference-openai",
    "openinference-langchain",
    "collector-openai-v2",
]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--producer", choices=PRODUCERS)
    p.add_argument("--base-url")
    p.add_argument("--out", type=Path, default=HERE)
    args = p.parse_args()
    if args.producer:
        record(args.producer, args.base_url, args.out)
        return
    record_all(args.out)


def record_all(out: Path) -> None:
    from agentproc.agents.demo import demo_server

    out.mkdir(parents=True, exist_ok=True)
    scenarios = suite()
    for name, index in (("scenario.json", SCENARIO_INDEX), ("other-scenario.json", OTHER_INDEX)):
        data = scenarios[index].model_dump(mode="json")
        (out / name).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    with demo_server("skipper", seed=0) as srv:
        for producer in PRODUCERS:
            argv = [sys.executable, __file__, "--producer", producer, "--base-url", srv.base_url]
            subprocess.run([*argv, "--out", str(out)], check=True)
            print(f"recorded {producer}")


def suite() -> list[Any]:
    """The scenarios of ``agentproc generate --steps 5 --lookback 1 --count 3`` (seed 0)."""
    import tempfile

    from agentproc.workflow import load_scenarios

    with tempfile.TemporaryDirectory() as tmp:
        argv = ["generate", "--steps", "5", "--lookback", "1", "--count", "3", "--out", tmp]
        subprocess.run([sys.executable, "-m", "agentproc", *argv], check=True, capture_output=True)
        return list(load_scenarios(Path(tmp)))


# --- one producer, in its own process -------------------------------------------------


def record(producer: str, base_url: str, out: Path) -> None:
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"
    os.environ["TRACELOOP_TRACE_CONTENT"] = "true"
    provider = TracerProvider(resource=Resource.create({"service.name": f"rec-{producer}"}))
    memory = InMemorySpanExporter()
    receiver = None
    if producer.startswith("collector-"):
        receiver = FileExporterReceiver(out / f"{producer}.jsonl")
        provider.add_span_processor(SimpleSpanProcessor(receiver.exporter()))
    else:
        provider.add_span_processor(SimpleSpanProcessor(memory))
    trace.set_tracer_provider(provider)
    INSTRUMENT[producer]()
    scenarios = suite()
    scenario = scenarios[SCENARIO_INDEX]
    if producer == "openai-v2-parent":
        tracer = trace.get_tracer("app")
        for s in (scenario, scenarios[OTHER_INDEX]):  # two conversations, two scenarios
            with tracer.start_as_current_span("invoke_agent app") as span:
                span.set_attribute("gen_ai.operation.name", "invoke_agent")
                chat_loop(s, base_url)
    elif "langchain" in producer:
        langgraph_agent(scenario, base_url)
    elif producer == "openai-v2-no-parent":
        chat_loop(scenario, base_url)
        chat_loop(scenario, base_url)  # a second trial, the same conversation again
    else:
        chat_loop(scenario, base_url)
    provider.shutdown()
    if receiver is not None:
        receiver.close()
    else:
        write_json(out / f"{producer}.json", memory.get_finished_spans())


def instrument_openai_v2() -> None:
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    OpenAIInstrumentor().instrument()


def instrument_traceloop_openai() -> None:
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    OpenAIInstrumentor().instrument()


def instrument_traceloop_langchain() -> None:
    from opentelemetry.instrumentation.langchain import LangchainInstrumentor

    LangchainInstrumentor().instrument()


def instrument_openinference_openai() -> None:
    from openinference.instrumentation.openai import OpenAIInstrumentor

    OpenAIInstrumentor().instrument()


def instrument_openinference_langchain() -> None:
    from openinference.instrumentation.langchain import LangChainInstrumentor

    LangChainInstrumentor().instrument()


INSTRUMENT: dict[str, Callable[[], None]] = {
    "openai-v2-no-parent": instrument_openai_v2,
    "openai-v2-parent": instrument_openai_v2,
    "traceloop-openai": instrument_traceloop_openai,
    "traceloop-langchain": instrument_traceloop_langchain,
    "openinference-openai": instrument_openinference_openai,
    "openinference-langchain": instrument_openinference_langchain,
    "collector-openai-v2": instrument_openai_v2,
}


def chat_loop(scenario: Any, base_url: str) -> None:
    """An app on the OpenAI client: call the model, run the tools it asks for, repeat."""
    from openai import OpenAI

    from agentproc.workflow import Toolkit, build_workflow, opening_messages

    client = OpenAI(base_url=base_url, api_key="not-needed")
    toolkit = Toolkit(build_workflow(scenario), "observe")
    messages: list[Any] = opening_messages(scenario)
    for _ in range(3 * len(scenario.steps)):
        reply = client.chat.completions.create(
            model="demo", messages=messages, tools=scenario.tools, temperature=0
        )
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return
        for call in message.tool_calls:
            result = toolkit.call(call.function.name, call.function.arguments).result
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})


def langgraph_agent(scenario: Any, base_url: str) -> None:
    """An app on LangChain: LangGraph's ReAct agent over ChatOpenAI and the scenario's
    tools as LangChain tools."""
    from langchain_core.tools import StructuredTool
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import create_react_agent

    from agentproc.workflow import Toolkit, build_workflow, opening_messages

    toolkit = Toolkit(build_workflow(scenario), "observe")

    def tool(spec: dict[str, Any]) -> StructuredTool:
        name = spec["function"]["name"]

        def run(**kwargs: Any) -> str:
            return str(toolkit.call(name, json.dumps(kwargs)).result)

        return StructuredTool(
            name=name,
            description=spec["function"]["description"],
            args_schema=spec["function"]["parameters"],
            func=run,
        )

    model = ChatOpenAI(model="demo", base_url=base_url, api_key="not-needed", temperature=0)
    agent = create_react_agent(model, [tool(t) for t in scenario.tools])
    opening = opening_messages(scenario)
    agent.invoke(
        {"messages": [(m["role"], m["content"]) for m in opening]},
        {"recursion_limit": 4 * len(scenario.steps)},
    )


def write_json(path: Path, spans: Any) -> None:
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    data = MessageToDict(encode_spans(spans))
    path.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")


class FileExporterReceiver:
    """An OTLP/HTTP receiver on 127.0.0.1 that writes each export request it gets as one
    line of OTLP JSON, as the Collector's file exporter does."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.write_text("", encoding="utf-8")
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.write(body)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.lock = threading.Lock()

    def exporter(self) -> Any:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter(endpoint=f"http://127.0.0.1:{self.server.server_port}/v1/traces")

    def write(self, body: bytes) -> None:
        from google.protobuf.json_format import MessageToDict
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )

        request = ExportTraceServiceRequest.FromString(body)
        data = hex_ids(MessageToDict(request, use_integers_for_enums=True))
        with self.lock, self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(data, separators=(",", ":")) + "\n")

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def hex_ids(obj: Any) -> Any:
    """OTLP JSON's ids: hex where protobuf's JSON mapping writes base64."""
    if isinstance(obj, dict):
        return {
            k: base64.b64decode(v).hex()
            if k in ("traceId", "spanId", "parentSpanId") and isinstance(v, str)
            else hex_ids(v)
            for k, v in obj.items()
        }
    if isinstance(obj, list):
        return [hex_ids(x) for x in obj]
    return obj


if __name__ == "__main__":
    main()
