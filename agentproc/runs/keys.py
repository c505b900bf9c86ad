"""What identifies a stored episode (scenario, agent, mode, variant, trial), read from its
record with the defaults of files that predate a field. The agent is its spec, the name its
run was given and its setup: the run's ``settings`` that change what it sees or does (guard,
endpoint, tool choice, token cap, budget, seed), so that two runs that differ in one are two
agents, never one whose records supersede the other's.

Light to import (no pydantic, no workflow): merging shard files needs only this.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from agentproc.errors import RunFileError

if TYPE_CHECKING:
    from agentproc.labelling.order import OrderPolicy
    from agentproc.runs.episode import Mode

EpisodeKey = tuple[str, str, str, str, int]
"""Scenario id, agent (see :func:`agent_identity`), mode, variant and trial."""

SETTING_OPTIONS: dict[str, str] = {
    "guard": "--guard",
    "endpoint": "--base-url",
    "tool_choice": "--tool-choice",
    "max_tokens": "--max-tokens",
    "budget": "--budget",
    "continue_after_answer": "--continue-after-answer",
    "seed": "--seed",
}
"""A run's ``settings`` (:class:`~agentproc.runs.records.SettingsRecord`), each with the
option that sets it, in the order a setup names them."""


def episode_key(rec: Mapping[str, Any]) -> EpisodeKey:
    """What identifies an episode across files and re-runs: scenario, agent (its name,
    what ran it and its setup: two runs of one endpoint under two names are two agents,
    and so are a run named after another agent and that agent, and two runs of one model
    on two endpoints), mode, variant and trial."""
    name = rec.get("name")
    return (
        str(rec["scenario_id"]),
        agent_identity(
            str(rec["agent"]), name if isinstance(name, str) else None, record_setup(rec)
        ),
        record_mode(rec),
        record_variant(rec),
        record_trial(rec),
    )


def agent_identity(agent: str, name: str | None, setup: str = "") -> str:
    """The agent part of an :data:`EpisodeKey`: the agent spec of an unnamed run (or of a
    run named as its spec), else the run's name and what ran it; then its setup, if any.

    >>> agent_identity("sim:decay", None), agent_identity("sim:decay", "sim:oracle")
    ('sim:decay', 'sim:oracle (sim:decay)')
    >>> agent_identity("local", None, "--tool-choice auto")
    'local [--tool-choice auto]'
    """
    who = agent if not name or name == agent else f"{name} ({agent})"
    return f"{who} [{setup}]" if setup else who


def setup_text(settings: Mapping[str, Any] | None) -> str:
    """What a run was set up with, as the options that set it (empty: the defaults).

    >>> setup_text({"tool_choice": "auto", "endpoint": "http://h:1/v1", "guard": "enforce"})
    '--guard enforce, --base-url http://h:1/v1, --tool-choice auto'
    >>> setup_text({"continue_after_answer": True}), setup_text(None)
    ('--continue-after-answer', '')
    """
    parts: list[str] = []
    given = dict(settings or {})
    for key in [
        *(k for k in SETTING_OPTIONS if k in given),
        *sorted(given.keys() - SETTING_OPTIONS.keys()),
    ]:
        option, value = SETTING_OPTIONS.get(key, key), given[key]
        parts.append(option if value is True else f"{option} {value}")
    return ", ".join(parts)


def record_setup(rec: Mapping[str, Any]) -> str:
    """The setup of a stored episode's run (:func:`setup_text` of its ``settings``; none
    in files written before settings were stored)."""
    settings = rec.get("settings")
    return setup_text(settings if isinstance(settings, Mapping) else None)


def record_agent(rec: Mapping[str, Any]) -> str:
    """The agent a stored episode is shown and grouped as: the name its run was given
    (``run --name``), else its agent spec (files written before names were stored).

    >>> record_agent({"agent": "openai:m", "name": "v2"}), record_agent({"agent": "sim:decay"})
    ('v2', 'sim:decay')
    """
    name = rec.get("name")
    return name if isinstance(name, str) and name else str(rec["agent"])


def record_variant(rec: Mapping[str, Any]) -> str:
    """The variant of a stored episode (``default`` for files written before it was stored)."""
    value = rec.get("variant", "default")
    return value if isinstance(value, str) else str(value)


def record_trial(rec: Mapping[str, Any]) -> int:
    """The trial of a stored episode (``0`` for files written before it was stored)."""
    value = rec.get("trial", 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def record_mode(rec: Mapping[str, Any]) -> Mode:
    """The mode of a stored episode (``tools`` for files written before it was stored)."""
    return rec.get("mode", "tools")


def record_order(
    rec: Mapping[str, Any], override: OrderPolicy | None = None, where: object = "run file"
) -> tuple[OrderPolicy, list[int] | None]:
    """The order policy to label a stored episode under (``override``, else its recorded
    ``order``, ``listed`` for files written before it was stored) and, under
    ``dependency``, its recorded ``batches`` (``None``: one call per message).

    Raises:
        RunFileError: an unknown policy, or batches that are not whole numbers of at least 1.
    """
    from agentproc.labelling.order import ORDER_POLICIES  # here: this module stays light

    policy = override or rec.get("order", "listed")
    if policy not in ORDER_POLICIES:
        expected = ", ".join(ORDER_POLICIES)
        raise RunFileError(where, f"unknown order policy {policy!r} (expected {expected})", "order")
    batches = rec.get("batches")
    if policy == "listed" or batches is None:
        return policy, None
    if not isinstance(batches, list) or not all(type(b) is int and b > 0 for b in batches):
        raise RunFileError(where, "must be a list of whole numbers of at least 1", "batches")
    return policy, batches
