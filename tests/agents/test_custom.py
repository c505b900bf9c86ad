"""Your own agent, built from the mock tools by a factory, is labelled like any other."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.prebuilt import create_react_agent

from agentproc import Cell, generate_procedure, scenario_of
from agentproc.agents.custom import arun_agent_episode


class ScriptedChatModel(GenericFakeChatModel):
    def bind_tools(self, tools: Any, **kw: Any) -> ScriptedChatModel:
        return self


def replies(scenario, wrong_step: int | None = None) -> list[AIMessage]:
    out = []
    for s in scenario.steps:
        args = dict(s.expected_call.arguments)
        if s.step == wrong_step:
            first = next(iter(args))
            args[first] = args[first] + 1000
        out.append(
            AIMessage(
                content="",
                tool_calls=[{"name": s.expected_call.name, "args": args, "id": f"c{s.step}"}],
            )
        )
    out.append(
        AIMessage(
            content="",
            tool_calls=[{"name": "submit_answer", "args": {"answer": scenario.answer}, "id": "e"}],
        )
    )
    out.append(AIMessage(content="Done."))
    return out


@pytest.fixture(autouse=True)
def _quiet_deprecations(recwarn: pytest.WarningsRecorder) -> None:
    """create_react_agent is deprecated in LangGraph 1.x but is what users have."""


def react_factory(script: list[AIMessage]):
    return lambda tools: create_react_agent(ScriptedChatModel(messages=iter(script)), tools)


def test_a_react_agent_from_a_factory_is_run_through_the_mock_tools():
    s = scenario_of(generate_procedure(Cell(steps=5, lookback=3), 0, 0))
    ep = asyncio.run(arun_agent_episode(s, react_factory(replies(s)), "react"))
    assert [c.name for c in ep.calls] == [f"step_{k}" for k in range(1, 6)] + ["submit_answer"]
    assert ep.metrics["verdict"] == "faithful" and ep.stop_reason == "answer"
    assert any(m.get("role") == "tool" for m in ep.messages)


def test_a_wrong_argument_from_your_agent_is_labelled_and_carried_forward():
    s = scenario_of(generate_procedure(Cell(steps=5, lookback=3), 0, 0))
    ep = asyncio.run(arun_agent_episode(s, react_factory(replies(s, wrong_step=2)), "react"))
    first = next(lab for lab in ep.labels if lab.kind.value == "wrong_argument")
    assert first.step == 2 and first.cause == "other"


def test_a_failing_agent_is_an_error_episode_not_a_crash():
    s = scenario_of(generate_procedure(Cell(steps=3, lookback=2), 0, 0))

    def broken(tools: list[Any]) -> Any:
        class Boom:
            async def ainvoke(self, *a: Any, **k: Any) -> Any:
                raise RuntimeError("my agent fell over")

        return Boom()

    ep = asyncio.run(arun_agent_episode(s, broken, "broken"))
    assert ep.stop_reason == "error" and ep.metrics["verdict"] == "no_answer"
    assert "my agent fell over" in ep.messages[-1]["error"]


def looping(scenario) -> list[AIMessage]:
    """A model that calls step 1 again and again and never answers."""
    s = scenario.steps[0]
    call = {"name": s.expected_call.name, "args": dict(s.expected_call.arguments)}
    return [AIMessage(content="", tool_calls=[{**call, "id": f"c{i}"}]) for i in range(100)] + [
        AIMessage(content="Done.")
    ]


def test_the_call_budget_holds_for_your_agent_too():
    s = scenario_of(generate_procedure(Cell(steps=3, lookback=2), 0, 0))
    ep = asyncio.run(arun_agent_episode(s, react_factory(looping(s)), "react", budget=4))
    assert len(ep.calls) == 4 and ep.stop_reason == "budget"
    assert [lab.kind.value for lab in ep.labels].count("repeated_step") == 3


def test_direct_tool_calls_past_the_budget_are_not_executed():
    s = scenario_of(generate_procedure(Cell(steps=3, lookback=2), 0, 0))
    seen: list[str] = []

    def direct(tools: list[Any]) -> Any:
        step_1 = next(t for t in tools if t.name == "step_1")

        class Caller:
            async def ainvoke(self, *a: Any, **k: Any) -> Any:
                for _ in range(5):
                    seen.append(await step_1.ainvoke(dict(s.steps[0].expected_call.arguments)))
                return {}

        return Caller()

    ep = asyncio.run(arun_agent_episode(s, direct, "direct", budget=2))
    assert len(ep.calls) == 2 and len(seen) == 2 and ep.stop_reason == "budget"
