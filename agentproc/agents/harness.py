"""The LangGraph harness: a chat model works through a scenario with the mock tools.

The graph has one node, a turn: the model's reply, then each of its tool calls
executed through an :class:`~agentproc.runs.EpisodeSession`, so hallucinated
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
from functools import cache
from typing import TYPE_CHECKING, Any, TypedDict

from agentproc.agents.cache import CacheUse, cached
from agentproc.agents.conversation import Conversation
from agentproc.agents.failures import episode_error
from agentproc.agents.retry import ModelCall, RetryPolicy, invoke_with_retry, usage_summary
from agentproc.labelling.order import OrderPolicy
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

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

EPISODE = "agentproc_episode"
"""The key of the running episode in the graph's ``configurable`` config."""


class _State(TypedDict):
    stop: str | None


@dataclass
class _Episode:
    """Everything one episode accumulates while the graph runs."""

    session: EpisodeSession
    chat: Conversation
    continue_after_answer: bool
    retry: RetryPolicy
    rng: random.Random
    model_calls: list[ModelCall] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


async def _turn_node(state: _State, config: RunnableConfig) -> Any:
    """One turn: the model's reply, then every tool call in it, executed and labelled."""
    from langgraph.graph import END
    from langgraph.types import Command

    ep: _Episode = config["configurable"][EPISODE]  # type: ignore[typeddict-item]
    session = ep.session
    try:
        turn = await invoke_with_retry(
            ep.chat.next_turn, ep.retry, ep.rng, ep.model_calls, ep.errors
        )
    except Exception as exc:
        attempts = ep.model_calls[-1].attempts if ep.model_calls else 1
        session.fail(episode_error(exc, attempts))
        return Command(update={"stop": "error"}, goto=END)
    if turn.content or not turn.requests:
        session.say(turn.content)
    if not turn.requests:
        return Command(update={"stop": "no_tool_call"}, goto=END)
    stop = None
    session.message()  # the turn's calls came in one message; executed in call order
    for j, (call_id, name, args) in enumerate(turn.requests):
        if session.exhausted:
            stop = "budget"
            ep.chat.tool_result(call_id, BUDGET_EXHAUSTED)
            continue
        rec = session.call(name, args, call_id, redacted=j in turn.redacted)
        ep.chat.tool_result(call_id, rec.result)
        if rec.finish and rec.answer is not None and not ep.continue_after_answer:
            stop = stop or "answer"
    if stop is None and session.exhausted:
        stop = "budget"
    if stop is not None:
        return Command(update={"stop": stop}, goto=END)
    return Command(goto="turn")


@cache
def episode_graph() -> Any:
    """The harness's LangGraph, compiled once: a turn node (the model's reply and the
    execution of its tool calls) that loops to itself until the episode ends. Each
    run passes its episode in ``config["configurable"]``; the node routes with
    ``Command`` (no edge function, so no hop to a thread per step), and one graph
    step per model turn keeps LangGraph's own work per turn small."""
    from langgraph.graph import END, START, StateGraph

    graph = StateGraph(_State)
    graph.add_node("turn", _turn_node, destinations=("turn", END))
    graph.add_edge(START, "turn")
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
    order: OrderPolicy = "listed",
    cache: CacheUse | None = None,
    trial: int = 0,
) -> Episode:
    """Run a LangChain chat model (anything with ``bind_tools`` and ``ainvoke``) on a scenario
    (presented as ``variant`` says; its replies through the response cache ``cache``;
    ``trial``: the repetition, which a variant's pre-fill is drawn by)."""
    session = EpisodeSession(
        scenario, agent, guard=guard, budget=budget, variant=variant, order=order, trial=trial
    )
    ep = _Episode(
        session=session,
        chat=cached(model, session.tools, list(session.messages), cache),  # with any pre-fill
        continue_after_answer=continue_after_answer,
        retry=retry or RetryPolicy(),
        rng=retry_seed(seed, scenario.id),
    )
    stop: StopReason
    try:
        final = await episode_graph().ainvoke(
            {"stop": None},
            config={"recursion_limit": session.budget + 10, "configurable": {EPISODE: ep}},
        )
        stop = final.get("stop") or "budget"
    except Exception as exc:  # a fault of the harness itself: recorded, never scored
        session.fail(harness_error(exc))
        stop = "error"
    return session.finish(
        stop,
        model_calls=[c.record() for c in ep.model_calls],
        usage=usage_summary(ep.model_calls),
        errors=ep.errors,
    )
