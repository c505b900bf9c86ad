"""The LangGraph harness: a chat model works through a scenario with the mock tools.

The graph has a model node and a tool node of our own. The tool node executes
every call through an :class:`~agentproc.runs.EpisodeSession`, so hallucinated
and malformed calls are recorded rather than dropped, and the monitor labels
each call as it happens. An episode ends when the model submits an answer (unless
``continue_after_answer``), replies without a tool call, exhausts the call
budget, or fails on every retry.

Model calls are retried with exponential backoff and jitter on rate limits,
server errors, timeouts and lost connections (:func:`providers.is_retryable`);
any other failure ends the episode with ``stop_reason = "error"`` and is
recorded, so one bad episode never stops a run.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, TypedDict

from agentproc.agents.failures import episode_error
from agentproc.agents.providers import RAW_KEY
from agentproc.agents.retry import ModelCall, RetryPolicy, invoke_with_retry, usage_summary
from agentproc.runs import (
    BUDGET_EXHAUSTED,
    Episode,
    EpisodeSession,
    StopReason,
    harness_error,
    retry_seed,
)
from agentproc.workflow import Guard, Scenario
from agentproc.workflow.variant import Variant


class _State(TypedDict):
    turns: int
    stop: str | None


@dataclass
class _Episode:
    """Everything one episode accumulates while the graph runs."""

    session: EpisodeSession
    history: list[Any]
    continue_after_answer: bool
    retry: RetryPolicy
    rng: random.Random
    model_calls: list[ModelCall] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    pending: list[tuple[str, str, Any]] = field(default_factory=list)
    """The tool calls of the latest model reply, for the tool node."""


def _requests(reply: Any) -> list[tuple[str, str, Any]]:
    """``(id, name, arguments)`` of every tool call in a reply, in the order sent.

    The raw name and argument text the provider kept are used where there are
    any: ids are not trusted to be unique or present, so calls are matched by
    position, never by id.
    """
    raw = reply.additional_kwargs.get(RAW_KEY)
    if raw:
        return [(i or f"call_{n}", name, text) for n, (i, name, text) in enumerate(raw)]
    out: list[tuple[str, str, Any]] = []
    for tc in list(reply.tool_calls) + list(getattr(reply, "invalid_tool_calls", [])):
        call_id = tc.get("id") or f"call_{len(out)}"
        args = tc.get("args")
        out.append((call_id, tc.get("name") or "", args if args is not None else ""))
    return out


def build_graph(model: Any, ep: _Episode) -> Any:
    """The episode's LangGraph: model node -> tool node -> model node ... -> end."""
    from langchain_core.messages import AIMessage, ToolMessage
    from langgraph.graph import END, START, StateGraph

    async def model_node(state: _State) -> dict[str, Any]:
        try:
            reply = await invoke_with_retry(
                model, ep.history, ep.retry, ep.rng, ep.model_calls, ep.errors
            )
        except Exception as exc:
            attempts = ep.model_calls[-1].attempts if ep.model_calls else 1
            ep.session.fail(episode_error(exc, attempts))
            return {"stop": "error", "turns": state["turns"] + 1}
        requests = _requests(reply)
        kwargs = {k: v for k, v in reply.additional_kwargs.items() if k != RAW_KEY}
        ep.history.append(
            AIMessage(
                content=reply.content,
                tool_calls=reply.tool_calls,
                invalid_tool_calls=getattr(reply, "invalid_tool_calls", []),
                additional_kwargs=kwargs,
                id=reply.id,
            )
        )
        if not requests:
            ep.session.say(reply.content)
            return {"stop": "no_tool_call", "turns": state["turns"] + 1}
        ep.pending = requests
        if reply.content:
            ep.session.say(reply.content)
        return {"stop": None, "turns": state["turns"] + 1}

    async def tool_node(state: _State) -> dict[str, Any]:
        stop = None
        session = ep.session
        for call_id, name, args in ep.pending:
            if session.exhausted:
                stop = "budget"
                ep.history.append(ToolMessage(content=BUDGET_EXHAUSTED, tool_call_id=call_id))
                continue
            rec = session.call(name, args, call_id)
            ep.history.append(ToolMessage(content=rec.result, tool_call_id=call_id))
            if rec.finish and rec.answer is not None and not ep.continue_after_answer:
                stop = stop or "answer"
        if stop is None and session.exhausted:
            stop = "budget"
        return {"stop": stop}

    graph = StateGraph(_State)
    graph.add_node("model", model_node)
    graph.add_node("tools", tool_node)
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", lambda s: END if s["stop"] else "tools")
    graph.add_conditional_edges("tools", lambda s: END if s["stop"] else "model")
    return graph.compile()


async def arun_model_episode(
    scenario: Scenario,
    model: Any,
    agent: str,
    *,
    guard: Guard = "observe",
    budget: int | None = None,
    continue_after_answer: bool = False,
    retry: RetryPolicy | None = None,
    seed: int = 0,
    variant: Variant | None = None,
) -> Episode:
    """Run a LangChain chat model (anything with ``bind_tools`` and ``ainvoke``) on a scenario
    (presented as ``variant`` says)."""
    from langchain_core.messages import HumanMessage, SystemMessage

    session = EpisodeSession(scenario, agent, guard=guard, budget=budget, variant=variant)
    opening = session.messages
    ep = _Episode(
        session=session,
        history=[SystemMessage(opening[0]["content"]), HumanMessage(opening[1]["content"])],
        continue_after_answer=continue_after_answer,
        retry=retry or RetryPolicy(),
        rng=retry_seed(seed, scenario.id),
    )
    bound = model.bind_tools(session.tools)
    graph = build_graph(bound, ep)
    stop: StopReason
    try:
        final = await graph.ainvoke(
            {"turns": 0, "stop": None}, config={"recursion_limit": 2 * session.budget + 10}
        )
        stop = final.get("stop") or "budget"
    except Exception as exc:  # a fault of the harness itself: recorded, never scored
        session.fail(harness_error(exc))
        stop = "error"
    return session.finish(
        stop,
        model_calls=[vars(c) for c in ep.model_calls],
        usage=usage_summary(ep.model_calls),
        errors=ep.errors,
    )
