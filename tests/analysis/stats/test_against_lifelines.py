"""The hand-written Kaplan-Meier curve, its log-log band, its median and the hazard per
step agree with lifelines and statsmodels over random independent episodes.

Neither library gives the cluster-robust band used with several trials per scenario; its
variance is the infinitesimal jackknife, the derivative of ``log S`` in each cluster's
weight, which lifelines' weighted fit gives by central differences. The libraries come
with the ``test`` extra only: without them the file is skipped.
"""

from __future__ import annotations

import math
import random
import warnings

import pytest

np = pytest.importorskip("numpy")
lifelines = pytest.importorskip("lifelines")
lifelines_utils = pytest.importorskip("lifelines.utils")
survfunc = pytest.importorskip("statsmodels.duration.survfunc")
proportion = pytest.importorskip("statsmodels.stats.proportion")
stats = pytest.importorskip("scipy.stats")

from agentproc.analysis.stats.survival import Episode, Survival, hazard, kaplan_meier  # noqa: E402

CASES = 150
"""Random samples of episodes per test."""


def episodes(rng: random.Random) -> list[Episode]:
    """1 to 60 episodes over procedures of up to 25 steps, some leaving, some censored; a
    few samples in which every episode leaves (the curve reaches 0)."""
    last = rng.randint(1, 25)
    leave = rng.choice([0.0, 0.2, 0.5, 0.8, 1.0])
    return [(rng.randint(1, last), rng.random() < leave) for _ in range(rng.randint(1, 60))]


def fitted(eps: list[Episode], weights: list[int] | None = None) -> object:
    """lifelines' fit on every step from 1 to the last (its default level: 95%)."""
    last = max(t for t, _ in eps)
    with warnings.catch_warnings():  # lifelines warns about an all-censored sample
        warnings.simplefilter("ignore")
        return lifelines.KaplanMeierFitter().fit(
            [t for t, _ in eps],
            [left for _, left in eps],
            timeline=list(range(1, last + 1)),
            weights=weights,
        )


def ours(eps: list[Episode]) -> Survival:
    return kaplan_meier([[e] for e in eps])


def test_curve_and_risk_sets_match_lifelines():
    # tolerance: 1e-12 absolute for the curve; counts exact
    rng = random.Random(21)
    for _ in range(CASES):
        eps = episodes(rng)
        km = fitted(eps)
        table = km.event_table
        for p in ours(eps).points:
            assert p.survival == pytest.approx(km.survival_function_.loc[p.step].iloc[0], abs=1e-12)
            if p.step in table.index:
                assert p.at_risk == table.loc[p.step, "at_risk"], (eps, p.step)
                assert p.events == table.loc[p.step, "observed"], (eps, p.step)
                assert p.censored == table.loc[p.step, "censored"], (eps, p.step)


def test_log_log_band_matches_lifelines_exponential_greenwood():
    # tolerance: 1e-9 absolute. The band is given where 0 < S < 1 and undefined elsewhere
    # (lifelines reports 1 or nan there); where it is given, it is lifelines' band
    rng = random.Random(22)
    checked = 0
    for _ in range(CASES):
        eps = episodes(rng)
        band = fitted(eps).confidence_interval_
        for p in ours(eps).points:
            if not 0 < p.survival < 1:
                assert p.low is None and p.high is None, (eps, p.step)
                continue
            assert p.low is not None and p.high is not None, (eps, p.step)
            low, high = band.loc[p.step]
            assert (p.low, p.high) == pytest.approx((low, high), abs=1e-9), (eps, p.step)
            checked += 1
    assert checked > CASES


def test_log_log_band_matches_statsmodels_greenwood_standard_error():
    # tolerance: 1e-9 absolute. statsmodels gives Greenwood's standard error of S at the
    # event times; the log-log band is S ** exp(+-z se / (S |log S|))
    rng = random.Random(23)
    z = float(stats.norm.ppf(0.975))
    checked = 0
    for _ in range(CASES):
        eps = episodes(rng)
        sf = survfunc.SurvfuncRight([t for t, _ in eps], [int(left) for _, left in eps])
        rows = zip(sf.surv_times, sf.surv_prob, sf.surv_prob_se, strict=True)
        at = {int(t): (s, se) for t, s, se in rows}
        for p in ours(eps).points:
            if p.step not in at or p.low is None:
                continue
            s, se = at[p.step]
            spread = z * se / (s * abs(math.log(s)))
            theirs = (s ** math.exp(spread), s ** math.exp(-spread))
            assert (p.low, p.high) == pytest.approx(theirs, abs=1e-9), (eps, p.step)
            checked += 1
    assert checked > CASES


def step(x: float) -> int | None:
    """lifelines' time as our step: its infinity is our None ("beyond the last step")."""
    return None if math.isinf(x) else int(x)


