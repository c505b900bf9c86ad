"""Which first runs of steps ran in order: the rule behind ``reordered``.

Under the ``listed`` order policy, among the first executions of steps, the fewest whose
removal leaves the rest in listed order are the ones labelled; :func:`kept_in_order` finds
the rest. Under ``dependency``, a step is in order when every step whose output it reads
ran before it (:func:`ran_too_early` finds those that ran before one that ran later);
steps whose inputs are all available may then come in any order, several in one message.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from typing import Literal

OrderPolicy = Literal["listed", "dependency"]
"""What order the monitor holds calls to: the listed order of the steps, or only their
dependencies (a step whose operands have all been produced is in order)."""
ORDER_POLICIES: tuple[OrderPolicy, ...] = ("listed", "dependency")

_NEVER = 1 << 62


def kept_in_order(steps: list[int]) -> list[int]:
    """Positions of a longest increasing subsequence that keeps the latest calls.

    Keeping the latest possible positions labels the earliest ones, so a step
    that ran too early is the one reported as reordered.
    """
    n = len(steps)
    starting = [0] * n  # length of the longest increasing run starting at i
    tails: list[int] = []
    for i in range(n - 1, -1, -1):
        x = -steps[i]
        pos = bisect_left(tails, x)
        if pos == len(tails):
            tails.append(x)
        else:
            tails[pos] = x
        starting[i] = pos + 1
    need = len(tails)
    kept: list[int] = []
    last = -_NEVER
    lo = 0
    while need:
        for q in range(n - 1, lo - 1, -1):
            if starting[q] == need and steps[q] > last:
                kept.append(q)
                last, lo, need = steps[q], q + 1, need - 1
                break
    return kept


def ran_too_early(run_at: Mapping[int, int], depends_on: Sequence[tuple[int, ...]]) -> list[int]:
    """The steps (in the order they first ran) that first ran before a step they read,
    which ran later: ``run_at`` maps each step to the entry of its first run, in the order
    they ran. A step that reads one never run is not among them (as under the listed
    policy, the step never run is a ``skipped_step``, and nothing ran out of order)."""
    return [
        step
        for step, index in run_at.items()
        if any(run_at.get(d, -1) > index for d in depends_on[step - 1])
    ]


def fewest_messages(depends_on: Sequence[tuple[int, ...]]) -> int:
    """The fewest messages of tool calls a faithful episode needs when each message holds
    every step whose inputs are available: the depth of the step graph, plus one for the
    answer (which needs the last step's value)."""
    depth: list[int] = []
    for deps in depends_on:
        depth.append(1 + max((depth[d - 1] for d in deps), default=0))
    return max(depth, default=0) + 1
