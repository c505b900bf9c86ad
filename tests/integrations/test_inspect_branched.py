"""The Inspect task on a branched workflow's suite (format 2): ``inspect eval`` as a user
types it, against a scripted OpenAI-compatible endpoint that plays each instance's calls
(its path faithfully, the wrong branch on the base path, an exit answered at once, one
message a batch of two calls); each sample is scored with the labels ``replay`` gives on
the calls its transcript holds, and with the labels ``run`` writes for the same calls
from the same endpoint."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import cli

from agentproc.agents.demo import ChatServer
from agentproc.analysis import replay_calls
from agentproc.runs import EpisodeSession, text_of
from agentproc.workflow import Scenario, build_workflow, load_scenarios

pytest.importorskip("inspect_ai")
from inspect_ai.log import read_eval_log

ROOT = Path(__file__).resolve().parents[2]
REFUND = ROOT / "scenarios" / "workflows" / "refund_approval.toml"
BRANCH = "manager_approval"
"""The conditional step the base path's instance runs although its condition fails."""
EXIT = "exit:outside_window"
"""The path of an instance whose exit fires."""
BATCHED = "damage_credit+manager_approval"
"""The path whose instance sends its first two calls (of the inputs alone) in one message."""

Message = list[tuple[str, dict[str, Any]]]
"""The calls of one assistant message."""


@pytest.fixture
def suite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    out = tmp_path / "refunds"
    argv = ("generate", "--workflow", REFUND, "--count", 5, "--balance", "paths", "--out", out)
    code, _, err = cli(capsys, *argv)
    assert code == 0, err
    return out


def inspect_env(tmp_path: Path) -> dict[str, str]:
    """This checkout's agentproc, with the task's entry point as an install declares it
    (as in ``test_inspect_workflow``)."""
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


def script(scenario: Scenario) -> list[Message]:
    """The messages the endpoint sends on ``scenario``: the path's calls one a message
    (the faithful trace, an exit's being its answer alone), but the wrong branch on the
    base path and a batch of the first two calls on :data:`BATCHED`."""
    assert scenario.path is not None
    calls = build_workflow(scenario).expected_calls()
    if scenario.path.name == BATCHED:
        return [calls[:2], *([c] for c in calls[2:])]
    if scenario.path.name == "base":
        at = next(i for i, (name, _) in enumerate(calls) if name == "check_approval") + 1
        step = next(s for s in scenario.steps if s.expected_call.name == BRANCH)
        calls = [*calls[:at], (BRANCH, dict(step.expected_call.arguments)), *calls[at:]]
    return [[c] for c in calls]


def first_user_text(messages: list[dict[str, Any]]) -> str:
    return next(text_of(m.get("content")) for m in messages if m.get("role") == "user")


def scripted_endpoint(scenarios: list[Scenario]) -> ChatServer:
    """An endpoint that answers each conversation with its scenario's :func:`script`, one
    message per assistant turn already taken (no state: a retried request gets the same
    reply), then ``Done.``."""
    by_prompt = {
        first_user_text(EpisodeSession(s, "scripted").messages): script(s) for s in scenarios
    }

    def plan(body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        planned = by_prompt[first_user_text(messages)]
        turn = sum(1 for m in messages if m.get("role") == "assistant" and m.get("tool_calls"))
        if turn >= len(planned):
            return {"content": "Done."}
        return {"tool_calls": [{"name": n, "arguments": a} for n, a in planned[turn]]}

    return ChatServer(plan, model="scripted")


def run_lines(path: Path) -> dict[str, dict[str, Any]]:
    """The run file's records as ``run`` wrote them, by scenario id."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return {rec["scenario_id"]: rec for rec in map(json.loads, lines)}


def test_inspect_eval_on_a_branched_suite_scores_as_replay_and_run_do(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
):
    scenarios = {s.id: s for s in load_scenarios(suite)}
    paths = {i: s.path.name for i, s in scenarios.items() if s.path is not None}
    assert {"base", EXIT, BATCHED} <= set(paths.values()) and len(paths) == 5
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    run = tmp_path / "run.jsonl"
    with scripted_endpoint(list(scenarios.values())) as endpoint:
        done = subprocess.run(
            [
                str(Path(sys.executable).parent / "inspect"), "eval", "agentproc/agentproc_task",
                "-T", f"suite={suite}", "--model", "openai-api/scripted/scripted",
                "-M", "api_key=none", "--model-base-url", endpoint.base_url,
                "--log-dir", str(tmp_path / "logs"), "--display", "plain",
            ],
            env=inspect_env(tmp_path), cwd=tmp_path, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        argv = ("run", suite, "--agent", "openai:scripted", "--base-url", endpoint.base_url)
        code, _, err = cli(capsys, *argv, "--out", run)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert code == 0, err
    (path,) = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(path))
    assert log.status == "success" and log.samples is not None
    assert sorted(str(s.id) for s in log.samples) == sorted(scenarios)
    written = run_lines(run)
    assert sorted(written) == sorted(scenarios)
    scores: dict[str, Any] = {}
    for sample in log.samples:
        scenario = scenarios[str(sample.id)]
        planned = script(scenario)
        calls, batches = transcript_calls(sample)
        parsed = [(n, json.loads(a)) for n, a in calls]
        assert parsed == [c for m in planned for c in m]
        assert batches == [len(m) for m in planned]
        expected = replay_calls(scenario, calls, batches=batches)
        score = sample.scores["monitor"]  # type: ignore[index]
        assert score.metadata is not None
        meta: dict[str, Any] = score.metadata
        labels = [lab.to_json() for lab in expected.labels]
        assert meta["labels"] == labels
        assert meta["verdict"] == score.explanation == expected.metrics["verdict"]
        ran = written[scenario.id]  # ``run`` on the same calls from the same endpoint
        assert [(c[0], json.loads(c[1])) for c in ran["calls"]] == parsed
        assert ran["labels"] == labels and ran["verdict"] == expected.metrics["verdict"]
        for key in ("path", "path_correct", "exit_correct", "executed_steps", "total_steps"):
            assert meta["metrics"][key] == ran["metrics"][key], key
        scores[paths[scenario.id]] = meta
    for name, meta in scores.items():
        assert meta["metrics"]["path"] == name
        if name != "base":  # the faithful paths, the exit's and the batched one's among them
            assert meta["verdict"] == "faithful" and meta["labels"] == [], name
            assert meta["metrics"]["path_correct"] and meta["metrics"]["exit_correct"], name
    assert scores[EXIT]["metrics"]["total_steps"] == 0
    wrong = scores["base"]
    assert [(lab["kind"], lab["reason"], lab["cause"]) for lab in wrong["labels"]] == [
        ("unneeded_step", "condition", "unsupported")
    ]
    assert wrong["verdict"] == "unfaithful_correct" and not wrong["metrics"]["path_correct"]
