"""End to end: a LangGraph agent gets its tools from ``serve-mcp`` through
``langchain-mcp-adapters``; its model is the fake OpenAI server's oracle."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from fakes.openai_server import ScriptedServer
from helpers import records
from mcp_script import scenarios, two_scenarios

from agentproc.analysis import replay_calls

pytest.importorskip("langchain_mcp_adapters")

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.filterwarnings("ignore:create_react_agent has been moved")
async def test_a_langgraph_agent_over_mcp_adapters_runs_every_scenario_faithfully(
    tmp_path: Path,
):
    from langchain_mcp_adapters.client import MultiServerMCPClient
    from langchain_mcp_adapters.tools import load_mcp_tools
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import create_react_agent

    suite, run = two_scenarios(tmp_path), tmp_path / "run.jsonl"
    client = MultiServerMCPClient(
        {
            "agentproc": {
                "transport": "stdio",
                "command": sys.executable,
                "args": ["-m", "agentproc", "serve-mcp", str(suite), "--out", str(run)],
                "env": {**os.environ, "PYTHONPATH": str(ROOT)},
            }
        }
    )
    with ScriptedServer() as fake:  # oracle mode: a perfect agent behind chat completions
        model = ChatOpenAI(model="oracle", base_url=fake.base_url, api_key="none")
        async with client.session("agentproc") as session:  # one session: one run
            for _ in scenarios():
                tools = await load_mcp_tools(session)
                agent = create_react_agent(model, [t for t in tools if t.name != "next_scenario"])
                prompt = await session.get_prompt("procedure")
                await agent.ainvoke({"messages": [("user", prompt.messages[0].content.text)]})
                await session.call_tool("next_scenario", {})
    eps = records(run)
    assert [e["scenario_id"] for e in eps] == ["tiny", "tiny-b"]
    assert [e["verdict"] for e in eps] == ["faithful", "faithful"]
    for ep, scenario in zip(eps, scenarios(), strict=True):
        calls = [(c["name"], c["arguments"]) for c in ep["calls"]]
        assert [c[0] for c in calls][-1] == "submit_answer"
        assert ep["labels"] == [lab.to_json() for lab in replay_calls(scenario, calls).labels]
