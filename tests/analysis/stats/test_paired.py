"""The paired tests and their intervals: one method for both, so they never disagree."""

from __future__ import annotations

import random

import pytest

from agentproc.analysis.stats.exact import mcnemar
from agentproc.analysis.stats.paired import (
    MIN_SCENARIOS,
    clopper_pearson,
    mcnemar_test,
    signflip_test,
)


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


def test_signflip_interval_values_are_pinned():
    # many units with values other than 0 and 1: the exact distribution, no resampling
    rng = random.Random(4)
    diffs = [rng.choice([1.0, 0.5, 0.0, -0.5, -1.0, 0.25, 0.0, 0.0]) for _ in range(40)]
    t = signflip_test(diffs)
    assert t.diff == pytest.approx(-0.18125)
    assert t.p == pytest.approx(_brute_p(diffs), rel=1e-9)
    assert t.ci is not None and t.ci[0] <= t.diff <= t.ci[1] and t.ci[0] < 0 < t.ci[1]
    assert signflip_test(diffs) == t


def _brute_p(diffs):
    """The two-sided sign-flip p by counting the sums of every sign vector, on quarters."""
    from collections import Counter

    sums = Counter({0: 1})
    for d in diffs:
        w = round(abs(d) * 4)
        nxt = Counter()
        for s, c in sums.items():
            nxt[s + w] += c
            nxt[s - w] += c
        sums = nxt
    obs = abs(round(sum(diffs) * 4))
    return sum(c for s, c in sums.items() if abs(s) >= obs) / 2 ** len(diffs)


@pytest.mark.parametrize("seed", range(6))
def test_signflip_p_is_the_exact_count_over_every_sign_vector(seed):
    rng = random.Random(seed)
    diffs = [rng.choice([1.0, 0.75, 0.5, 0.25, 0.0, -0.25, -0.5, -1.0]) for _ in range(14)]
    assert signflip_test(diffs).p == pytest.approx(_brute_p(diffs), rel=1e-12)


@pytest.mark.parametrize("n", [20, 60, 200])
def test_signflip_on_one_trial_values_is_mcnemar_test_exactly(n):
    rng = random.Random(n)
    for _ in range(20):
        diffs = [rng.choice([1.0, -1.0, 0.0, 0.0, 0.0]) for _ in range(n)]
        a = signflip_test(diffs)
        b = mcnemar_test(diffs.count(-1.0), diffs.count(1.0), n)
        assert a.p == pytest.approx(b.p, rel=1e-9) and a.min_p == pytest.approx(b.min_p)
        assert a.ci == pytest.approx(b.ci, abs=1e-6)


def test_identical_arms_with_trials_keep_an_interval_of_the_one_trial_width():
    # 30 scenarios x 3 trials, no scenario differs: the one-trial interval, never zero width
    t = signflip_test([0.0] * 30)
    assert t.ci == pytest.approx(mcnemar_test(0, 0, 30).ci)
    assert t.ci is not None and t.ci[1] == pytest.approx(0.1135, abs=1e-4)


def test_one_rare_discordant_scenario_does_not_collapse_the_interval():
    t = signflip_test([1 / 3] + [0.0] * 59)
    assert t.ci is not None and t.ci[0] < -0.01 and t.ci[1] > 0.05
    assert t.p == 1.0


def test_a_collapse_with_trials_can_reach_p_below_every_holm_level_of_a_large_family():
    # 60 scenarios x 3 trials, 53% faithful -> 0%: p far below 0.05 / (2 * 252)
    rng = random.Random(1)
    diffs = [-rng.choice([0.0, 1 / 3, 2 / 3, 1.0]) for _ in range(60)]
    t = signflip_test(diffs)
    assert t.p < 0.05 / 504 and t.min_p < 1e-9


def test_signflip_interval_covers_near_deterministic_designs():
    # most scenarios always pass or always fail in both arms; a true +1 point effect
    rng = random.Random(11)
    covered = runs = 0
    for _ in range(300):
        diffs = []
        for _ in range(60):
            base = rng.random() < 0.5
            rate = 1.0 if base else 0.0
            gain = [rng.random() < 0.01 and not base for _ in range(3)]
            diffs.append(sum(gain) / 3 * (1 - rate))
        t = signflip_test(diffs)
        assert t.ci is not None and t.ci[1] > t.ci[0]
        runs += 1
        covered += t.ci[0] <= 0.005 <= t.ci[1]
    assert covered / runs >= 0.93


def test_signflip_interval_excludes_zero_exactly_when_the_test_rejects():
    rng = random.Random(8)
    for _ in range(150):
        n = rng.choice([6, 9, 15, 30])
        shift = rng.choice([0.0, 0.2, 0.4])
        diffs = [max(-1.0, min(1.0, round(rng.gauss(shift, 0.5) * 4) / 4)) for _ in range(n)]
        t = signflip_test(diffs)
        assert t.ci is not None
        excludes = t.ci[0] > 0 or t.ci[1] < 0
        assert excludes == (t.p < 0.05), diffs


def test_signflip_interval_at_exactly_p_equal_alpha_holds_zero():
    diffs = [0.5, 1.0, 0.25, 0.75, 1.0, 0.5]
    p = signflip_test(diffs).p
    t = signflip_test(diffs, alpha=p)
    assert t.ci is not None and t.ci[0] <= 0 <= t.ci[1]


@pytest.mark.parametrize(("k", "n"), [(-1, 5), (6, 5)])
def test_clopper_pearson_refuses_successes_outside_zero_to_n(k: int, n: int) -> None:
    with pytest.raises(ValueError, match="k must lie in"):
        clopper_pearson(k, n)


@pytest.mark.parametrize("alpha", [0.0, 1.0, 5.0])
def test_every_paired_interval_refuses_an_alpha_outside_zero_to_one(alpha: float) -> None:
    with pytest.raises(ValueError, match="alpha must lie strictly between 0 and 1"):
        clopper_pearson(2, 5, alpha)
    with pytest.raises(ValueError, match="alpha must lie strictly between 0 and 1"):
        mcnemar_test(1, 4, 20, alpha)
    with pytest.raises(ValueError, match="alpha must lie strictly between 0 and 1"):
        signflip_test([0.5] * 6, alpha)


def test_mcnemar_refuses_more_discordant_pairs_than_pairs() -> None:
    with pytest.raises(ValueError, match="lost and gained must be pairs of the n"):
        mcnemar_test(3, 4, 5)


def test_the_sign_flip_test_refuses_a_difference_that_is_not_of_two_shares() -> None:
    with pytest.raises(ValueError, match=r"diffs must lie in \[-1, 1\]"):
        signflip_test([0.5] * 5 + [float("nan")])
