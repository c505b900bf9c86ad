"""An agent as the command line names it, built where its episodes run.

``run``, ``compare`` and ``stress`` describe their agent with an :class:`AgentSpec`; a
worker process or a Ray task gets the spec (pickled, or inherited by a forked worker) and
builds its own model from it, so a model's connections are never shared across processes.
"""

from __future__ import annotations

import dataclasses
import os
import urllib.parse
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, Literal

from agentproc.agents.providers import BASE_URL_ENV
from agentproc.agents.suite import ModelRunOptions, model_episodes, sim_episodes
from agentproc.errors import ConfigError
from agentproc.runs import EpisodeFn
from agentproc.workflow import Guard

ToolChoice = Literal["auto", "any"]
"""``--tool-choice`` of the embedded model: ``auto`` lets a reply be text or one tool call;
``any`` makes every reply a tool call (the engine's grammar admits no text)."""
LOCAL_TOOL_CHOICE: ToolChoice = "any"
"""The embedded model's tool choice when ``--tool-choice`` is not given: ``any``. Under the
engine's JSON grammar a small model that may reply in text often works every step and
then states the final value as text instead of calling the finish tool, which ends its
episode unanswered: Qwen2.5-Coder-1.5B-Instruct (Q4_K_M) on 3- to 25-step procedures was
faithful on 8 of 15 with ``auto`` and 14 of 15 with ``any``. The packaged SmolLM2-135M
makes the same calls either way on the README's run (measured: identical run files)."""

_BUILD = object()
"""``episodes()`` without a model: the spec builds its own."""


def endpoint(url: str) -> str:
    """A server's URL as a run file records it: scheme, host, port and path, without
    credentials, query or fragment (they may hold a key), nor a trailing slash.

    >>> endpoint("https://user:secret@example.com:8443/v1/?api_key=k#x")
    'https://example.com:8443/v1'
    """
    parts = urllib.parse.urlsplit(url.strip())
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:  # not a port: the URL is refused when the model is made
        port = None
    where = f"{host}:{port}" if port is not None else host
    return urllib.parse.urlunsplit((parts.scheme, where, parts.path.rstrip("/"), "", ""))


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
    tool_choice: ToolChoice | None = None
    """``--tool-choice`` for ``local`` (``None``: :data:`LOCAL_TOOL_CHOICE`); another agent
    given one is refused."""
    built_model: Any = field(default=None, repr=False, compare=False)
    """The model :meth:`built` made, reused by every run of this spec in this process
    (each variant of ``compare`` and ``stress``), so an embedded model loads once;
    ``None``: each call of :meth:`episodes` builds its own."""

    def model(self) -> Any:
        """The chat model (the factory for ``module:factory``; ``None`` for a simulated
        agent); an unknown agent or a missing extra raises here, before any file is touched.
        The embedded model is loaded here too, so that weights the engine cannot load are
        one error before the first episode, not an error in every one."""
        from agentproc.agents.kinds import agent_kind

        made = self._made()
        if agent_kind(self.agent) == "local":
            made.load()
        return made

    def _made(self) -> Any:
        """The model :meth:`model` returns, not loaded."""
        from agentproc.agents.kinds import agent_kind

        kind = agent_kind(self.agent)
        if self.tool_choice is not None and kind != "local":
            raise ConfigError(
                f"--tool-choice is the embedded model's (--agent local or local:PATH.gguf), "
                f"not {self.agent}'s"
            )
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

        kw: dict[str, Any] = {}
        if kind == "local":
            from agentproc.agents.local import check_engine, check_installed, gguf_path

            # One line naming the extra, or the file that is no GGUF, before any is written
            # (weights of your own need no packaged ones).
            if weights := self.agent.partition(":")[2]:
                check_engine("auto")
                gguf_path(weights)
            else:
                check_installed()
            if self.options.mode == "tools":  # text mode offers no tool
                kw["tool_choice"] = self.tool_choice or LOCAL_TOOL_CHOICE
        if self.max_tokens is not None:
            kw["max_tokens"] = self.max_tokens
        return make_chat_model(self.agent, base_url=self.base_url, timeout=self.timeout, **kw)

    def check(self) -> None:
        """Everything :meth:`model` checks (agent, factory, extra, key, a GGUF file's
        header) but loading an embedded model: over workers each worker loads its own
        (before its first episode) and this process none."""
        self._made()

    def built(self) -> AgentSpec:
        """This agent with its model built now, once for every run that reuses it."""
        return dataclasses.replace(self, built_model=self.model())

    def recorded(self) -> str:
        """The agent as its run file names it: its spec, but your own weights by the file's
        stem (``local:/models/qwen.gguf`` is ``local:qwen``), so that no record holds a path
        of this machine and one model keeps its name wherever its file lies.

        >>> AgentSpec("local:/models/Qwen2.5-1.5B.Q4_K_M.gguf").recorded()
        'local:Qwen2.5-1.5B.Q4_K_M'
        >>> AgentSpec("local").recorded(), AgentSpec("sim:decay").recorded()
        ('local', 'sim:decay')
        """
        from agentproc.agents.kinds import agent_kind

        weights = self.agent.partition(":")[2]
        if not weights or agent_kind(self.agent) != "local":
            return self.agent
        from agentproc.agents.local import PACKAGED_NAMES

        return self.agent if weights in PACKAGED_NAMES else f"local:{PurePath(weights).stem}"

    def guard(self) -> Guard:
        """The guard its episodes run under: the variant's, else ``--guard``; text mode
        offers no tool to refuse."""
        if self.options.mode == "text":
            return "observe"
        variant = self.options.variant
        return self.options.guard if variant is None else variant.with_guard(self.options.guard)

    def settings(self) -> dict[str, Any]:
        """What the run is given that changes what this agent sees or does, each only when
        set and where it applies (:class:`~agentproc.runs.records.SettingsRecord`): written
        in every record, and part of who the agent is in reports.

        >>> AgentSpec("openai:m", base_url="http://u:p@h:8000/v1/?key=k").settings()
        {'endpoint': 'http://h:8000/v1'}
        >>> AgentSpec("local", tool_choice="auto", max_tokens=64).settings()
        {'tool_choice': 'auto', 'max_tokens': 64}
        """
        from agentproc.agents.kinds import agent_kind

        kind, o = agent_kind(self.agent), self.options
        model, tools = kind in ("local", "openai"), o.mode == "tools"
        own_guard = o.variant is not None and o.variant.guard is not None  # the variant's own
        base = (self.base_url or os.environ.get(BASE_URL_ENV)) if kind == "openai" else None
        given: dict[str, Any] = {
            "guard": o.guard if tools and o.guard != "observe" and not own_guard else None,
            "endpoint": endpoint(base) if base else None,
            "tool_choice": self.tool_choice
            if kind == "local" and tools and self.tool_choice not in (None, LOCAL_TOOL_CHOICE)
            else None,
            "max_tokens": self.max_tokens if model else None,
            "budget": o.budget if tools and kind != "sim" else None,
            "continue_after_answer": True if model and tools and o.continue_after_answer else None,
            "seed": o.seed if o.seed and kind != "factory" else None,
        }
        return {k: v for k, v in given.items() if v is not None}

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
        return model_episodes(model, self.recorded(), self.options)

    def concurrency(self) -> int:
        """Episodes in flight: simulated agents do no I/O, and one at a time keeps the run
        file in suite order."""
        return 1 if self.agent.startswith("sim:") else self.options.concurrency

    def under(self, variant: Any) -> AgentSpec:
        """The same agent, presented as ``variant`` says."""
        return dataclasses.replace(self, options=dataclasses.replace(self.options, variant=variant))
