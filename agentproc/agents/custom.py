"""Evaluate your own agent: a factory receives the LangChain tools and returns a runnable.

The tools are the scenario's mock tools; every call your agent makes through them is
executed, recorded and labelled exactly as in the built-in harness. Your runnable (a
compiled LangGraph graph, a ``create_react_agent``, any Runnable) is invoked with
``{"messages": [system, user]}``; if its output has ``messages`` they are recorded.

A call your agent never hands to a tool (for example one a prebuilt tool node rejects
because no tool has that name) is not seen by the mock tools, so it cannot be labelled.

>>> # episode = asyncio.run(arun_agent_episode(scenario, lambda tools: my_graph(tools), "mine"))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentproc.agents.providers import redact
from agentproc.compiler import complete
from agentproc.episode import call_messages, default_budget, opening_messages
from agentproc.errors import ConfigError
from agentproc.monitor import Monitor
from agentproc.toolkit import Guard, Toolkit
from agentproc.types import Episode, Scenario
from agentproc.workflow import build_workflow

AgentFactory = Callable[[list[Any]], Any]
"""Receives the LangChain tools of a scenario; returns a runnable or compiled graph."""


def mock_tools(toolkit: Toolkit, monitor: Monitor, log: list[dict[str, Any]]) -> list[Any]:
    """The scenario's mock tools as LangChain ``StructuredTool`` objects."""
    from langchain_core.tools import StructuredTool

    def make(spec: dict[str, Any]) -> Any:
        fn = spec["function"]
        name = fn["name"]

        def run(**arguments: Any) -> str:
            rec = toolkit.call(name, arguments)
            monitor.observe(rec)
            log.extend(call_messages(rec))
            return rec.result

        async def arun(**arguments: Any) -> str:
            return run(**arguments)

        return StructuredTool(
            name=name,
            description=fn["description"],
            args_schema=fn["parameters"],
            func=run,
            coroutine=arun,
        )

    scenario = toolkit.workflow.scenario
    if scenario is None:
        raise ConfigError("mock tools need a workflow built from a Scenario (build_workflow)")
    return [make(spec) for spec in complete(scenario).tools]


async def arun_agent_episode(
    scenario: Scenario,
    factory: AgentFactory,
    agent: str,
    *,
    guard: Guard = "observe",
    budget: int | None = None,
) -> Episode:
    """Run your own agent, built by ``factory`` from the mock tools, on a scenario."""
    from langchain_core.messages import convert_to_openai_messages

    wf = build_workflow(scenario)
    toolkit, monitor = Toolkit(wf, guard), Monitor(wf)
    log: list[dict[str, Any]] = []
    runnable = factory(mock_tools(toolkit, monitor, log))
    opening = opening_messages(scenario)
    limit = budget if budget is not None else default_budget(wf)
    stop, messages = "answer", list(opening)
    try:
        out = await runnable.ainvoke(
            {"messages": [(m["role"], m["content"]) for m in opening]},
            config={"recursion_limit": 2 * limit + 10},
        )
        if isinstance(out, dict) and isinstance(out.get("messages"), list):
            messages = list(convert_to_openai_messages(out["messages"]))
    except Exception as exc:
        stop = "error"
        messages = [
            *opening,
            *log,
            {"role": "assistant", "content": None, "error": redact(f"{type(exc).__name__}: {exc}")},
        ]
    if stop != "error":
        stop = "answer" if toolkit.answers else "no_tool_call"
    labels, metrics = monitor.finish()
    return Episode(
        scenario=scenario,
        agent=agent,
        calls=toolkit.calls,
        labels=labels,
        metrics=metrics,
        messages=messages,
        stop_reason=stop,
        guard=guard,
    )
