"""What identifies a stored episode (scenario, agent, mode, variant, trial), read from its
record with the defaults of files that predate a field.

Light to import (no pydantic, no workflow): merging shard files needs only this.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentproc.runs.episode import Mode

EpisodeKey = tuple[str, str, str, str, int]
"""Scenario id, agent, mode, variant and trial."""


def episode_key(rec: Mapping[str, Any]) -> EpisodeKey:
    """What identifies an episode across files and re-runs: scenario, agent, mode, variant
    and trial."""
    return (
        str(rec["scenario_id"]),
        str(rec["agent"]),
        record_mode(rec),
        record_variant(rec),
        record_trial(rec),
    )


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
