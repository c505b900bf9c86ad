"""The procedure horizon: the fit, its interval, and never an extrapolated figure."""

from __future__ import annotations

import math
import random

import pytest

from agentproc.analysis.measures.horizon import LEVELS, horizon

LENGTHS = (5, 15, 25, 35, 45, 55, 65, 75, 85, 95)


@pytest.mark.parametrize("p", [0.01, 0.02, 0.04])
@pytest.mark.parametrize("level", [0.5, 0.8])
def test_an_agent_erring_independently_per_step_has_its_known_horizon(p, level):
    # success (1 - p) ** steps: the horizon is log(level) / log(1 - p) steps
    rows = [(n, round(100_000 * (1 - p) ** n), 100_000) for n in LENGTHS]
    h = horizon(rows, level)
    truth = math.log(level) / math.log(1 - p)
    assert h.steps == pytest.approx(truth, rel=0.01)
    assert h.low is not None and h.high is not None and h.low < truth < h.high


def test_an_agent_that_passes_everything_is_beyond_the_longest_length():
    h = horizon([(n, 3, 3) for n in (5, 10, 25) for _ in range(4)])
    assert (h.steps, h.beyond, h.low, h.high) == (None, True, 25, None)
    assert h.text() == "beyond 25 (the longest tested); lower bound 25"


def test_an_agent_that_fails_everything_is_below_the_shortest_length():
    h = horizon([(n, 0, 2) for n in (5, 10, 25) for _ in range(4)])
    assert (h.steps, h.beyond, h.low, h.high) == (None, False, None, 5)
    assert h.text() == "below 5 (the shortest tested); upper bound 5"


def test_one_length_has_no_fit():
    h = horizon([(10, 2, 3)] * 5)
    assert not h.fitted and h.text() == "no fit (one length tested: 10)"
    assert h.to_json()["steps"] is None


def test_separated_outcomes_give_a_finite_horizon_between_the_lengths_that_part_them():
    # every 5- and 10-step procedure passed, every 25- and 50-step one failed
    rows = [(5, 3, 3)] * 5 + [(10, 3, 3)] * 5 + [(25, 0, 3)] * 5 + [(50, 0, 3)] * 5
    for level in LEVELS:
        h = horizon(rows, level)
        assert h.steps is not None and h.low is not None and h.high is not None
        # bounded, about the lengths that part them (15 of 15 at 10 steps does not rule
        # out 80% success a little before 10)
        assert 9 <= h.low < h.steps < h.high <= 25


def test_trials_that_copy_their_scenario_do_not_narrow_the_interval():
    rng = random.Random(3)
    outcomes = [(n, rng.random() < 0.98**n) for n in LENGTHS for _ in range(8)]
    independent = horizon([(n, int(ok), 1) for n, ok in outcomes])
    copies = horizon([(n, 3 * int(ok), 3) for n, ok in outcomes])  # three identical trials
    assert copies.low is not None and independent.low is not None
    assert copies.steps == pytest.approx(independent.steps, rel=0.05)
    width = lambda h: math.log(h.high) - math.log(h.low)  # noqa: E731
    assert width(copies) == pytest.approx(width(independent), rel=0.15)


def test_the_interval_covers_the_true_horizon_of_a_simulated_agent():
    rng, p, covered, reps = random.Random(7), 0.03, 0, 200
    truth = math.log(0.5) / math.log(1 - p)
    for _ in range(reps):
        rows = [
            (n, sum(rng.random() < (1 - p) ** n for _ in range(2)), 2)
            for n in LENGTHS
            for _ in range(5)
        ]
        h = horizon(rows)
        low = 0.0 if h.low is None else h.low
        high = math.inf if h.high is None else h.high
        covered += low <= truth <= high
    assert covered / reps >= 0.93


def test_the_json_form_says_each_figure_or_null_and_the_text():
    h = horizon([(n, round(1000 * 0.98**n), 1000) for n in LENGTHS])
    data = h.to_json()
    assert data["level"] == 0.5 and data["shortest"] == 5 and data["longest"] == 95
    assert data["steps"] == pytest.approx(34.3, abs=0.3)
    assert data["beyond"] is None and data["text"] == h.text()


# A real model's horizon read backwards: faithful 2/4, 0/4, 4/4, 1/4 at 3, 5, 8 and 12
# steps (success does not fall with length: the fitted slope has the other sign).
REAL = [(3, 2, 4), (5, 0, 4), (8, 4, 4), (12, 1, 4)]
# A subset of it: 0/6 at 3 to 5 steps, 5/5 at 8 to 12.
RISE = [(3, 0, 3), (5, 0, 3), (8, 3, 3), (12, 2, 2)]


