"""Which first runs of steps ran in order: the rule behind ``reordered``.

Among the first executions of steps, the fewest whose removal leaves the rest in listed
order are the ones labelled; :func:`kept_in_order` finds the rest.
"""

from __future__ import annotations

from bisect import bisect_left

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
