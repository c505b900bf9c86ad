"""The Kaplan-Meier curve over the first divergence, its band, its median and the
hazard per step, against figures worked out by hand."""

from __future__ import annotations

import math

import pytest

from agentproc.analysis.stats.binomial import Z95, wilson
from agentproc.analysis.stats.survival import hazard, kaplan_meier

# Five episodes, one per scenario: left at step 1; censored at 2 (a 2-step procedure
# followed faithfully); left at 3 twice; censored at 4.
FIVE = [[(1, True)], [(2, False)], [(3, True)], [(3, True)], [(4, False)]]


def loglog_band(s: float, var: float, z: float) -> tuple[float, float]:
    """``S ** exp(+-z sqrt(var) / |log S|)``, written out."""
    se = z * math.sqrt(var) / abs(math.log(s))
    return s ** math.exp(se), s ** math.exp(-se)


def test_the_curve_counts_at_risk_events_and_censoring_by_hand():
    s = kaplan_meier(FIVE)
    rows = [(p.step, p.at_risk, p.events, p.censored) for p in s.points]
    assert rows == [(1, 5, 1, 0), (2, 4, 0, 1), (3, 3, 2, 0), (4, 1, 0, 1)]
    # S(1) = 4/5; S(2) = S(1) (no one left); S(3) = 4/5 * (1 - 2/3); S(4) = S(3)
    assert [p.survival for p in s.points] == pytest.approx([0.8, 0.8, 0.8 / 3, 0.8 / 3])
    assert s.variance == "greenwood"


def test_the_band_is_greenwoods_on_the_log_log_scale():
    s = kaplan_meier(FIVE)
    greenwood_1 = 1 / (5 * 4)  # d / (n (n - d)) at step 1
    greenwood_3 = greenwood_1 + 2 / (3 * 1)
    for point, (surv, var) in zip(
        (s.points[0], s.points[2]), ((0.8, greenwood_1), (0.8 / 3, greenwood_3)), strict=True
    ):
        low, high = loglog_band(surv, var, Z95)
        assert (point.low, point.high) == (pytest.approx(low), pytest.approx(high))
    assert s.points[0].low == pytest.approx(0.2038, abs=1e-4)
    assert s.points[0].high == pytest.approx(0.9692, abs=1e-4)


def test_the_median_is_the_first_step_at_or_below_a_half_with_the_band_crossing_it():
    s = kaplan_meier(FIVE)
    assert s.median.step == 3
    # lower bound at step 1 is 0.20 (<= 0.5): the interval opens at 1; the upper bound
    # never falls to a half (0.97, 0.97, then at step 3:)
    upper_3 = loglog_band(0.8 / 3, 1 / 20 + 2 / 3, Z95)[1]
    assert upper_3 > 0.5
    assert (s.median.low, s.median.high) == (1, None)
    assert s.median.text() == "3 [1, beyond 4]"


def test_no_one_leaving_has_no_band_and_a_median_beyond_the_last_step():
    s = kaplan_meier([[(5, False)], [(3, False)]])
    assert all(p.survival == 1 and p.low is None and p.high is None for p in s.points)
    assert (
        s.median.step is None
        and s.median.text() == "beyond 5 (the last step observed) [beyond 5, beyond 5]"
    )
    assert s.median.to_json()["beyond"] is True


def test_every_episode_leaving_at_step_one_is_a_result_not_a_failure():
    s = kaplan_meier([[(1, True)], [(1, True)], [(1, True)]])
    assert [(p.step, p.survival, p.low, p.high) for p in s.points] == [(1, 0.0, None, None)]
    assert (s.median.step, s.median.low, s.median.high) == (1, 1, 1)


