"""What a custom agent receives, for each form docs/agents.md documents: a compiled
LangGraph graph, a LangChain Runnable, an object with ``ainvoke``. Each gets
``{"messages": [SystemMessage, HumanMessage]}`` (the variant's prompt and the task) and a
config with ``recursion_limit``; an agent adding its own system prompt keeps the variant's.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import cli, records
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import RunnableLambda
from langgraph.graph import START, MessagesState, StateGraph

from agentproc import arun_agent_episode, load_scenario
from agentproc.agents.demo import ChatServer, demo_server
from agentproc.cli import main
from agentproc.runs import EpisodeSession
from agentproc.workflow.variant import load_variant

ROOT = Path(__file__).resolve().parents[2]
PINNED = ROOT / "scenarios" / "pinned" / "n5-L3-r1_10-mixed-decimal-0000.json"


def opening(variant: str = "terse") -> list[dict[str, Any]]:
    """The system and user messages an episode of the pinned scenario opens with."""
    session = EpisodeSession(load_scenario(PINNED), "x", variant=load_variant(variant))
    return list(session.messages[:2])


def received_by(make: Any, variant: str = "terse") -> list[Any]:
    """What the agent ``make(seen)`` returns saw, as it saw it."""
    seen: list[Any] = []
    asyncio.run(
        arun_agent_episode(
            load_scenario(PINNED), lambda tools: make(seen), "x", variant=load_variant(variant)
        )
    )
    return seen


def check_messages(messages: list[Any], variant: str = "terse") -> None:
    system, user = opening(variant)
    assert [type(m) for m in messages] == [SystemMessage, HumanMessage]
    assert messages[0].content == system["content"]
    assert messages[1].content == user["content"]


def test_a_compiled_graph_gets_the_variants_prompt_and_the_task_as_messages():
    def make(seen: list[Any]) -> Any:
        def node(state: MessagesState) -> dict[str, Any]:
            seen.extend(state["messages"])
            return {}

        graph = StateGraph(MessagesState)
        graph.add_node("look", node)
        graph.add_edge(START, "look")
        return graph.compile()

    check_messages(received_by(make))


def test_a_runnable_gets_a_dict_of_message_objects():
    def make(seen: list[Any]) -> Any:
        def fn(inputs: dict[str, Any]) -> dict[str, Any]:
            seen.append(inputs)
            return {}

        return RunnableLambda(fn)

    (inputs,) = received_by(make)
    assert list(inputs) == ["messages"]
    check_messages(inputs["messages"])


def test_an_object_with_ainvoke_gets_the_inputs_and_a_recursion_limit():
    class Agent:
        def __init__(self, seen: list[Any]) -> None:
            self.seen = seen

        async def ainvoke(self, inputs: dict[str, Any], config: Any = None) -> dict[str, Any]:
            self.seen.append((inputs, config))
            return {}

    ((inputs, config),) = received_by(Agent, "default")
    check_messages(inputs["messages"], "default")
    assert config["recursion_limit"] > 0


# -- an agent with its own system prompt, at the demo endpoint -------------------------

OWN_PROMPT = """\
import os
from langchain_core.messages import SystemMessage
from langchain_core.runnables import RunnableLambda
from langchain_openai import ChatOpenAI

MY_PROMPT = "You are a careful calculator."


def make_agent(tools):
    llm = ChatOpenAI(model="demo", base_url=os.environ["DEMO_URL"], api_key="unused")
    llm = llm.bind_tools(tools)
    by_name = {tool.name: tool for tool in tools}

    async def run(inputs):
        system, task = inputs["messages"]
        messages = [SystemMessage(f"{MY_PROMPT}\\n\\n{system.content}"), task]
        while True:
            reply = await llm.ainvoke(messages)
            messages.append(reply)
            if not reply.tool_calls:
                return {"messages": messages}
            for call in reply.tool_calls:
                messages.append(await by_name[call["name"]].ainvoke(call))

    return RunnableLambda(run)
"""


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("inputs") / "suite"
    argv = ["generate", "--steps", "5,6", "--lookback", "2", "--count", "3", "--out", str(out)]
    assert main(argv) == 0
    return out


@pytest.fixture(scope="module")
def server() -> Iterator[ChatServer]:
    with demo_server("prompt-sensitive") as srv:
        yield srv


def test_an_agent_adding_its_own_prompt_keeps_the_variants(
    capsys, suite, server, tmp_path, monkeypatch
):
    """The prompt-sensitive endpoint follows every step only when the variant's prompt
    tells it to (``one-call-per-step``): kept beside the agent's own prompt, it still does."""
    monkeypatch.setenv("DEMO_URL", server.base_url)
    (tmp_path / "own_prompt.py").write_text(OWN_PROMPT)
    code, out, err = cli(
        capsys, "compare", suite, "--agent", f"{tmp_path / 'own_prompt.py'}:make_agent",
        "--variants", "default,one-call-per-step", "--concurrency", "4",
        "--out", tmp_path / "cmp", "--json",
    )  # fmt: skip
    assert code == 0, err
    told = records(tmp_path / "cmp" / "one-call-per-step.jsonl")
    assert {r["verdict"] for r in told} == {"faithful"}
    system = told[0]["messages"][0]["content"]
    assert system.startswith("You are a careful calculator.\n\n")
    (comparison,) = json.loads(out)["comparisons"]
    assert comparison["overall"]["faithful"]["diff"] > 0
