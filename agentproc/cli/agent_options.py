"""The agent a command's options name, how it runs, and its response cache: what
``run``, ``compare`` and ``stress`` share."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentproc.errors import ConfigError
from agentproc.outputs import check_output

if TYPE_CHECKING:
    from agentproc.labelling.order import OrderPolicy


def agent_spec(args: argparse.Namespace) -> tuple[Any, Any]:
    """The agent the options name and how it runs (checked: the variant takes the guard),
    and the workers it runs on: ``--workers``, ``--backend`` and ``--address`` (an address
    only joins a Ray cluster; one that does not answer within ``--timeout`` fails).

    An unknown agent fails here, before any file is touched, for every backend; over
    workers each builds its own model (an embedded one is not loaded in this process too).
    """
    from agentproc.agents.retry import RetryPolicy
    from agentproc.agents.spec import AgentSpec
    from agentproc.agents.suite import ModelRunOptions
    from agentproc.runs import Workers
    from agentproc.workflow.variant import load_variant

    if args.address is not None and args.backend != "ray":
        raise ConfigError(
            "--address and --backend processes: an address is a Ray cluster's (add --backend ray)"
        )
    workers = Workers(args.workers, args.backend, args.address, connect_timeout=args.timeout)
    variant = load_variant(getattr(args, "variant", "default"))
    variant.check(args.mode, args.guard)
    order: OrderPolicy = getattr(args, "order", "listed")
    options = ModelRunOptions(
        concurrency=args.concurrency,
        guard=args.guard,
        mode=args.mode,
        budget=args.budget,
        continue_after_answer=args.continue_after_answer,
        seed=args.seed,
        retry=RetryPolicy(attempts=args.retries + 1, timeout=args.timeout),
        variant=variant,
        order=order,
        cache=cache_config(args),
        debug=args.debug,
    )
    if args.debug and workers.parallel:
        raise ConfigError("--debug stops a run in this process: drop --workers")
    spec = AgentSpec(
        args.agent, options, args.base_url, args.timeout, args.max_tokens, args.tool_choice
    )
    if workers.parallel:
        spec.check()
    return spec, workers


def cache_store(args: argparse.Namespace) -> list[Path]:
    """The response cache's store the options name (none: no cache)."""
    folder, mode = getattr(args, "cache", None), getattr(args, "cache_mode", None)
    if (folder is None and mode is None) or mode == "off":
        return []
    from agentproc.agents.cache import default_cache_dir
    from agentproc.agents.cache_store import store_path
    from agentproc.cli.option_types import CACHE_DEFAULT

    return [store_path(default_cache_dir() if folder in (None, CACHE_DEFAULT) else folder)]


def cache_config(args: argparse.Namespace) -> Any:
    """The response cache ``--cache`` and ``--cache-mode`` ask for (``None``: none)."""
    folder, mode = getattr(args, "cache", None), getattr(args, "cache_mode", None)
    if (folder is None and mode is None) or mode == "off":
        return None
    from agentproc.agents.cache import CacheConfig, check_store, default_cache_dir
    from agentproc.agents.factory import is_factory_spec
    from agentproc.cli.option_types import CACHE_DEFAULT

    if args.agent.startswith("sim:") or is_factory_spec(args.agent):
        raise ConfigError(
            f"--cache keeps the replies of a model agent (local, openai:MODEL); "
            f"{args.agent} is not one"
        )
    if folder is None or folder == CACHE_DEFAULT:
        folder = default_cache_dir()
    check_output(folder, folder=True, option="--cache")
    config = CacheConfig(folder, mode or "readwrite")
    check_store(folder, read_only=not config.writes)  # before any episode, named if unusable
    return config
