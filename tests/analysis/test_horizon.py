"""The procedure horizon: the fit, its interval, and never an extrapolated figure."""

from __future__ import annotations

import math
import random

import pytest

from agentproc.analysis.horizon import horizon

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
    assert (h.steps, h.beyond, h.high) == (None, True, None)
    assert h.text().startswith("beyond 25 (the longest tested) [")


def test_an_agent_that_fails_everything_is_below_the_shortest_length():
    h = horizon([(n, 0, 2) for n in (5, 10, 25) for _ in range(4)])
    assert (h.steps, h.beyond, h.low) == (None, False, None)
    assert h.text().startswith("below 5 (the shortest tested) [below 5, ")


def test_one_length_has_no_fit():
    h = horizon([(10, 2, 3)] * 5)
    assert not h.fitted and h.text() == "no fit (one length tested: 10)"
    assert h.to_json()["steps"] is None


def test_separated_outcomes_give_a_finite_horizon_between_the_lengths_that_part_them():
    # every 5- and 10-step procedure passed, every 25- and 50-step one failed
    rows = [(5, 3, 3)] * 5 + [(10, 3, 3)] * 5 + [(25, 0, 3)] * 5 + [(50, 0, 3)] * 5
    h = horizon(rows)
    assert h.steps is not None and 10 < h.steps < 25
    assert h.low is not None and h.high is not None and h.low < 12 and h.high > 20


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
