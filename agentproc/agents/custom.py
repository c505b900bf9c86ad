"""Evaluate your own agent: a factory receives the LangChain tools and returns a runnable.

The tools are the scenario's mock tools; every call your agent makes through them is
executed, recorded and labelled exactly as in the built-in harness. Your runnable (a
compiled LangGraph graph, a ``create_react_agent``, any Runnable) is invoked with
``{"messages": [SystemMessage, HumanMessage]}`` (LangChain message objects: the variant's
system prompt and the task); if its output has ``messages`` they are recorded.

A call your agent never hands to a tool (for example one a prebuilt tool node rejects
because no tool has that name) is not seen by the mock tools, so it cannot be labelled.
The call budget holds as for every agent: a call past it is not executed and ends
the episode with ``stop_reason: "budget"``.

>>> # episode = asyncio.run(arun_agent_episode(scenario, lambda tools: my_graph(tools), "mine"))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentproc.agents.failures import episode_error
from agentproc.labelling.order import OrderPolicy
from agentproc.runs import BudgetExhausted, Episode, EpisodeSession, StopReason
from agentproc.workflow import Guard, Scenario
from agentproc.workflow.variant import Variant

AgentFactory = Callable[[list[Any]], Any]
"""Receives the LangChain tools of a scenario; returns a runnable or compiled graph."""


def mock_tools(session: EpisodeSession) -> list[Any]:
    """The scenario's mock tools as LangChain ``StructuredTool`` objects."""
    from langchain_core.tools import StructuredTool

    def make(spec: dict[str, Any]) -> Any:
        fn = spec["function"]
        name = fn["name"]

        def run(**arguments: Any) -> str:
            return session.call(name, arguments).result

        async def arun(**arguments: Any) -> str:
            return run(**arguments)

        return StructuredTool(
            name=name,
            description=fn.get("description", ""),
            args_schema=fn["parameters"],
            func=run,
            coroutine=arun,
        )

    return [make(spec) for spec in session.tools]


async def arun_agent_episode(
    scenario: Scenario,
    factory: AgentFactory,
    agent: str,
    *,
    guard: Guard = "observe",
    budget: int | None = None,
    variant: Variant | None = None,
    order: OrderPolicy = "listed",
    trial: int = 0,
) -> Episode:
    """Run your own agent, built by ``factory`` from the mock tools, on a scenario
    (presented as ``variant`` says; each tool call counts as a message of its own;
    ``trial``: the repetition, which a variant's pre-fill is drawn by). A pre-fill's calls
    and results come after the opening messages, as LangChain messages."""
    from langchain_core.messages import convert_to_messages, convert_to_openai_messages

    session = EpisodeSession(
        scenario, agent, guard=guard, budget=budget, variant=variant, order=order, trial=trial
    )
    runnable = factory(mock_tools(session))
    opening = list(session.messages)
    stop: StopReason | None = None
    try:
        out = await runnable.ainvoke(
            {"messages": convert_to_messages([_plain(m) for m in opening])},
            config={"recursion_limit": 2 * session.budget + 10},
        )
        if isinstance(out, dict) and isinstance(out.get("messages"), list):
            converted = convert_to_openai_messages(out["messages"])
            session.messages[:] = converted if isinstance(converted, list) else [converted]
    except Exception as exc:
        # A tool node may catch the budget error and hand it to the model, which
        # then runs into the recursion limit: either way the budget ended it.
        if isinstance(exc, BudgetExhausted) or session.exhausted:
            stop = "budget"
        else:
            stop = "error"
            # Your agent's own exception is a fault of the harness it runs in, not a
            # mistake in the procedure; a model endpoint failing inside it is the endpoint's.
            session.fail(episode_error(exc))
    return session.finish(stop or session.stop_reason)


def _plain(message: dict[str, Any]) -> Any:
    """An opening message as ``convert_to_messages`` takes it: ``(role, content)`` for the
    system and user messages, the OpenAI message itself for a pre-filled call or result."""
    if message["role"] in ("system", "user"):
        return (message["role"], message["content"])
    return message