def test_trials_that_copy_their_scenario_widen_the_band_to_the_single_trial_one():
    # each scenario's two trials are copies: twice the episodes, no more evidence. The
    # summed influence of a scenario is then one episode's of the single-trial data, so
    # the variance is Greenwood's of the single-trial data times s / (s - 1), with
    # Student's t on s - 1 = 4 degrees of freedom.
    copies = [[e[0], e[0]] for e in FIVE]
    s = kaplan_meier(copies)
    assert s.variance == "cluster-robust"
    assert [p.survival for p in s.points] == pytest.approx([0.8, 0.8, 0.8 / 3, 0.8 / 3])
    t4 = 2.7764451051977987
    low, high = loglog_band(0.8, 1 / 20 * 5 / 4, t4)
    assert (s.points[0].low, s.points[0].high) == (pytest.approx(low), pytest.approx(high))
    naive = kaplan_meier([[e] for c in copies for e in c])  # as if 10 independent episodes
    assert naive.points[0].low is not None and s.points[0].low is not None
    assert s.points[0].low < naive.points[0].low


def test_clusters_counted_alike_equal_the_same_clusters_listed():
    listed = kaplan_meier([[(2, True)], [(2, True)], [(3, False)], [(1, True), (3, True)]])
    counted = kaplan_meier([[(2, True)], [(3, False)], [(1, True), (3, True)]], [2, 1, 1])
    assert listed == counted


def test_the_hazard_is_events_over_at_risk_with_wilsons_interval():
    rates = hazard(FIVE, 4)
    assert [(t, r.k, r.n) for t, r in rates] == [(1, 1, 5), (2, 0, 4), (3, 2, 3), (4, 0, 1)]
    assert rates[2][1].ci == pytest.approx(wilson(2, 3))
    assert rates[0][1].value == pytest.approx(1 / 5)


def test_the_cluster_robust_variance_is_the_jackknife_of_log_s_over_scenarios():
    # uneven scenarios of 1 to 3 trials: the variance the band carries equals
    # s / (s - 1) times the sum of squared derivatives of log S(t) by each scenario's
    # weight, taken numerically on the weighted product-limit estimate
    clusters = [
        [(2, True), (2, True)],
        [(1, True)],
        [(3, True), (3, True), (4, False)],
        [(5, False), (5, False)],
        [(4, True), (5, False), (4, True)],
        [(3, False), (2, True)],
    ]

    def log_s(weights: list[float], t: int) -> float:
        total = 0.0
        for j in range(1, t + 1):
            n = sum(w for c, w in zip(clusters, weights, strict=True) for s, _ in c if s >= j)
            d = sum(w for c, w in zip(clusters, weights, strict=True) for s, e in c if s == j and e)
            total += math.log(1 - d / n)
        return total

    s = kaplan_meier(clusters)
    t, h = 3, 1e-6
    grads = []
    for i in range(len(clusters)):
        up, down = [1.0] * len(clusters), [1.0] * len(clusters)
        up[i], down[i] = 1 + h, 1 - h
        grads.append((log_s(up, t) - log_s(down, t)) / (2 * h))
    k = len(clusters)
    robust = k / (k - 1) * sum(g * g for g in grads)
    point = s.points[t - 1]
    assert point.low is not None
    z = 2.5705818366147395  # Student's t, 5 degrees of freedom
    se = math.log(math.log(point.low) / math.log(point.survival)) / z
    greenwood = sum(p.events / (p.at_risk * (p.at_risk - p.events)) for p in s.points[:t])
    assert robust > greenwood  # so the band is the robust one
    assert (se * abs(math.log(point.survival))) ** 2 == pytest.approx(robust, rel=1e-5)


def test_the_band_is_never_narrower_than_greenwoods():
    # trials that disagree more than independent episodes would: the robust variance is
    # below Greenwood's, and the band is Greenwood's (with Student's t)
    clusters = [[(1, True), (5, False)], [(5, False), (1, True)], [(2, True), (5, False)]]
    clusters += [[(5, False), (2, True)], [(3, True), (5, False)], [(5, False), (3, True)]]
    s = kaplan_meier(clusters)
    p = s.points[1]
    greenwood = 2 / (12 * 10) + 2 / (10 * 8)
    low, high = loglog_band(p.survival, greenwood, 2.5705818366147395)
    assert (p.low, p.high) == (pytest.approx(low), pytest.approx(high))
