"""How a suite is split into shards: by a hash of each scenario id alone, so any machine
cuts it the same way, and shards (or spans of them) can run anywhere and be merged.

Light to import (no pydantic, no workflow): the parent of ``run --workers`` names its
spans with it.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

from agentproc.errors import ConfigError

Shard = tuple[int, int, int]
"""Shards ``first`` to ``last`` of ``count``, numbered from 1: ``--shard 2/4`` is
``(2, 2, 4)``, ``--shard 1-3/8`` is ``(1, 3, 8)``."""


def parse_shard(text: str) -> Shard:
    """``"2/4"`` -> ``(2, 2, 4)``: the second of four shards; ``"1-3/8"`` -> ``(1, 3, 8)``:
    the first three of eight (numbered from 1)."""
    try:
        span, count = text.split("/")
        first, dash, last = span.partition("-")
        shard = (int(first), int(last if dash else first), int(count))
    except ValueError:
        raise ConfigError(
            f"--shard must look like i/n or i-j/n, e.g. 1/4 or 1-2/8 (not {text!r})"
        ) from None
    if not 1 <= shard[0] <= shard[1] <= shard[2]:
        raise ConfigError(f"--shard {text}: i (and j) must be between 1 and n, i before j")
    return shard


def in_shard(scenario_id: str, shard: Shard | tuple[int, int] | None) -> bool:
    """Whether a scenario belongs to a shard (or a span of shards, :data:`Shard`); the
    split depends on the id alone. ``(i, n)`` is shard ``i`` of ``n``."""
    if shard is None:
        return True
    first, last, count = shard if len(shard) == 3 else (shard[0], shard[0], shard[1])
    return first - 1 <= _slot(scenario_id) % count <= last - 1


@lru_cache(maxsize=1 << 17)
def _slot(scenario_id: str) -> int:
    """The number a scenario's shard is read from: the first 8 bytes of its id's SHA-256.
    Kept for the ids seen last: a worker running a suite's spans one after another reads
    the suite's ids once per span."""
    return int.from_bytes(hashlib.sha256(scenario_id.encode()).digest()[:8], "big")


def shard_spec(shard: Shard) -> str:
    """The ``--shard`` text of a span: ``3/64`` or ``1-16/64``."""
    first, last, count = shard
    return f"{first}/{count}" if first == last else f"{first}-{last}/{count}"
