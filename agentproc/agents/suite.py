"""Episode functions for the suite runner: one per kind of agent.

:func:`agentproc.runs.arun_suite` takes a function from a scenario to an
episode; these bind a simulated agent, or a chat model with its run options, into one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentproc.agents.cache import CacheConfig, CacheUse
from agentproc.agents.retry import RetryPolicy
from agentproc.agents.sim import run_sim_episode
from agentproc.labelling.order import OrderPolicy
from agentproc.runs import Episode, EpisodeFn, Mode, trial_seed
from agentproc.workflow import Guard, Scenario
from agentproc.workflow.variant import Variant


def sim_episodes(agent: str, options: ModelRunOptions | None = None) -> EpisodeFn:
    """Episodes of a simulated agent (``sim:...``) under the seed, guard, variant and order
    policy of ``options``."""
    o = options or ModelRunOptions()

    async def episode(scenario: Scenario, trial: int = 0) -> Episode:
        return run_sim_episode(
            scenario,
            agent,
            seed=o.seed,
            guard=o.guard,
            trial=trial,
            variant=o.variant,
            order=o.order,
        )

    return episode


@dataclass
class ModelRunOptions:
    """How a model agent is run."""

    concurrency: int = 1
    guard: Guard = "observe"
    mode: Mode = "tools"
    """``tools`` (the compiled workflow) or ``text`` (the reference study's protocol)."""
    budget: int | None = None
    continue_after_answer: bool = False
    seed: int = 0
    retry: RetryPolicy = field(default_factory=lambda: RetryPolicy())
    variant: Variant | None = None
    """How the workflow is presented (``None``: today's)."""
    order: OrderPolicy = "listed"
    """The order policy the monitor holds the calls to."""
    cache: CacheConfig | None = None
    """The response cache (``None``: none)."""
    debug: bool = False
    """Stop the run at the first harness error, with its traceback (``--debug``)."""


def model_episodes(model: Any, agent: str, options: ModelRunOptions) -> EpisodeFn:
    """Episodes of a chat model, in tool or text mode."""

    async def episode(scenario: Scenario, trial: int = 0) -> Episode:
        seed = trial_seed(options.seed, trial)
        cache = None if options.cache is None else CacheUse(options.cache, trial, options.seed)
        if options.mode == "text":
            from agentproc.agents.text import arun_text_episode

            return await arun_text_episode(
                scenario,
                model,
                agent,
                retry=options.retry,
                seed=seed,
                variant=options.variant,
                cache=cache,
            )
        from agentproc.agents.harness import arun_model_episode

        return await arun_model_episode(
            scenario,
            model,
            agent,
            guard=options.guard,
            budget=options.budget,
            continue_after_answer=options.continue_after_answer,
            retry=options.retry,
            seed=seed,
            variant=options.variant,
            order=options.order,
            cache=cache,
            trial=trial,
        )

    return episode
