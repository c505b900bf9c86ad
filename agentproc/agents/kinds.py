"""The kinds of agent an ``--agent`` value names, told apart in one place.

``sim:NAME`` (a simulated agent), ``local`` (the embedded model), ``openai:MODEL`` (an
OpenAI-compatible server) and your own agent's factory (``path/to/file.py:factory`` or
``module.path:factory``). A value that names none of them is one error listing every
kind and, where one is near, the value meant (:mod:`difflib`, as a typo is usually a
prefix left off or a letter wrong).
"""

from __future__ import annotations

import ast
import difflib
from pathlib import Path
from typing import Literal

from agentproc.errors import ConfigError

AgentKind = Literal["sim", "local", "openai", "factory"]

KINDS = ("sim:<name>", "local", "openai:<model>", "path.py:factory", "module:factory")
"""Every kind of agent, as the error of an unknown one lists them."""


def agent_kind(agent: str) -> AgentKind:
    """The kind of agent ``agent`` names.

    >>> [agent_kind(a) for a in ("sim:decay", "local", "openai:m", "my_agents.react:make")]
    ['sim', 'local', 'openai', 'factory']

    Raises:
        ConfigError: it names no kind (or no simulated agent), listing every kind and
            suggesting the nearest.
    """
    from agentproc.agents.factory import is_factory_spec
    from agentproc.agents.sim import SIM_AGENTS

    provider = agent.partition(":")[0]
    if provider == "sim":
        if agent in SIM_AGENTS:
            return "sim"
        raise unknown_agent(agent)
    if is_factory_spec(agent):
        return "factory"
    if provider == "local":
        return "local"
    if provider == "openai":  # without a model, the provider's own error says so
        return "openai"
    raise unknown_agent(agent)


def unknown_agent(agent: str) -> ConfigError:
    """The one error of an ``--agent`` that names no agent: every kind, the nearest."""
    from agentproc.agents.sim import SIM_AGENTS

    kinds = ", ".join(f"{k} ({', '.join(SIM_AGENTS)})" if k == "sim:<name>" else k for k in KINDS)
    near = nearest_agent(agent)
    hint = f"; did you mean {near}?" if near else ""
    return ConfigError(f"unknown agent {agent!r} (expected one of: {kinds}){hint}")


def nearest_agent(agent: str) -> str | None:
    """The agent ``agent`` most likely meant, if one is near.

    >>> [nearest_agent(a) for a in ("decay", "sim:decy", "gpt-4o", "lokal")]
    ['sim:decay', 'sim:decay', 'openai:gpt-4o', 'local']
    """
    from agentproc.agents.sim import SIM_AGENTS

    if agent.endswith(".py"):
        return _factory_of(Path(agent))
    bare = {name.removeprefix("sim:"): name for name in SIM_AGENTS}
    named = {**bare, **{name: name for name in SIM_AGENTS}, "local": "local"}
    close = difflib.get_close_matches(agent, list(named), n=1, cutoff=0.75)
    if close:
        return named[close[0]]
    if agent and ":" not in agent and not agent.startswith(("/", ".")):
        return f"openai:{agent}"  # a model's name, served by an OpenAI-compatible server
    return None


def _factory_of(path: Path) -> str:
    """``path:FUNCTION`` for a file given without its factory: a function the file defines
    (read with :mod:`ast`, never run), or ``path:FACTORY`` when none can be read."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return f"{path}:FACTORY"
    names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    public = [n for n in names if not n.startswith("_")]
    agentish = [n for n in public if "agent" in n.lower()]
    chosen = (agentish or public or ["FACTORY"])[0]
    return f"{path}:{chosen}"