def test_median_and_its_interval_match_lifelines():
    # exact steps: the first step at which the curve (the band's lower, upper bound) is at
    # or below a half. Samples whose curve is exactly a half at some step are left to the
    # test below: there both curves are a rounding away from a half, either side
    rng = random.Random(24)
    checked = 0
    for _ in range(CASES):
        eps = episodes(rng)
        km = fitted(eps)
        if (km.survival_function_.round(12) == 0.5).any().any():
            continue
        theirs = lifelines_utils.median_survival_times(km.confidence_interval_)
        median = ours(eps).median
        assert median.step == step(km.median_survival_time_), eps
        assert (median.low, median.high) == tuple(step(x) for x in theirs.iloc[0]), eps
        checked += 1
    assert checked > CASES * 3 // 4


def test_median_is_the_step_where_the_curve_is_exactly_a_half():
    # ten episodes all leaving, at steps 2, 2, 5, 7, 10, 16, 17, 20, 23, 24: S(10) = 5/10
    # exactly, so the median step is 10 (lifelines, its curve rounded to 12 decimals, and
    # the sample median of uncensored times agree)
    times = [2, 2, 5, 7, 10, 16, 17, 20, 23, 24]
    eps = [(t, True) for t in times]
    curve = fitted(eps).survival_function_.round(12)
    assert step(lifelines_utils.qth_survival_times(0.5, curve)) == 10
    assert ours(eps).median.step == 10


def test_folded_counts_match_lifelines_weights():
    # tolerance: 1e-9 absolute. Independent episodes folded into one cluster per time with
    # a count are lifelines' weighted fit
    rng = random.Random(25)
    for _ in range(CASES):
        distinct = sorted(set(episodes(rng)))
        counts = [rng.randint(1, 5) for _ in distinct]
        km = fitted(distinct, counts)
        band = km.confidence_interval_
        for p in kaplan_meier([[e] for e in distinct], counts).points:
            assert p.survival == pytest.approx(km.survival_function_.loc[p.step].iloc[0], abs=1e-9)
            if p.low is not None:
                assert (p.low, p.high) == pytest.approx(tuple(band.loc[p.step]), abs=1e-9)


def test_hazard_of_independent_episodes_is_wilson_of_left_over_at_risk():
    # tolerance: 1e-12 absolute: d_t / n_t from lifelines' event table, its statsmodels
    # Wilson interval
    rng = random.Random(26)
    for _ in range(CASES):
        eps = episodes(rng)
        last = max(t for t, _ in eps)
        table = fitted(eps).event_table
        for t, rate in hazard([[e] for e in eps], last):
            if t not in table.index:
                continue
            d, n = int(table.loc[t, "observed"]), int(table.loc[t, "at_risk"])
            assert (rate.k, rate.n) == (d, n), (eps, t)
            theirs = proportion.proportion_confint(d, n, 0.05, method="wilson")
            assert rate.ci == pytest.approx(theirs, abs=1e-12), (eps, t)


def test_cluster_robust_band_is_the_jackknife_of_lifelines_weighted_fits():
    # tolerance: 1e-7 absolute. Each cluster's influence on log S(t) is the derivative of
    # lifelines' weighted log S in that cluster's weight (central differences, h = 1e-5);
    # the variance is s / (s - 1) times their sum of squares, never below Greenwood's (from
    # lifelines' risk table), and the band is the log-log one with Student's t on s - 1 df
    rng = random.Random(27)
    h = 1e-5
    checked = 0
    for _ in range(20):
        last = rng.randint(2, 15)
        clusters = [
            [(rng.randint(1, last), rng.random() < 0.4) for _ in range(rng.randint(1, 4))]
            for _ in range(rng.randint(3, 10))
        ]
        if all(len(c) == 1 for c in clusters):
            continue
        eps = [e for c in clusters for e in c]
        owner = [i for i, c in enumerate(clusters) for _ in c]

        def log_s(cluster: int, dw: float, eps: list[Episode] = eps, owner: list[int] = owner):
            weights = [1 + dw if o == cluster else 1.0 for o in owner]
            with warnings.catch_warnings():  # lifelines warns of weights that are not whole
                warnings.simplefilter("ignore")
                curve = fitted(eps, weights).survival_function_.iloc[:, 0]
            return np.log(curve.to_numpy())

        influence = np.array([(log_s(c, h) - log_s(c, -h)) / (2 * h) for c in range(len(clusters))])
        s = len(clusters)
        robust = (influence**2).sum(axis=0) * s / (s - 1)
        z = float(stats.t.ppf(0.975, s - 1))
        km = fitted(eps)
        table = km.event_table
        survival = kaplan_meier(clusters)
        assert survival.variance == "cluster-robust"
        greenwood = 0.0
        for p in survival.points:
            if p.step in table.index:
                d, n = table.loc[p.step, "observed"], table.loc[p.step, "at_risk"]
                greenwood += d / (n * (n - d)) if d < n else 0.0
            if p.low is None:
                continue
            s_t = float(km.survival_function_.loc[p.step].iloc[0])
            spread = z * math.sqrt(max(greenwood, robust[p.step - 1])) / abs(math.log(s_t))
            theirs = (s_t ** math.exp(spread), s_t ** math.exp(-spread))
            assert (p.low, p.high) == pytest.approx(theirs, abs=1e-7), (clusters, p.step)
            checked += 1
    assert checked > 40
