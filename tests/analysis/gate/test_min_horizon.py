"""``check --min-horizon``: the lower bound of the 50% faithful horizon against STEPS."""

from __future__ import annotations

import random

import pytest

from agentproc.analysis.gate.min_horizon import held, min_horizon
from agentproc.analysis.measures.horizon import Horizon, horizon
from agentproc.analysis.measures.trials import Outcome, faithful_rows
from agentproc.errors import ConfigError

LENGTHS = (5, 10, 20, 40, 80)


def outcome(sid: str, trial: int, steps: int, faithful: bool) -> Outcome:
    return Outcome(
        sid, trial, steps, 1, f"N{steps}", faithful, faithful, False, frozenset(),
        frozenset(), "x",
    )  # fmt: skip


def run(p: float, per: int = 12, trials: int = 1, seed: int = 1) -> list[Outcome]:
    """Episodes of an agent that leaves the procedure with chance ``p`` at each step."""
    rng = random.Random(seed)
    return [
        outcome(f"{n}-{i}", t, n, rng.random() < (1 - p) ** n)
        for n in LENGTHS
        for i in range(per)
        for t in range(trials)
    ]


def test_the_rows_are_the_scenarios_faithful_episodes_over_their_trials():
    episodes = [outcome("a", 0, 5, True), outcome("a", 1, 5, False), outcome("b", 0, 9, True)]
    got = faithful_rows(episodes)
    assert sorted(got) == [(5, 1, 2), (9, 1, 1)]


def test_a_lower_bound_at_least_steps_passes_and_one_below_fails():
    episodes = run(0.02, per=20)  # true horizon 34.3 steps
    h = horizon(faithful_rows(episodes))
    assert h.low is not None and 10 < h.low < 34.3
    passed, line = min_horizon(episodes, h.low - 0.5)
    assert passed and f"its lower bound {h.low:.3g} is at least" in line
    passed, line = min_horizon(episodes, h.low + 0.5)
    assert not passed and f"its lower bound {h.low:.3g} is below --min-horizon" in line
    assert line.startswith(f"faithful 50% horizon {h.text()}: ")


def test_the_point_alone_never_passes_the_gate():
    episodes = run(0.02, per=20)
    h = horizon(faithful_rows(episodes))
    assert h.steps is not None and h.low is not None and h.low < 24 < h.steps
    assert min_horizon(episodes, 24)[0] is False


def test_a_horizon_below_the_shortest_length_fails_whatever_steps():
    episodes = run(0.5)
    passed, line = min_horizon(episodes, 1)
    assert not passed and "below the shortest length tested" in line


def test_a_horizon_beyond_the_longest_length_passes_up_to_it_and_never_past_it():
    episodes = [outcome(f"{n}-{i}", 0, n, True) for n in LENGTHS for i in range(6)]
    assert min_horizon(episodes, 80) == (
        True,
        "faithful 50% horizon beyond 80 (the longest tested); lower bound 80: its lower "
        "bound 80 is at least --min-horizon 80",
    )
    passed, line = min_horizon(episodes, 81)
    assert not passed and line.endswith("--min-horizon 81 is past the longest length tested (80)")


def test_a_perfect_agent_passes_on_the_lower_bound_it_prints_never_below_the_shortest():
    # every episode faithful at 5 and 10 steps: the lower bound is the longest length
    episodes = [outcome(f"{n}-{i}", 0, n, True) for n in (5, 10) for i in range(10)]
    assert min_horizon(episodes, 8) == (
        True,
        "faithful 50% horizon beyond 10 (the longest tested); lower bound 10: its lower "
        "bound 10 is at least --min-horizon 8",
    )


def test_success_that_does_not_fall_with_length_fails_with_that_reason():
    # 0 of 6 faithful at 3 and 5 steps, 5 of 5 at 8 and 12: success rises with length
    episodes = [
        outcome(f"{n}-{i}", 0, n, n > 5) for n, count in ((3, 3), (5, 3), (8, 3), (12, 2))
        for i in range(count)
    ]  # fmt: skip
    assert min_horizon(episodes, 4) == (
        False,
        "no faithful 50% horizon: success does not fall with length over 3 to 12 steps, so "
        "nothing says where it falls to 50% and no horizon is shown to be at least "
        "--min-horizon 4",
    )


@pytest.mark.parametrize(("low", "least", "passed"), [(7.996, 8, True), (8.044, 8.042, False)])
def test_the_gate_decides_on_the_lower_bound_as_it_prints_it(low, least, passed):
    h = Horizon(0.5, 20.0, low, 30.0, 5, 80, None, 30, "falls")
    got, line = held(h, least)
    shown = f"{low:.3g}"
    assert got is passed and f"its lower bound {shown} is" in line
    assert (float(shown) >= least) is passed  # what it prints is what it decides on
    assert line.startswith(f"faithful 50% horizon {h.text()}: ")


@pytest.mark.parametrize("seed", range(8))
def test_a_pass_is_exactly_a_printed_lower_bound_at_least_steps(seed):
    rng = random.Random(seed)
    episodes = run(rng.choice([0.005, 0.01, 0.02, 0.05]), per=rng.choice([4, 12]), seed=seed)
    h = horizon(faithful_rows(episodes))
    for least in (3, 5, 12, 30, 80):
        passed, line = min_horizon(episodes, least)
        printed = (h.steps is not None or h.beyond is True) and h.low is not None
        assert passed == (printed and float(f"{h.low:.3g}") >= least), line


def test_one_length_has_no_horizon_and_fails():
    passed, line = min_horizon([outcome(str(i), 0, 10, True) for i in range(5)], 5)
    assert not passed and "no fit (one length tested: 10)" in line


def test_nothing_scored_fails():
    assert min_horizon([], 5) == (False, "no scored episode: no horizon to hold to --min-horizon")


@pytest.mark.parametrize("steps", [0, -3])
def test_steps_not_above_0_is_a_config_error(steps):
    with pytest.raises(ConfigError, match="--min-horizon is a number of steps above 0"):
        min_horizon(run(0.02), steps)
