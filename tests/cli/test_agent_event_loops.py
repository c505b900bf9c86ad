"""The agent a user writes runs in every command, over every number of arms, at every
concurrency and over workers: ``run``, ``compare --variants`` and ``stress``.

Each agent is a factory file the test writes, with a ``ChatOpenAI`` of its own pointed at
the demo endpoint (started here on 127.0.0.1): LangChain shares one HTTP client per base
URL across every ``ChatOpenAI`` of a process, bound to the event loop that first used it.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import cli, records

from agentproc.agents.demo import ChatServer, demo_server
from agentproc.cli import main

EXAMPLE = Path(__file__).parents[2] / "examples" / "react_agent.py"

FACTORIES = {
    "prebuilt": """\
        import os
        from langchain_openai import ChatOpenAI
        from langgraph.prebuilt import create_react_agent

        def make_agent(tools):
            llm = ChatOpenAI(model="demo", base_url=os.environ["DEMO_URL"], api_key="unused")
            return create_react_agent(llm, tools)
        """,
    "graph": """\
        import os
        from langchain_openai import ChatOpenAI
        from langgraph.graph import START, MessagesState, StateGraph
        from langgraph.prebuilt import ToolNode, tools_condition

        LLM = ChatOpenAI(model="demo", base_url=os.environ["DEMO_URL"], api_key="unused")

        def make_agent(tools):
            llm = LLM.bind_tools(tools)

            async def model(state):
                return {"messages": [await llm.ainvoke(state["messages"])]}

            graph = StateGraph(MessagesState)
            graph.add_node("model", model)
            graph.add_node("tools", ToolNode(tools))
            graph.add_edge(START, "model")
            graph.add_conditional_edges("model", tools_condition)
            graph.add_edge("tools", "model")
            return graph.compile()
        """,
}


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("loops") / "suite"
    assert main(["generate", "--steps", "3,4", "--count", "2", "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def server() -> Iterator[ChatServer]:
    with demo_server("faithful") as srv:
        yield srv


@pytest.fixture
def agent(
    request: pytest.FixtureRequest,
    server: ChatServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> str:
    """The ``--agent`` value of the form the test is parametrized with."""
    monkeypatch.setenv("DEMO_URL", server.base_url)
    if request.param == "example":
        monkeypatch.setenv("AGENTPROC_EXAMPLE_MODEL", "openai:demo")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        return f"{EXAMPLE}:make_agent"
    path = tmp_path / f"mine_{request.param}.py"
    path.write_text(textwrap.dedent(FACTORIES[request.param]))
    return f"{path}:make_agent"


def scored(folder: Path) -> dict[str, int]:
    """Scored (not errored) episodes per run file of a folder."""
    return {
        p.stem: sum(r["stop_reason"] != "error" for r in records(p))
        for p in sorted(folder.glob("*.jsonl"))
    }


@pytest.mark.parametrize("agent", ["prebuilt", "graph", "example"], indirect=True)
def test_compare_of_two_arms_runs_every_episode_of_each(capsys, suite, agent, tmp_path):
    code, _, err = cli(
        capsys, "compare", suite, "--agent", agent, "--variants", "default,terse",
        "--concurrency", "4", "--out", tmp_path / "cmp",
    )  # fmt: skip
    assert code == 0, err
    assert scored(tmp_path / "cmp") == {"default": 4, "terse": 4}
    assert "unpaired" not in capsys.readouterr().out


@pytest.mark.parametrize("concurrency", ["1", "2", "16"])
@pytest.mark.parametrize("agent", ["prebuilt"], indirect=True)
def test_compare_of_three_arms_holds_at_any_concurrency(
    capsys, suite, agent, concurrency, tmp_path
):
    code, _, err = cli(
        capsys, "compare", suite, "--agent", agent, "--variants", "default,terse,json",
        "--concurrency", concurrency, "--out", tmp_path / "cmp",
    )  # fmt: skip
    assert code == 0, err
    assert scored(tmp_path / "cmp") == {"default": 4, "json": 4, "terse": 4}


@pytest.mark.parametrize("agent", ["prebuilt", "example"], indirect=True)
def test_compare_over_two_workers_runs_every_episode(capsys, suite, agent, tmp_path):
    code, _, err = cli(
        capsys, "compare", suite, "--agent", agent, "--variants", "default,terse,json",
        "--concurrency", "4", "--workers", "2", "--out", tmp_path / "cmp",
    )  # fmt: skip
    assert code == 0, err
    assert scored(tmp_path / "cmp") == {"default": 4, "json": 4, "terse": 4}


@pytest.mark.parametrize("agent", ["prebuilt", "example"], indirect=True)
def test_stress_and_run_after_it_in_one_process(capsys, suite, agent, tmp_path):
    code, _, err = cli(
        capsys, "stress", suite, "--agent", agent, "--variants", "default,terse,prose",
        "--concurrency", "8", "--out", tmp_path / "stress",
    )  # fmt: skip
    assert code == 0, err
    assert scored(tmp_path / "stress") == {"default": 4, "prose": 4, "terse": 4}
    code, _, err = cli(
        capsys, "run", suite, "--agent", agent, "--out", tmp_path / "run.jsonl",
    )  # fmt: skip
    assert code == 0, err
    assert all(r["stop_reason"] != "error" for r in records(tmp_path / "run.jsonl"))
