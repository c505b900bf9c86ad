"""The Inspect task on a declared workflow's suite: ``inspect eval`` as a user types it,
against the demo endpoint (``agentproc serve-demo``); each sample is scored with the
labels ``replay`` gives on the calls its transcript holds, on the workflow's own tools."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import cli
from mcp_script import free_port, server_env, wait_listening

from agentproc.analysis import replay_calls
from agentproc.workflow import load_scenarios

pytest.importorskip("inspect_ai")
from inspect_ai.log import read_eval_log

ROOT = Path(__file__).resolve().parents[2]
INVOICE = ROOT / "scenarios" / "workflows" / "invoice_approval.toml"


@pytest.fixture
def suite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    out = tmp_path / "invoices"
    code, _, err = cli(capsys, "generate", "--workflow", INVOICE, "--count", 4, "--out", out)
    assert code == 0, err
    return out


def inspect_env(tmp_path: Path) -> dict[str, str]:
    """This checkout's agentproc, with the task's entry point as an install declares it."""
    dist = tmp_path / "site" / "agentproc_entry-0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: agentproc-entry\nVersion: 0\n")
    (dist / "entry_points.txt").write_text(
        "[inspect_ai]\nagentproc = agentproc._inspect_registry\n"
    )
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(dist.parent)]),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),  # no reply cached by an earlier run
        "COLUMNS": "100",
    }


def transcript_calls(sample: Any) -> tuple[list[tuple[str, str]], list[int]]:
    """The tool calls a sample's transcript holds, in order, and how many each message held."""
    calls: list[tuple[str, str]] = []
    batches: list[int] = []
    for message in sample.messages:
        if message.role == "assistant" and message.tool_calls:
            calls += [(c.function, json.dumps(c.arguments)) for c in message.tool_calls]
            batches.append(len(message.tool_calls))
    return calls, batches


def inspect_eval(suite: Path, tmp_path: Path, profile: str) -> Any:
    """``inspect eval`` of the task on ``suite`` against the demo endpoint's ``profile``:
    its log."""
    port = free_port()
    argv = ["serve-demo", "--profile", profile, "--port", str(port)]
    server = subprocess.Popen(
        [sys.executable, "-m", "agentproc", *argv],
        env=server_env(),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_listening(port, server)
        done = subprocess.run(
            [
                str(Path(sys.executable).parent / "inspect"), "eval", "agentproc/agentproc_task",
                "-T", f"suite={suite}", "--model", "openai-api/demo/demo", "-M", "api_key=none",
                "--model-base-url", f"http://127.0.0.1:{port}/v1",
                "--log-dir", str(tmp_path / "logs"), "--display", "plain",
            ],
            env=inspect_env(tmp_path), cwd=tmp_path, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
    finally:
        server.terminate()
        server.communicate(timeout=30)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (path,) = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(path))
    assert log.status == "success" and log.samples is not None
    return log


def test_inspect_eval_on_a_workflow_suite_scores_the_demo_endpoint_as_replay_does(
    suite: Path, tmp_path: Path
):
    log = inspect_eval(suite, tmp_path, "sloppy")
    scenarios = {s.id: s for s in load_scenarios(suite)}
    assert sorted(str(s.id) for s in log.samples) == sorted(scenarios)
    names: set[str] = set()
    for sample in log.samples:
        scenario = scenarios[str(sample.id)]
        calls, batches = transcript_calls(sample)
        names |= {name for name, _ in calls}
        expected = replay_calls(scenario, calls, batches=batches)
        score = sample.scores["monitor"]  # type: ignore[index]
        assert score.metadata["labels"] == [lab.to_json() for lab in expected.labels]
        assert score.metadata["verdict"] == score.explanation == expected.metrics["verdict"]
    tools = {s.expected_call.name for s in next(iter(scenarios.values())).steps}
    assert "submit_approval_figure" in names and len(names & tools) >= len(tools) - 2
    verdicts = [s.scores["monitor"].metadata["verdict"] for s in log.samples]  # type: ignore[index]
    labels = {
        lab["kind"]
        for s in log.samples
        for lab in s.scores["monitor"].metadata["labels"]  # type: ignore[index]
    }
    assert verdicts != ["faithful"] * len(verdicts) and labels  # the sloppy profile's slips


def test_inspect_eval_scores_a_multi_field_answer_field_by_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    toml = ROOT / "scenarios" / "workflows" / "claim_settlement.toml"
    suite = tmp_path / "claims"
    argv = ["generate", "--workflow", toml, "--count", 5, "--balance", "paths", "--out", suite]
    assert cli(capsys, *argv)[0] == 0
    log = inspect_eval(suite, tmp_path, "faithful")
    scenarios = {s.id: s for s in load_scenarios(suite)}
    for sample in log.samples:
        fields = scenarios[str(sample.id)].answer_fields
        assert json.loads(str(sample.target)) == fields
        score = sample.scores["monitor"]  # type: ignore[index]
        assert score.metadata["verdict"] == "faithful" and score.metadata["labels"] == []
        assert json.loads(str(score.answer)) == fields
