"""``agentproc serve-mcp`` on a branched workflow's suite (format 2), driven by the MCP
SDK's stdio client: the client is offered the typed tools (a category's ``enum``, a
boolean, a parameter a conditional step defines left optional), and the run file holds
the labels ``replay`` gives on the same calls: a faithful path, a wrong branch taken
(``unneeded_step``), an exit answered at once (faithful, ``exit_correct``)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import cli, records
from mcp_script import server_env, wire

from agentproc.analysis import replay_calls
from agentproc.workflow import Scenario, build_workflow, load_scenarios

mcp = pytest.importorskip("mcp")
from mcp import ClientSession, StdioServerParameters, types  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
REFUND = ROOT / "scenarios" / "workflows" / "refund_approval.toml"
CLIENT = types.Implementation(name="branch-client", version="1.0")
BRANCH = "manager_approval"
"""The conditional step the wrong-branch instance runs although its condition fails."""
EXIT = "exit:outside_window"
"""The path of an instance whose exit fires (the return is declined at the door)."""

Script = list[tuple[str, dict[str, Any]]]


@pytest.fixture
def suite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    out = tmp_path / "refunds"
    argv = ("generate", "--workflow", REFUND, "--count", 5, "--balance", "paths", "--out", out)
    code, _, err = cli(capsys, *argv)
    assert code == 0, err
    return out


def wrong_branch(scenario: Scenario) -> Script:
    """The path's calls with the manager's approval run after the check that says it is
    not needed (its arguments the right values)."""
    calls = build_workflow(scenario).expected_calls()
    at = next(i for i, (name, _) in enumerate(calls) if name == "check_approval") + 1
    step = next(s for s in scenario.steps if s.expected_call.name == BRANCH)
    return [*calls[:at], (BRANCH, dict(step.expected_call.arguments)), *calls[at:]]


def script(scenario: Scenario) -> Script:
    """What the client calls on ``scenario``: the wrong branch on the base path, the
    faithful path on every other (an exit's: the finish call with the exit's answer)."""
    assert scenario.path is not None
    if scenario.path.name == "base":
        return wrong_branch(scenario)
    return build_workflow(scenario).expected_calls()


def lines(run: Path) -> list[dict[str, Any]]:
    """The run file's records as the server wrote them (calls compact: name, arguments,
    step, refusal, value)."""
    return [json.loads(line) for line in run.read_text(encoding="utf-8").splitlines()]


async def drive(session: Any, calls: list[Script]) -> dict[str, Any]:
    seen: dict[str, Any] = {"errors": []}
    tools = await session.list_tools()
    seen["schemas"] = {t.name: wire(t)["inputSchema"] for t in tools.tools}
    seen["prompt"] = (await session.get_prompt("procedure")).messages[0].content.text
    for i, each in enumerate(calls):
        for name, args in each:
            seen["errors"].append(wire(await session.call_tool(name, args))["isError"])
        moved = await session.call_tool("next_scenario", {})
        seen[f"moved{i}"] = moved.content[0].text
    return seen


async def test_a_branched_suite_over_stdio_gets_typed_tools_and_the_labels_replay_gives(
    suite: Path, tmp_path: Path
):
    scenarios = list(load_scenarios(suite))
    paths = [s.path.name for s in scenarios if s.path is not None]
    assert {"base", EXIT, BRANCH} <= set(paths) and len(paths) == len(scenarios) == 5
    calls, run = [script(s) for s in scenarios], tmp_path / "run.jsonl"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "agentproc", "serve-mcp", str(suite), "--out", str(run)],
        env=server_env(),
    )
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, client_info=CLIENT) as session,
    ):
        await session.initialize()
        seen = await drive(session, calls)
    steps = [s.expected_call.name for s in scenarios[0].steps]
    assert list(seen["schemas"]) == [*steps, "submit_refund", "next_scenario"]
    fee = seen["schemas"]["restocking_fee"]["properties"]["item_condition"]
    assert fee["type"] == "string" and sorted(fee["enum"]) == ["damaged", "opened", "unopened"]
    paid = seen["schemas"]["refund_paid"]
    assert paid["properties"]["needs_manager"]["type"] == "boolean"
    assert "approved" in paid["properties"] and "approved" not in paid["required"]
    assert "needs_manager" in paid["required"]
    refund = seen["schemas"]["refund_amount"]
    assert "credit" in refund["properties"] and "credit" not in refund["required"]
    assert "stop here: call submit_refund with 0" in seen["prompt"]
    assert not any(seen["errors"])  # every call named a tool with arguments of its schema
    assert seen["moved4"] == "The run is complete: 5 episodes written."
    for _ in range(100):  # the server writes its last line as the client leaves
        if run.exists() and len(lines(run)) == 5:
            break
        time.sleep(0.05)
    eps = lines(run)
    assert [e["scenario_id"] for e in eps] == [s.id for s in scenarios]
    assert {e["agent"] for e in eps} == {"branch-client"}
    for ep, scenario, each in zip(eps, scenarios, calls, strict=True):
        text = [(n, json.dumps(a, separators=(",", ":"))) for n, a in each]
        expected = replay_calls(scenario, text)
        assert ep["labels"] == [lab.to_json() for lab in expected.labels]
        assert ep["verdict"] == expected.metrics["verdict"]
        assert ep["scenario_ref"]["suite"] == str(suite.resolve())
        assert ep["metrics"]["path"] == paths[scenarios.index(scenario)]
    by_path = dict(zip(paths, eps, strict=True))
    for name in set(paths) - {"base"}:  # the faithful paths, the exit's among them
        ep = by_path[name]
        assert ep["verdict"] == "faithful" and ep["labels"] == [], name
        assert ep["metrics"]["path_correct"] is True, name
    wrong = by_path["base"]
    at = next(i for i, (name, _) in enumerate(calls[paths.index("base")]) if name == BRANCH)
    step = next(s.step for s in scenarios[0].steps if s.expected_call.name == BRANCH)
    unneeded = {"kind": "unneeded_step", "call_index": at, "step": step, "reason": "condition"}
    assert wrong["labels"] == [{**unneeded, "cause": "unsupported"}]  # its own wrong branch
    assert wrong["verdict"] == "unfaithful_correct"  # the right answer, a wrong branch run
    assert wrong["metrics"]["path_correct"] is False
    exit_ep = by_path[EXIT]
    assert exit_ep["metrics"]["exit_correct"] is True
    (declined,) = scenarios[paths.index(EXIT)].exits or []
    assert [(c[0], json.loads(c[1])) for c in exit_ep["calls"]] == [
        ("submit_refund", {"answer": declined.answer})  # the exit's answer, at once
    ]
    assert exit_ep["metrics"]["first_answer_correct"] and exit_ep["metrics"]["total_steps"] == 0
    read = records(run)  # the run file as its readers get it (it passes their checks)
    assert [e["labels"] for e in read] == [e["labels"] for e in eps]
    assert [[c["name"] for c in e["calls"]] for e in read] == [[n for n, _ in c] for c in calls]
    for command in ("replay", "relabel"):
        done = subprocess.run(
            [sys.executable, "-m", "agentproc", command, str(run)],
            env=server_env(),
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stdout + done.stderr
    assert "0 changed" in done.stdout
