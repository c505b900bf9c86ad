"""Text mode for model agents: the procedure in the prompt, the work and answer in text.

The reference study's own protocol: one model reply, no tools. The reply is parsed
and labelled by :mod:`agentproc.labelling.text`; the episode is stored like a
tool-mode one, with ``mode: "text"`` and the reply in ``output``, so ``replay``
and ``report`` read both.
"""

from __future__ import annotations

from typing import Any

from agentproc.agents.cache import CacheUse, cached
from agentproc.agents.failures import episode_error
from agentproc.agents.retry import ModelCall, RetryPolicy, invoke_with_retry, usage_summary
from agentproc.runs import Episode, EpisodeSession, StopReason, retry_seed, text_of
from agentproc.workflow import Scenario
from agentproc.workflow.variant import Variant


async def arun_text_episode(
    scenario: Scenario,
    model: Any,
    agent: str,
    *,
    retry: RetryPolicy | None = None,
    seed: int = 0,
    variant: Variant | None = None,
    cache: CacheUse | None = None,
) -> Episode:
    """Ask a chat model for the whole procedure in text and label its reply (``variant``
    may only be one that changes nothing: text mode has no tools to vary)."""
    session = EpisodeSession(scenario, agent, mode="text", variant=variant)
    opening = session.messages[:2]
    chat = cached(model, None, opening, cache)
    calls: list[ModelCall] = []
    errors: list[str] = []
    stop: StopReason = "answer"
    try:
        reply = await invoke_with_retry(
            chat.next_turn, retry or RetryPolicy(), retry_seed(seed, scenario.id), calls, errors
        )
        session.read_text(text_of(reply.content), redacted=reply.redacted_content)
    except Exception as exc:
        stop = "error"
        session.fail(episode_error(exc, calls[-1].attempts if calls else 1))
    episode = session.finish(
        stop, model_calls=[c.record() for c in calls], usage=usage_summary(calls), errors=errors
    )
    if stop != "error" and episode.metrics["answers"] == 0:
        episode.stop_reason = "no_answer"
    return episode
