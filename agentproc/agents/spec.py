"""An agent as the command line names it, built where its episodes run.

``run``, ``compare`` and ``stress`` describe their agent with an :class:`AgentSpec`; a
worker process or a Ray task gets the spec (pickled, or inherited by a forked worker) and
builds its own model from it, so a model's connections are never shared across processes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from agentproc.agents.suite import ModelRunOptions, model_episodes, sim_episodes
from agentproc.errors import ConfigError
from agentproc.runs import EpisodeFn

_BUILD = object()
"""``episodes()`` without a model: the spec builds its own."""


@dataclass(frozen=True)
class AgentSpec:
    """An agent (``sim:...``, ``openai:MODEL``, ``local``, ``module:factory``) and how it runs:
    the one way every command (``run``, ``compare``, ``stress``) builds its episodes.

    Examples:
        >>> AgentSpec("sim:decay").model() is None
        True
    """

    agent: str
    options: ModelRunOptions = field(default_factory=ModelRunOptions)
    base_url: str | None = None
    """An OpenAI-compatible server for ``openai:MODEL``."""
    timeout: float = 120.0
    """Seconds per model call."""
    max_tokens: int | None = None
    built_model: Any = field(default=None, repr=False, compare=False)
    """The model :meth:`built` made, reused by every run of this spec in this process
    (each variant of ``compare`` and ``stress``), so an embedded model loads once;
    ``None``: each call of :meth:`episodes` builds its own."""

    def model(self) -> Any:
        """The chat model (the factory for ``module:factory``; ``None`` for a simulated
        agent); an unknown agent or a missing extra raises here, before any file is touched."""
        from agentproc.agents.kinds import agent_kind

        kind = agent_kind(self.agent)
        if kind == "sim":
            if self.options.mode == "text":
                raise ConfigError(
                    "simulated agents work with tools; --mode text needs a model agent"
                )
            return None
        if kind == "factory":
            from agentproc.agents.factory import load_factory

            if self.options.mode == "text":
                raise ConfigError(
                    f"--mode text and --agent {self.agent}: a factory's agent works with "
                    "tools (drop --mode text)"
                )
            return load_factory(self.agent)
        from agentproc.agents.providers import make_chat_model

        if kind == "local":
            from agentproc.agents.local import check_installed

            check_installed()  # one line naming the extra, before any file is written
        kw: dict[str, Any] = {}
        if self.max_tokens is not None:
            kw["max_tokens"] = self.max_tokens
        return make_chat_model(self.agent, base_url=self.base_url, timeout=self.timeout, **kw)

    def check(self) -> None:
        """Everything :meth:`model` checks (agent, factory, extra, key), the model dropped:
        an embedded model loads at its first reply, so over workers each worker loads its
        own and this process none."""
        self.model()

    def built(self) -> AgentSpec:
        """This agent with its model built now, once for every run that reuses it."""
        return dataclasses.replace(self, built_model=self.model())

    def episodes(self, model: Any = _BUILD) -> EpisodeFn:
        """The episode function of this agent (over ``model``, or one built now)."""
        from agentproc.agents.factory import factory_episodes
        from agentproc.agents.kinds import agent_kind

        if model is _BUILD:
            model = self.model() if self.built_model is None else self.built_model
        if model is None:
            return sim_episodes(self.agent, self.options)
        if agent_kind(self.agent) == "factory":
            return factory_episodes(model, self.agent, self.options)
        return model_episodes(model, self.agent, self.options)

    def concurrency(self) -> int:
        """Episodes in flight: simulated agents do no I/O, and one at a time keeps the run
        file in suite order."""
        return 1 if self.agent.startswith("sim:") else self.options.concurrency

    def under(self, variant: Any) -> AgentSpec:
        """The same agent, presented as ``variant`` says."""
        return dataclasses.replace(self, options=dataclasses.replace(self.options, variant=variant))
