"""``import-traces`` of traces produced live: each instrumentation package, where it is
installed, traces an app (the OpenAI client, or LangGraph over LangChain's ChatOpenAI)
through a conversation with the demo endpoint started here on 127.0.0.1, by
``record_otel_fixtures.py``; the import gives what the recorded fixture gives.

Skipped where a producer's packages are not importable (the project's own test extra
does not install them); run in a venv of ``[otel]`` with the packages the recording
script's docstring lists.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import cli, records

HERE = Path(__file__).parent
RECORDER = HERE / "record_otel_fixtures.py"
FIXTURES = HERE / "fixtures" / "otel"
NEEDS = {
    "openai-v2-no-parent": ["openai", "opentelemetry.instrumentation.openai_v2"],
    "openai-v2-parent": ["openai", "opentelemetry.instrumentation.openai_v2"],
    "traceloop-openai": ["openai", "opentelemetry.instrumentation.openai"],
    "traceloop-langchain": [
        "langchain_openai",
        "langgraph.prebuilt",
        "opentelemetry.instrumentation.langchain",
    ],
    "openinference-openai": ["openai", "openinference.instrumentation.openai"],
    "openinference-langchain": [
        "langchain_openai",
        "langgraph.prebuilt",
        "openinference.instrumentation.langchain",
    ],
    "collector-openai-v2": [
        "openai",
        "opentelemetry.instrumentation.openai_v2",
        "opentelemetry.exporter.otlp.proto.http.trace_exporter",
    ],
}
"""Each producer and the modules it needs."""


def importable(modules: list[str]) -> str | None:
    """Why one of ``modules`` cannot be imported, or ``None``."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError as exc:  # not installed, or installed broken
            return f"{name}: {exc}"
    return None


def episodes(capsys: Any, trace: Path, run: Path) -> list[dict[str, Any]]:
    scenario = FIXTURES / "scenario.json"
    code, _, err = cli(capsys, "import-traces", trace, "--scenario", scenario, "--out", run)
    assert code == 0, err
    return records(run)


def essentials(eps: list[dict[str, Any]]) -> list[Any]:
    """What a reader of the trace sees: the calls, the labels, the verdict, the trial."""
    return [
        (
            [(c["name"], json.loads(c["arguments"]), c["step"]) for c in ep["calls"]],
            ep["labels"],
            ep["verdict"],
            ep["trial"],
        )
        for ep in eps
    ]


@pytest.mark.parametrize("producer", NEEDS)
def test_a_live_trace_imports_as_its_recorded_fixture_does(capsys, tmp_path: Path, producer: str):
    missing = importable(NEEDS[producer])
    if missing is not None:
        pytest.skip(f"not importable here: {missing}")
    from agentproc.agents.demo import demo_server

    env = os.environ | {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    with demo_server("skipper", seed=0) as srv:
        argv = ["--producer", producer, "--base-url", srv.base_url, "--out", str(tmp_path)]
        done = subprocess.run(
            [sys.executable, str(RECORDER), *argv],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    name = f"{producer}.jsonl" if producer.startswith("collector-") else f"{producer}.json"
    live = episodes(capsys, tmp_path / name, tmp_path / "live.jsonl")
    recorded = episodes(capsys, FIXTURES / name, tmp_path / "recorded.jsonl")
    assert essentials(live) == essentials(recorded)
    assert live[0]["verdict"] == "unfaithful_correct"