@pytest.mark.parametrize("rows", [REAL, RISE, RISE * 3], ids=["real", "rise", "rise x3"])
def test_success_that_does_not_fall_with_length_has_no_horizon(rows):
    for level in LEVELS:
        h = horizon(rows, level)
        assert h.text() == "success does not fall with length over 3 to 12 steps"
        assert (h.steps, h.low, h.high, h.beyond, h.trend) == (None,) * 4 + ("does not fall",)
        data = h.to_json()
        assert data["steps"] is None and data["ci"] == [None, None]
        assert data["trend"] == "does not fall" and data["text"] == h.text()


def test_episodes_passed_straight_to_the_fit_never_put_a_point_outside_its_interval():
    # one row an episode: 0 of 6 at 3 and 5 steps, 5 of 5 at 8 and 12 (three times over),
    # once read "beyond 12 [5.35, 8.95]"
    episodes = [(n, int(n > 5), 1) for n in (3, 3, 3, 5, 5, 5, 8, 8, 8, 12, 12)] * 3
    for level in LEVELS:
        h = horizon(episodes, level)
        assert h.beyond is not True or h.high is None, h.text()
        assert h.text() == "success does not fall with length over 3 to 12 steps"


def test_a_plain_fall_near_separation_is_bounded_never_beyond_the_longest():
    # faithful 3/20, 1/20, 0/20, 0/20, 0/20 at 5 to 80 steps: the fall is plain
    rows = [(5, 3, 20), (10, 1, 20), (20, 0, 20), (40, 0, 20), (80, 0, 20)]
    episodes = [(n, int(i < k), 1) for n, k, m in rows for i in range(m)]
    for data in (rows, episodes):
        for level in LEVELS:
            h = horizon(data, level)
            assert h.text() == "below 5 (the shortest tested); upper bound 5"
            assert h.beyond is False and h.high == 5
    assert horizon(episodes).trend == "falls"


def test_a_perfect_agent_is_beyond_the_longest_length_with_its_lower_bound_there():
    rows = [(n, 1, 1) for n in (5, 10) for _ in range(10)]
    h = horizon(rows)
    assert h.text() == "beyond 10 (the longest tested); lower bound 10"
    assert h.low == 10 and h.to_json()["ci"] == [10, None]


@pytest.mark.parametrize("seed", range(40))
def test_a_point_estimate_is_never_outside_its_own_interval(seed):
    rng = random.Random(seed)
    lengths = rng.sample([3, 5, 8, 12, 20, 35, 60, 100], rng.randint(2, 5))
    per, trials = rng.randint(1, 6), rng.choice([1, 1, 3])
    shape = rng.choice([-1.0, -0.3, 0.0, 0.5, 1.0, 3.0])  # rising, flat, falling, steep
    mid = rng.choice(lengths)
    rows = [
        (
            n,
            sum(rng.random() < math.exp(-math.log(2) * (n / mid) ** shape) for _ in range(trials)),
            trials,
        )
        for n in lengths
        for _ in range(per)
    ]
    for level in LEVELS:
        h = horizon(rows, level)
        low = -math.inf if h.low is None else h.low
        high = math.inf if h.high is None else h.high
        if h.steps is not None:
            assert low <= h.steps <= high and h.beyond is None
        if h.beyond is True:
            assert h.high is None and h.low is not None and h.low >= h.shortest
        if h.beyond is False:
            assert h.low is None and h.high is not None and h.high <= h.longest
        if h.steps is None and h.beyond is None:  # no horizon claimed: no bound either
            assert (h.low, h.high) == (None, None)
        assert low <= high


def test_a_fall_not_shown_claims_no_length_inside_the_tested_ones():
    # 7/10, 7/10, 7/10, 3/10, 4/10 over 5 to 80 steps: the fit crosses 50% near 30 steps,
    # but a flat curve is not rejected
    rows = [
        (n, int(i < k), 1)
        for n, k in ((5, 7), (10, 7), (20, 7), (40, 3), (80, 4))
        for i in range(10)
    ]
    h = horizon(rows)
    assert h.trend == "not shown to fall" and not h.claimed
    assert h.text() == "success is not shown to fall with length over 5 to 80 steps"
