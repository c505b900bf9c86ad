"""Paired statistics against known answers, and their error rates on synthetic pairs."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest

from agentproc.analysis.stats.exact import (
    binomial_two_sided,
    mcnemar,
    min_detectable_effect,
    pass_hat_k,
    verdict,
)

# -- McNemar: hand-computed exact binomial p-values ---------------------------


@pytest.mark.parametrize(
    ("b", "c", "expected"),
    [
        (0, 0, Fraction(1)),
        (0, 1, Fraction(1)),  # one discordant pair: 2 * 1/2, capped
        (0, 5, Fraction(2, 32)),  # 2 * (1/2)^5
        (0, 6, Fraction(2, 64)),
        (1, 9, Fraction(2 * (1 + 10), 1024)),
        (2, 10, Fraction(2 * (1 + 12 + 66), 4096)),
        (3, 3, Fraction(1)),
        (4, 6, Fraction(2 * 386, 1024)),  # 2 * P(X <= 4 of 10), 386 = 1 + 10 + 45 + 120 + 210
        (10, 2, Fraction(2 * (1 + 12 + 66), 4096)),  # symmetric in b and c
    ],
)
def test_mcnemar_is_the_exact_two_sided_binomial_on_discordant_pairs(b, c, expected):
    assert mcnemar(b, c) == pytest.approx(float(expected), rel=1e-12)


def test_mcnemar_five_one_sided_pairs_are_not_significant_six_are():
    assert mcnemar(0, 5) > 0.05
    assert mcnemar(0, 6) < 0.05


def test_binomial_two_sided_rejects_counts_outside_the_trials():
    with pytest.raises(ValueError):
        binomial_two_sided(4, 3)


def test_mcnemar_stays_exact_for_many_pairs():
    # 500 vs 600 of 1100: the normal approximation gives about 0.0027
    p = mcnemar(500, 600)
    assert 0.002 < p < 0.004
    assert math.isfinite(p)


# -- pass^k -------------------------------------------------------------------


def test_pass_hat_k_is_the_chance_that_k_drawn_trials_all_succeed():
    # task 1: 3 of 4 -> pass^1 3/4, pass^2 C(3,2)/C(4,2) = 1/2, pass^3 1/4, pass^4 0
    # task 2: 4 of 4 -> 1 for every k
    tasks = [(3, 4), (4, 4)]
    assert pass_hat_k(tasks, 1) == pytest.approx((3 / 4 + 1) / 2)
    assert pass_hat_k(tasks, 2) == pytest.approx((1 / 2 + 1) / 2)
    assert pass_hat_k(tasks, 3) == pytest.approx((1 / 4 + 1) / 2)
    assert pass_hat_k(tasks, 4) == pytest.approx(1 / 2)


def test_pass_hat_k_matches_simulated_draws_without_replacement():
    rng = random.Random(1)
    trials = [1, 1, 0, 1, 0]
    hits = sum(all(rng.sample(trials, 2)) for _ in range(20000))
    assert pass_hat_k([(3, 5)], 2) == pytest.approx(3 / 10)
    assert hits / 20000 == pytest.approx(3 / 10, abs=0.015)


def test_pass_hat_k_leaves_out_tasks_with_too_few_trials():
    assert pass_hat_k([(1, 1), (2, 2)], 2) == 1.0
    assert pass_hat_k([(1, 1)], 2) is None
    with pytest.raises(ValueError):
        pass_hat_k([(1, 1)], 0)


# -- error rates over synthetic paired outcomes ---------------------------------


def _paired(rng: random.Random, n: int, p_base: float, p_arm: float) -> tuple[int, int]:
    """Discordant counts (baseline only, arm only) of n independent pairs."""
    b = c = 0
    for _ in range(n):
        x, y = rng.random() < p_base, rng.random() < p_arm
        b += x and not y
        c += y and not x
    return b, c


def test_no_difference_is_found_about_five_percent_of_the_time():
    rng = random.Random(2026)
    reps = 2000
    rejected = sum(mcnemar(*_paired(rng, 120, 0.5, 0.5)) < 0.05 for _ in range(reps))
    # the exact test is slightly conservative: a little under the nominal 5%
    assert 0.025 <= rejected / reps <= 0.06


def test_a_known_difference_is_detected():
    rng = random.Random(11)
    reps = 200
    # 20 points of faithful accuracy at 150 scenarios: MDE is about 15 points
    found = 0
    for _ in range(reps):
        b, c = _paired(rng, 150, 0.7, 0.5)
        found += verdict((c - b) / 150, mcnemar(b, c)) == "worse"
    assert found / reps >= 0.9


def test_minimum_detectable_effect_shrinks_with_the_square_root_of_n():
    small = min_detectable_effect([1.0] * 10 + [-1.0] * 10 + [0.0] * 80)
    large = min_detectable_effect([1.0] * 40 + [-1.0] * 40 + [0.0] * 320)
    assert small == pytest.approx(2 * large, rel=1e-9)
    # 20% discordant at n = 100: 2.80 * sqrt(0.2 / 100)
    assert small == pytest.approx(2.8016 * math.sqrt(0.2 / 100), rel=1e-3)


def test_minimum_detectable_effect_is_detected_about_80_percent_of_the_time():
    rng = random.Random(5)
    n = 200
    # one-sided discordance at the MDE's floor rate: the arm only ever loses
    mde = min_detectable_effect([0.0] * n)
    reps = 400
    found = 0
    for _ in range(reps):
        lost = sum(rng.random() < mde for _ in range(n))
        found += mcnemar(lost, 0) < 0.05
    assert 0.7 <= found / reps <= 0.95


def test_verdict_at_exactly_alpha_is_no_detectable_difference():
    assert verdict(0.1, 0.05) == "no detectable difference"
    assert verdict(0.1, 0.05 - 1e-12) == "better"


def test_minimum_detectable_effect_of_nothing_is_one_and_divides_by_nothing():
    assert min_detectable_effect([]) == 1.0
    assert min_detectable_effect([], trials=0) == 1.0
    assert min_detectable_effect([0.0] * 5) == 1.0  # five scenarios: no test can reject


def _power_exact(n: int, trials: int, effect: float) -> float:
    """Exact power of the scenario-level test when the arm gains each trial with chance
    ``effect`` and never loses: it rejects once six scenarios gained at least once
    (2 / 2**6 < 0.05), so the power is P(Binomial(n, 1 - (1 - effect)**trials) >= 6)."""
    q = 1 - (1 - effect) ** trials
    return 1 - sum(math.comb(n, i) * q**i * (1 - q) ** (n - i) for i in range(6))


@pytest.mark.parametrize(("n", "trials"), [(60, 1), (60, 3), (60, 10), (200, 3)])
def test_minimum_detectable_effect_of_the_design_has_about_80_percent_exact_power(n, trials):
    mde = min_detectable_effect([0.0] * n, trials=trials)
    assert 0.7 <= _power_exact(n, trials, mde) <= 0.9


def test_minimum_detectable_effect_with_trials_uses_the_trials_not_only_the_scenarios():
    # 60 scenarios x 3 trials: not stuck at 2.80^2 / 60 = 13.1 points
    assert min_detectable_effect([0.0] * 60, trials=3) == pytest.approx(2.8016**2 / 180, rel=1e-3)


def test_verdict_needs_significance_and_reads_the_sign():
    assert verdict(0.1, 0.01) == "better"
    assert verdict(-0.1, 0.01) == "worse"
    assert verdict(0.3, 0.2) == "no detectable difference"
    assert verdict(0.0, 0.01) == "no detectable difference"
