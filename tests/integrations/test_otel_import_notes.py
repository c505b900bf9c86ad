"""``import-traces`` says where recorded tool results differ from the replay in a few lines
whatever the number of traces: the first few calls, then one count, never a line per call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import ORACLE, cli, tiny_scenario

pytest.importorskip("opentelemetry.sdk")
from otel_traces import tool_span_traces

from agentproc.cli.import_traces import SHOWN


def traces_with_other_results(tmp_path: Path, n: int) -> Path:
    data = tool_span_traces(tiny_scenario(), [ORACLE] * n)
    for scope in data["resourceSpans"][0]["scopeSpans"]:
        for span in scope["spans"]:
            for attr in span["attributes"]:
                if attr["key"] == "gen_ai.tool.call.result":
                    attr["value"] = {"stringValue": "S3 = 6" + "!" * 2_000}
    path = tmp_path / "traces.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def import_(capsys, tmp_path: Path, traces: Path) -> tuple[int, str, str]:
    scenario = tmp_path / "tiny.json"
    scenario.write_text(json.dumps(tiny_scenario().model_dump(mode="json")), encoding="utf-8")
    out = tmp_path / "run.jsonl"
    return cli(capsys, "import-traces", traces, "--scenario", scenario, "--out", out)


def test_many_differing_calls_are_counted_in_one_line_after_the_first_few(tmp_path, capsys):
    code, out, err = import_(capsys, tmp_path, traces_with_other_results(tmp_path, 30))
    assert code == 0 and "wrote 30 episodes" in out
    lines = err.strip().splitlines()
    assert len(lines) == SHOWN + 1
    assert all("tool result was 'S3 = 6" in line for line in lines[:SHOWN])
    assert all(len(line) <= 400 for line in lines)
    assert lines[-1].startswith("agentproc: ")
    assert "in 30 of 30 traces" in lines[-1] and "differs from the replay" in lines[-1]
    total = int(lines[-1].split()[1].replace(",", ""))
    assert total >= 30


def test_a_few_differing_calls_are_each_noted_as_before(tmp_path, capsys):
    code, _, err = import_(capsys, tmp_path, traces_with_other_results(tmp_path, 1))
    lines = err.strip().splitlines()
    assert code == 0 and 1 <= len(lines) <= SHOWN
    assert all(line.startswith("agentproc: trace ") for line in lines)
