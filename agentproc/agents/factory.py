"""Your own agent from the command line: ``--agent module.path:factory`` or ``file.py:factory``.

The factory has the contract of :func:`agentproc.agents.custom.arun_agent_episode`:
it receives the scenario's mock tools as LangChain tools and returns a runnable
(a compiled LangGraph graph, ``langchain.agents.create_agent(...)``, any Runnable).
It is imported with :mod:`importlib`; nothing a file supplies is evaluated otherwise.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from agentproc.agents.custom import AgentFactory, arun_agent_episode
from agentproc.errors import ConfigError, InputError
from agentproc.runs import Episode, EpisodeFn
from agentproc.workflow import Scenario

if TYPE_CHECKING:
    from agentproc.agents.suite import ModelRunOptions

_MODULE = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
_NAME = re.compile(r"^[A-Za-z_]\w*$")
_NOT_FACTORIES = frozenset({"sim", "local", "openai"})
"""Prefixes that name built-in agents, never a module."""


def is_factory_spec(spec: str) -> bool:
    """Whether an ``--agent`` value names a factory (``module:fn`` or ``file.py:fn``).

    >>> [is_factory_spec(s) for s in ("my_agents.react:make", "a/b.py:make", "openai:gpt-4o")]
    [True, True, False]
    """
    where, sep, name = spec.rpartition(":")
    if not sep or not _NAME.match(name) or where in _NOT_FACTORIES:
        return False
    return where.endswith(".py") or bool(_MODULE.match(where))


def load_factory(spec: str) -> AgentFactory:
    """Import the factory a ``module.path:factory`` or ``path/to/file.py:factory`` names.

    Raises:
        InputError: the file does not exist.
        ConfigError: the module cannot be imported, has no such name, or it is not callable.
    """
    where, _, name = spec.rpartition(":")
    if where.endswith(".py"):
        path = Path(where)
        if not path.is_file():
            raise InputError(path, "no such file (expected path/to/file.py:factory)")
        module_name = "agentproc_user_" + re.sub(r"\W", "_", path.stem)
        loader_spec = importlib.util.spec_from_file_location(module_name, path)
        if loader_spec is None or loader_spec.loader is None:
            raise InputError(path, "cannot be imported as a Python module")
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[module_name] = module
        try:
            loader_spec.loader.exec_module(module)
        except (Exception, SystemExit) as exc:  # a module that exits at import ran nothing
            sys.modules.pop(module_name, None)
            raise ConfigError(
                f"--agent {spec}: importing {path} failed: {_one_line(exc)}"
            ) from None
    else:
        _current_folder_importable()
        try:
            module = importlib.import_module(where)
        except (Exception, SystemExit) as exc:
            raise ConfigError(f"--agent {spec}: cannot import {where}: {_one_line(exc)}") from None
    factory: AgentFactory | None = getattr(module, name, None)
    if factory is None:
        raise ConfigError(f"--agent {spec}: {where} has no {name!r}")
    if not callable(factory):
        raise ConfigError(f"--agent {spec}: {name!r} is not callable (expected a factory)")
    return factory


def _current_folder_importable() -> None:
    """Put the current folder on the import path, as ``python -m`` does: a module of the
    project (``my_agents.react:make_agent``) is found from the folder the command runs in
    (the ``agentproc`` script's own folder is on the path instead)."""
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        return f"it called sys.exit({exc.code!r}) at import"
    text = f"{type(exc).__name__}: {exc}"
    return text.splitlines()[0] if text.strip() else type(exc).__name__


def factory_episodes(factory: AgentFactory, agent: str, options: ModelRunOptions) -> EpisodeFn:
    """Episodes of the agent a factory builds afresh for each scenario, under the guard,
    budget, variant and order policy of ``options``."""

    async def episode(scenario: Scenario, trial: int = 0) -> Episode:
        # The agent owns its randomness; the trial draws a variant's pre-fill.
        return await arun_agent_episode(
            scenario,
            factory,
            agent,
            guard=options.guard,
            budget=options.budget,
            variant=options.variant,
            order=options.order,
            trial=trial,
        )

    return episode
