"""The paired difference of two arms' procedure horizons: its test and interval agree,
it finds a known ratio, pairing by scenario narrows it, and it never extrapolates."""

from __future__ import annotations

import dataclasses
import math
import random

import pytest

from agentproc.analysis.compare.horizon_diff import horizon_difference
from agentproc.analysis.measures.horizon import horizon
from agentproc.analysis.stats.student_t import t_pvalue, t_quantile

LENGTHS = (5, 10, 20, 40, 80)


def arms(
    p0: float, p1: float, per: int = 10, trials: int = 1, spread: float = 0.0, seed: int = 0
) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]:
    """Two agents leaving the procedure with chance ``p0`` and ``p1`` a step, over the same
    scenarios (a scenario's difficulty, up to ``1 +- spread``, shared by both)."""
    rng = random.Random(seed)
    base, arm = [], []
    for n in LENGTHS:
        for _ in range(per):
            f = 1 + rng.uniform(-spread, spread)
            for rows, p in ((base, p0), (arm, p1)):
                k = sum(rng.random() < (1 - p * f) ** n for _ in range(trials))
                rows.append((n, k, trials))
    return base, arm


def test_an_arm_erring_half_as_often_has_twice_the_horizon_and_is_longer():
    base, arm = arms(0.04, 0.02, per=30, trials=3)
    d = horizon_difference(base, arm)
    assert d.ratio == pytest.approx(math.log(0.96) / math.log(0.98), rel=0.25)
    assert d.ci is not None and 1 < d.ci[0] < d.ratio < d.ci[1]
    assert d.verdict == "longer" and d.p is not None and d.p < 0.05
    assert d.diff == pytest.approx(d.arm.steps - d.baseline.steps)
    assert d.text().startswith(f"{d.diff:+.3g} steps (x{d.ratio:.3g} [")


def test_swapping_the_arms_inverts_the_ratio_and_its_interval():
    base, arm = arms(0.04, 0.02, per=12, seed=4)
    d, back = horizon_difference(base, arm), horizon_difference(arm, base)
    assert back.ratio == pytest.approx(1 / d.ratio)
    assert back.ci == pytest.approx((1 / d.ci[1], 1 / d.ci[0]))
    assert back.p == pytest.approx(d.p)


@pytest.mark.parametrize("seed", range(12))
def test_the_interval_excludes_1_exactly_when_the_test_rejects(seed):
    base, arm = arms(0.03, 0.03 * (0.6 + 0.05 * seed), per=12, seed=seed)
    d = horizon_difference(base, arm)
    assert d.ci is not None and d.p is not None
    assert (d.ci[0] > 1 or d.ci[1] < 1) == (d.p < 0.05)
    for level in (0.9, 0.99):  # at any level, as Holm asks
        at = dataclasses.replace(d, level=level)
        assert (at.ci[0] > 1 or at.ci[1] < 1) == (d.p < 1 - level)


def test_equal_agents_get_a_false_verdict_rarely():
    false = sum(
        horizon_difference(*arms(0.02, 0.02, per=6, seed=s)).significant for s in range(120)
    )
    assert false / 120 <= 0.09


def test_a_difficulty_both_arms_share_narrows_the_interval_against_unpaired_scenarios():
    base, arm = arms(0.03, 0.02, per=12, trials=3, spread=0.9, seed=2)
    paired = horizon_difference(base, arm)
    rng = random.Random(0)
    shuffled = []  # the arm's scenarios of each length in another order: pairing broken
    for n in LENGTHS:
        rows = [r for r in arm if r[0] == n]
        rng.shuffle(rows)
        shuffled += rows
    unpaired = horizon_difference(base, shuffled)
    assert paired.ratio == pytest.approx(unpaired.ratio)  # the fits are the same
    assert paired.se is not None and unpaired.se is not None and paired.se < unpaired.se


def test_a_horizon_out_of_the_tested_lengths_cannot_be_compared_and_says_which():
    base, _ = arms(0.03, 0.03, trials=2)
    assert horizon(base).steps is not None
    perfect = [(n, 2, 2) for n, _, _ in base]
    d = horizon_difference(base, perfect)
    assert (d.ratio, d.ci, d.p, d.diff) == (None, None, None, None)
    assert d.verdict == "not compared" and not d.significant
    assert d.text() == "cannot be compared: the arm's horizon is beyond 80"
    data = d.to_json()
    assert data["diff_steps"] is None and data["ratio_ci"] is None
    assert data["why"] == "the arm's horizon is beyond 80" and data["arm"]["beyond"] is True
    hopeless = [(n, 0, 2) for n, _, _ in base]
    assert horizon_difference(hopeless, base).why == "the baseline's horizon is below 5"


def test_both_out_of_range_or_not_falling_says_so_for_each_arm():
    # 5% faithful against 100% at 5 and 10 steps: below the one, beyond the other
    rows = [(n, int(i == 0 and n == 5), 1) for n in (5, 10) for i in range(10)]
    perfect = [(n, 1, 1) for n, _, _ in rows]
    d = horizon_difference(rows, perfect)
    assert d.text() == (
        "cannot be compared: the baseline's horizon is below 5 and the arm's horizon is beyond 10"
    )
    rising = [(n, int(n == 10), 1) for n, _, _ in rows]
    assert horizon_difference(rising, perfect).why == (
        "the baseline's success does not fall with length over 5 to 10 steps and the arm's "
        "horizon is beyond 10"
    )


def test_identical_arms_differ_by_nothing():
    base, _ = arms(0.02, 0.02, per=8)
    d = horizon_difference(base, base)
    assert d.ratio == 1 and d.p == pytest.approx(1.0) and d.verdict == "no detectable difference"


@pytest.mark.parametrize("df", [1, 4, 30, 200])
def test_the_p_value_is_the_level_at_which_t_is_the_quantile(df):
    for level in (0.5, 0.95, 0.999):
        assert t_pvalue(t_quantile(df, level), df) == pytest.approx(1 - level, abs=1e-6)


def test_fewer_than_5_paired_scenarios_give_no_difference():
    base = [(5, 3, 3), (10, 2, 3), (20, 1, 3), (40, 0, 3)]
    arm = [(5, 3, 3), (10, 3, 3), (20, 2, 3), (40, 1, 3)]
    d = horizon_difference(base, arm)
    assert d.ci is None and d.verdict == "not compared"
    assert d.text() == "cannot be compared: too few paired scenarios (4, at least 5 needed)"
