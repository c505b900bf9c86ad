"""The embedded model end to end through the CLI, and the recorded run that ships with the repo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import records

from agentproc.agents.local import check_installed
from agentproc.cli import main
from agentproc.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ROOT / "scenarios" / "recorded" / "local-smollm2.jsonl"
PINNED = ROOT / "scenarios" / "pinned" / "n5-L3-r1_10-mixed-decimal-0000.json"

try:
    check_installed()
except ConfigError as e:
    pytest.skip(str(e), allow_module_level=True)


def test_local_is_the_default_agent_and_runs_offline_and_repeatably(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    runs = []
    for name in ("a", "b"):
        out = tmp_path / f"{name}.jsonl"
        assert main(["run", str(PINNED), "--budget", "4", "--out", str(out)]) == 0
        runs.append(records(out)[0])
    rec = runs[0]
    assert rec["agent"] == "local" and rec["stop_reason"] in {"answer", "no_tool_call", "budget"}
    offered = {t["function"]["name"] for t in json.loads(PINNED.read_text())["tools"]}
    assert rec["calls"] and all(c["name"] in offered for c in rec["calls"])  # constrained decoding
    assert all(isinstance(c["arguments"], str) for c in rec["calls"])
    assert rec["usage"]["output_tokens"] > 0 and len(rec["model_calls"]) >= len(rec["calls"])
    roles = [m["role"] for m in rec["messages"]]
    assert roles[:3] == ["system", "user", "assistant"] and "tool" in roles
    assert [(c["name"], c["arguments"]) for c in runs[1]["calls"]] == [
        (c["name"], c["arguments"]) for c in rec["calls"]
    ]  # greedy decoding with a fixed seed: the same run twice


def test_recorded_local_run_replays_without_differences(capsys):
    assert main(["replay", str(RECORDED)]) == 0
    assert "0 differ from the recording" in capsys.readouterr().out
    assert main(["report", str(RECORDED), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (
        report["episodes"] == len(RECORDED.read_text().splitlines()) and "local" in report["agents"]
    )


@pytest.mark.parametrize(
    "workflow",
    [
        "business_verification",
        "claim_settlement",
        "order_fulfilment",
        "return_window",
        "warehouse_inspection",
    ],
)
def test_the_embedded_model_runs_a_look_up_workflow_without_error(
    tmp_path: Path, monkeypatch, workflow: str
):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    suite, out = tmp_path / "suite", tmp_path / "run.jsonl"
    toml = ROOT / "scenarios" / "workflows" / f"{workflow}.toml"
    assert main(["generate", "--workflow", str(toml), "--count", "1", "--out", str(suite)]) == 0
    assert main(["run", str(suite), "--agent", "local", "--budget", "4", "--out", str(out)]) == 0
    rec = records(out)[0]
    assert "error" not in rec and rec["stop_reason"] in {"answer", "no_tool_call", "budget"}
    line = json.loads((suite / "scenarios.jsonl").read_text())
    offered = {s["expected_call"]["name"] for s in line["steps"]} | {line["finish"]["tool"]}
    assert rec["calls"] and all(c["name"] in offered for c in rec["calls"])
    assert rec["metrics"]["verdict"] in {"faithful", "unfaithful_correct", "wrong", "no_answer"}
