"""``agentproc serve-mcp`` on a declared workflow's suite, driven by the MCP SDK's client:
the client is offered the workflow's own tools and prompt, and the run file holds the
labels ``replay`` gives on the same calls, its scenarios referred to in the suite."""

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
INVOICE = ROOT / "scenarios" / "workflows" / "invoice_approval.toml"
CLIENT = types.Implementation(name="workflow-client", version="1.0")
DEAD = "line_a_share"
"""A dead step of the invoice workflow (its output reaches no later step)."""


@pytest.fixture
def suite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    out = tmp_path / "invoices"
    code, _, err = cli(capsys, "generate", "--workflow", INVOICE, "--count", 2, "--out", out)
    assert code == 0, err
    return out


def scripts(scenarios: list[Scenario]) -> list[list[tuple[str, dict[str, Any]]]]:
    """The calls the client makes: the first instance faithfully; the second with the dead
    step skipped, a wrong number for the subtotal's second argument, and the answer."""
    first = build_workflow(scenarios[0]).expected_calls()
    second = [c for c in build_workflow(scenarios[1]).expected_calls() if c[0] != DEAD]
    name, args = next(c for c in second if c[0] == "subtotal")
    wrong = {**args, "amount_b": args["amount_b"] + 1}
    second = [(n, wrong if n == name else a) for n, a in second]
    return [first, second]


async def drive(session: Any, calls: list[list[tuple[str, dict[str, Any]]]]) -> dict[str, Any]:
    seen: dict[str, Any] = {"errors": []}
    tools = await session.list_tools()
    seen["tools"] = [t.name for t in tools.tools]
    seen["schema"] = next(wire(t)["inputSchema"] for t in tools.tools if t.name == "line_amount_a")
    seen["prompt"] = (await session.get_prompt("procedure")).messages[0].content.text
    for i, script in enumerate(calls):
        for name, args in script:
            seen["errors"].append(wire(await session.call_tool(name, args))["isError"])
        moved = await session.call_tool("next_scenario", {})
        seen[f"moved{i}"] = moved.content[0].text
    return seen


async def test_a_workflow_suite_over_stdio_gets_its_tools_and_the_labels_replay_gives(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    scenarios = list(load_scenarios(suite))
    calls, run = scripts(scenarios), tmp_path / "run.jsonl"
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
    assert seen["tools"] == [*steps, "submit_approval_figure", "next_scenario"]
    assert seen["schema"]["required"] == ["quantity_a", "unit_price_a"]
    assert "call submit_approval_figure with the value of approval_ratio" in seen["prompt"]
    assert not any(seen["errors"])  # every call named a tool with arguments of its schema
    assert seen["moved1"] == "The run is complete: 2 episodes written."
    for _ in range(100):  # the server writes its last line as the client leaves
        if run.exists() and len(records(run)) == 2:
            break
        time.sleep(0.05)
    eps = records(run)
    assert [e["scenario_id"] for e in eps] == [s.id for s in scenarios]
    assert {e["agent"] for e in eps} == {"workflow-client"}
    for ep, scenario, script in zip(eps, scenarios, calls, strict=True):
        text = [(n, json.dumps(a, separators=(",", ":"))) for n, a in script]
        assert ep["labels"] == [lab.to_json() for lab in replay_calls(scenario, text).labels]
        assert ep["scenario_ref"]["suite"] == str(suite.resolve())
    assert eps[0]["verdict"] == "faithful" and eps[0]["labels"] == []
    got = {(lab["kind"], lab.get("live"), lab.get("argument")) for lab in eps[1]["labels"]}
    assert ("skipped_step", False, None) in got
    assert ("wrong_argument", None, "amount_b") in got
    assert eps[1]["verdict"] == "unfaithful_correct"  # the right answer, a step skipped
    for command in ("replay", "relabel"):
        done = subprocess.run(
            [sys.executable, "-m", "agentproc", command, str(run)],
            env=server_env(),
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stdout + done.stderr
    assert "0 changed" in done.stdout
