"""agentproc.labelling.order: the first runs kept in listed order (the rest are reordered)."""

from __future__ import annotations

from itertools import combinations, pairwise

from hypothesis import given
from hypothesis import strategies as st

from agentproc.labelling.order import kept_in_order


def _longest(steps: list[int]) -> int:
    for size in range(len(steps), 0, -1):
        for pos in combinations(range(len(steps)), size):
            if all(steps[a] < steps[b] for a, b in pairwise(pos)):
                return size
    return 0


@given(st.lists(st.integers(1, 9), unique=True, max_size=8))
def test_the_kept_runs_are_a_longest_increasing_run(steps: list[int]):
    kept = kept_in_order(steps)
    assert kept == sorted(kept)
    assert all(steps[a] < steps[b] for a, b in pairwise(kept))
    assert len(kept) == _longest(steps)


def test_a_step_that_ran_too_early_is_the_one_left_out():
    assert kept_in_order([2, 1, 3, 4]) == [1, 2, 3]  # step 2 ran first: it is reordered
    assert kept_in_order([1, 3, 2, 4]) == [0, 2, 3]  # step 3 ran before step 2
    assert kept_in_order([]) == []
