"""The paired tests and their intervals: one method for both, so they never disagree."""

from __future__ import annotations

import random

import pytest

from agentproc.analysis.paired import (
    MIN_SCENARIOS,
    clopper_pearson,
    mcnemar_test,
    signflip_test,
)
from agentproc.analysis.stats import mcnemar


@pytest.mark.parametrize(
    ("k", "n", "expected"),
    [
        # scipy.stats.binomtest(k, n).proportion_ci("exact"), to 6 decimals
        (5, 5, (0.478176, 1.0)),
        (0, 10, (0.0, 0.308497)),
        (3, 10, (0.06674, 0.652453)),
        (50, 100, (0.398321, 0.601679)),
    ],
)
def test_clopper_pearson_matches_the_exact_interval(k, n, expected):
    lo, hi = clopper_pearson(k, n)
    assert (lo, hi) == pytest.approx(expected, abs=2e-6)


def test_five_gained_none_lost_of_sixty_is_no_difference_and_its_interval_holds_zero():
    t = mcnemar_test(0, 5, 60)
    assert t.p == 0.0625 and t.method == "exact McNemar"
    assert t.ci is not None and t.ci[0] < 0 < t.ci[1]
    assert t.ci[0] <= t.diff <= t.ci[1]


@pytest.mark.parametrize("n", [12, 40, 200])
def test_mcnemar_interval_excludes_zero_exactly_when_mcnemar_rejects(n):
    for lost in range(0, 13):
        for gained in range(0, 13):
            if lost + gained > n:
                continue
            t = mcnemar_test(lost, gained, n)
            assert t.ci is not None and t.ci[0] <= t.diff <= t.ci[1]
            excludes = t.ci[0] > 0 or t.ci[1] < 0
            assert excludes == (mcnemar(lost, gained) < 0.05), (lost, gained, n)


def test_mcnemar_interval_at_exactly_p_equal_alpha_holds_zero():
    p = mcnemar(0, 6)
    t = mcnemar_test(0, 6, 60, alpha=p)
    assert t.p == p and t.ci is not None and t.ci[0] <= 0


def test_no_discordance_still_gives_an_interval_of_width_from_the_scenario_count():
    t = mcnemar_test(0, 0, 60)
    assert t.ci is not None
    assert t.ci[0] == pytest.approx(-t.ci[1]) and 0.05 < t.ci[1] < 0.07


def test_fewer_than_five_scenarios_give_no_interval():
    assert MIN_SCENARIOS == 5
    assert mcnemar_test(0, 4, 4).ci is None
    assert signflip_test([0.6, 0.6, 0.6, 0.6]).ci is None
    assert signflip_test([0.6, 0.6, 0.6, 0.6]).p == pytest.approx(2 / 16)


def test_signflip_with_one_trial_values_is_mcnemar():
    diffs = [1.0] * 9 + [-1.0] * 2 + [0.0] * 1  # twelve units: every sign vector
    assert signflip_test(diffs).p == pytest.approx(mcnemar(2, 9))


def test_signflip_exact_p_of_six_same_signed_scenarios():
    t = signflip_test([0.5, 1.0, 0.25, 0.75, 1.0, 0.5])
    assert t.p == pytest.approx(2 / 64) and t.min_p == pytest.approx(2 / 64)
    assert t.ci is not None and 0 < t.ci[0] <= t.diff <= t.ci[1]


def test_signflip_interval_values_are_pinned_for_a_seeded_input():
    # many units (random sign vectors) with values other than 0 and 1
    rng = random.Random(4)
    diffs = [rng.choice([1.0, 0.5, 0.0, -0.5, -1.0, 0.25, 0.0, 0.0]) for _ in range(40)]
    t = signflip_test(diffs, seed=3)
    assert t.diff == pytest.approx(-0.18125)
    assert t.p == pytest.approx(0.12243878060969515)
    assert t.ci == pytest.approx((-0.4, 0.046875), abs=1e-6)
    assert signflip_test(diffs, seed=3) == t
    assert signflip_test(diffs, seed=4).ci != t.ci


def test_signflip_interval_excludes_zero_exactly_when_the_test_rejects():
    rng = random.Random(8)
    for _ in range(150):
        n = rng.choice([6, 9, 15, 30])
        shift = rng.choice([0.0, 0.2, 0.4])
        diffs = [max(-1.0, min(1.0, round(rng.gauss(shift, 0.5) * 4) / 4)) for _ in range(n)]
        t = signflip_test(diffs, seed=rng.randrange(100))
        assert t.ci is not None
        excludes = t.ci[0] > 0 or t.ci[1] < 0
        assert excludes == (t.p < 0.05), diffs


def test_signflip_interval_at_exactly_p_equal_alpha_holds_zero():
    diffs = [0.5, 1.0, 0.25, 0.75, 1.0, 0.5]
    p = signflip_test(diffs).p
    t = signflip_test(diffs, alpha=p)
    assert t.ci is not None and t.ci[0] <= 0 <= t.ci[1]
