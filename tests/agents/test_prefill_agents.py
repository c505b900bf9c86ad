"""A pre-fill reaches every kind of agent in the messages it receives: an ``openai:`` model
on a real loopback server (the demo endpoint too), a LangChain chat model, and your own
agent from a factory. Each goes on from the first step not pre-filled."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

import pytest
from helpers import cli, records
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage

from agentproc import Cell, generate_procedure, scenario_of
from agentproc.agents.custom import arun_agent_episode
from agentproc.agents.demo import demo_server
from agentproc.agents.harness import arun_model_episode
from agentproc.agents.providers import make_chat_model
from agentproc.agents.retry import RetryPolicy
from agentproc.cli import main
from agentproc.workflow.variant import load_variant
from tests.fakes.openai_server import ScriptedServer

FAST = RetryPolicy(attempts=2, base_delay=0.01, timeout=5.0)
HALF = load_variant("prefill-wrong-50")
SCENARIO = scenario_of(generate_procedure(Cell(steps=6, lookback=2), 0, 1))


def test_an_openai_model_receives_the_prefill_and_goes_on_from_there():
    with ScriptedServer() as srv:  # the faithful planner, reading the state from the request
        model = make_chat_model("openai:fake", base_url=srv.base_url)
        ep = asyncio.run(
            arun_model_episode(SCENARIO, model, "openai:fake", retry=FAST, variant=HALF)
        )
        first = srv.completions[0].body["messages"]
    assert [m["role"] for m in first] == ["system", "user"] + ["assistant", "tool"] * 3
    assert first[2:] == ep.messages[2:8]
    assert [c.name for c in ep.calls[3:]] == ["step_4", "step_5", "step_6", "submit_answer"]
    assert ep.metrics["verdict"] == "faithful" and ep.metrics["given_steps"] == 3


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("prefill-demo") / "s"
    assert (
        main(["generate", "--steps", "5,10", "--lookback", "2", "--count", "4", "--out", str(out)])
        == 0
    )
    return out


def test_the_demo_endpoint_goes_on_from_the_prefill(capsys, suite, tmp_path):
    with demo_server("faithful") as srv:
        code, _, err = cli(
            capsys,
            "run",
            suite,
            "--agent",
            "openai:demo",
            "--base-url",
            srv.base_url,
            "--variant",
            "prefill-wrong-100",
            "--out",
            tmp_path / "run.jsonl",
        )
    assert code == 0, err
    recs = records(tmp_path / "run.jsonl")
    assert {r["verdict"] for r in recs} == {"faithful"}  # the given wrong values carried
    for r in recs:
        k = r["metrics"]["given_steps"]
        assert [c["name"] for c in r["calls"][: k + 1]] == [f"step_{i}" for i in range(1, k + 2)]
        assert r["variant"] == "prefill-wrong-100" and r["variant_spec"]["prefill"]


class Recording(GenericFakeChatModel):
    seen: ClassVar[list[list[Any]]] = []

    def bind_tools(self, tools: Any, **kw: Any) -> Recording:
        return self

    def _generate(self, messages: list[Any], *args: Any, **kw: Any) -> Any:
        Recording.seen.append(list(messages))
        return super()._generate(messages, *args, **kw)


def script(scenario, start: int) -> list[AIMessage]:
    out = [
        AIMessage(content="", tool_calls=[{"name": s.name, "args": {}, "id": f"c{s.step}"}])
        for s in scenario.steps[start:]
    ]
    return [*out, AIMessage(content="Done.")]


def test_a_langchain_model_receives_the_prefilled_calls_and_results():
    Recording.seen = []
    model = Recording(messages=iter(script(SCENARIO, 3)))
    ep = asyncio.run(arun_model_episode(SCENARIO, model, "fake", retry=FAST, variant=HALF))
    history = Recording.seen[0]
    calls = [m for m in history if isinstance(m, AIMessage)]
    results = [m for m in history if isinstance(m, ToolMessage)]
    assert [c.tool_calls[0]["name"] for c in calls] == ["step_1", "step_2", "step_3"]
    assert [r.content for r in results] == [c.result for c in ep.calls[:3]]
    assert ep.calls[3].name == "step_4"


def test_your_agent_from_a_factory_receives_the_prefilled_calls_and_results():
    seen: list[Any] = []

    def factory(tools: list[Any]) -> Any:
        class Runnable:
            async def ainvoke(self, state: dict[str, Any], config: Any = None) -> Any:
                seen.extend(state["messages"])
                return {"messages": state["messages"]}

        return Runnable()

    ep = asyncio.run(arun_agent_episode(SCENARIO, factory, "mine", variant=HALF, trial=2))
    kinds = [type(m).__name__ for m in seen]
    assert kinds == ["SystemMessage", "HumanMessage"] + ["AIMessage", "ToolMessage"] * 3
    assert seen[3].content == ep.calls[0].result
    assert ep.metrics["given_steps"] == 3 and ep.metrics["calls"] == 0
