"""Text mode for model agents: the procedure in the prompt, the work and answer in text.

The reference study's own protocol: one model reply, no tools. The reply is parsed
and labelled by :mod:`agentproc.textmode`; the episode is stored like a tool-mode
one, with ``mode: "text"`` and the reply in ``output``, so ``replay`` and
``report`` read both.
"""

from __future__ import annotations

import random
from typing import Any

from agentproc.agents.providers import redact
from agentproc.agents.retry import ModelCall, RetryPolicy, invoke_with_retry, usage_summary
from agentproc.episode import text_of
from agentproc.textmode import run_text_episode, text_messages
from agentproc.types import Episode, Scenario


async def arun_text_episode(
    scenario: Scenario, model: Any, agent: str, *, retry: RetryPolicy | None = None, seed: int = 0
) -> Episode:
    """Ask a chat model for the whole procedure in text and label its reply."""
    from langchain_core.messages import HumanMessage, SystemMessage

    messages = text_messages(scenario)
    history = [SystemMessage(messages[0]["content"]), HumanMessage(messages[1]["content"])]
    calls: list[ModelCall] = []
    errors: list[str] = []
    rng = random.Random(f"agentproc-retry:{seed}:{scenario.id}")
    stop = "answer"
    try:
        reply = await invoke_with_retry(model, history, retry or RetryPolicy(), rng, calls, errors)
        output = text_of(reply.content)
        messages.append({"role": "assistant", "content": output})
    except Exception as exc:
        output = ""
        stop = "error"
        messages.append(
            {"role": "assistant", "content": None, "error": redact(f"{type(exc).__name__}: {exc}")}
        )
    labels, metrics, _ = run_text_episode(scenario, output)
    if stop != "error" and metrics["answers"] == 0:
        stop = "no_answer"
    return Episode(
        scenario=scenario,
        agent=agent,
        calls=[],
        labels=labels,
        metrics=metrics,
        messages=messages,
        stop_reason=stop,
        extra={
            "mode": "text",
            "output": output,
            "model_calls": [vars(c) for c in calls],
            "usage": usage_summary(calls),
            "errors": errors,
        },
    )
