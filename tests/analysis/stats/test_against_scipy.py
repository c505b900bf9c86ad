"""The hand-written statistics agree with scipy and statsmodels over random inputs.

The analysis package writes its own binomial, t and interval arithmetic (scipy costs a
second of import time on the command line); each routine here is compared with its library
twin over a few hundred seeded random cases, at the tolerance stated in the test. The
libraries come with the ``test`` extra only: without them the file is skipped.
"""

from __future__ import annotations

import gc
import math
import random

import pytest

stats = pytest.importorskip("scipy.stats")
proportion = pytest.importorskip("statsmodels.stats.proportion")
multitest = pytest.importorskip("statsmodels.stats.multitest")
tables = pytest.importorskip("statsmodels.stats.contingency_tables")

from agentproc.analysis import holm, mcnemar, pass_hat_k, wilson  # noqa: E402
from agentproc.analysis.compare.horizon_diff import t_pvalue  # noqa: E402
from agentproc.analysis.stats.binomial import Z95, Rate, design_effect  # noqa: E402
from agentproc.analysis.stats.clustered import Clustered, Paired, difference_interval  # noqa: E402
from agentproc.analysis.stats.exact import (  # noqa: E402
    Z_POWER,
    binomial_two_sided,
    min_detectable_effect,
    pass_hat_ks,
)
from agentproc.analysis.stats.multiplicity import holm_levels  # noqa: E402
from agentproc.analysis.stats.paired import clopper_pearson, drop_p, signflip_test  # noqa: E402
from agentproc.analysis.stats.student_t import t_quantile  # noqa: E402

CASES = 300
"""Random cases per routine."""


def counts(rng: random.Random, most: int = 200) -> tuple[int, int]:
    """``(k, n)`` with ``0 <= k <= n``, ``1 <= n <= most``; a share of them at the ends."""
    n = rng.randint(1, most)
    k = rng.choice([0, n, rng.randint(0, n), rng.randint(0, n)])
    return k, n


def z_alpha(z: float) -> float:
    """The two-sided ``alpha`` whose normal quantile is ``z`` (statsmodels takes ``alpha``)."""
    return float(2 * stats.norm.sf(z))


# -- constants -------------------------------------------------------------------------


def test_normal_quantile_constants_match_scipy():
    # tolerance: 1e-12 absolute (the constants are written to 16 figures)
    assert abs(Z95 - stats.norm.ppf(0.975)) < 1e-12
    assert abs(Z_POWER - stats.norm.ppf(0.8)) < 1e-12


# -- binomial proportions --------------------------------------------------------------


def test_wilson_matches_statsmodels_wilson():
    # tolerance: 1e-12 absolute (closed form on both sides); counts may be fractional, as
    # the effective counts of a design effect are, and the level anything from 50% to 99.9%
    rng = random.Random(1)
    for _ in range(CASES):
        k, n = counts(rng)
        deff = rng.choice([1.0, 1.0, rng.uniform(1.0, 4.0)])
        z = rng.choice([Z95, float(stats.norm.ppf(0.5 + rng.uniform(0.25, 0.4995)))])
        ours = wilson(k / deff, n / deff, z)
        theirs = proportion.proportion_confint(k / deff, n / deff, z_alpha(z), method="wilson")
        assert ours == pytest.approx(theirs, abs=1e-12), (k, n, deff, z)


def test_rate_interval_is_wilson_with_student_t_on_the_effective_count():
    # tolerance: 1e-9 absolute (the t quantile is bisected)
    rng = random.Random(2)
    for _ in range(CASES):
        k, n = counts(rng)
        clusters = rng.randint(2, 40)
        deff = rng.uniform(1.0, 3.0)
        t = float(stats.t.ppf(0.975, clusters - 1))
        theirs = proportion.proportion_confint(k / deff, n / deff, z_alpha(t), method="wilson")
        assert Rate(k, n, deff, clusters).ci == pytest.approx(theirs, abs=1e-9), (k, n, clusters)


def test_clopper_pearson_matches_statsmodels_beta():
    # tolerance: 1e-12 absolute (60 bisection steps of [0, 1] leave under 1e-17)
    rng = random.Random(3)
    for _ in range(CASES):
        k, n = counts(rng, 300)
        alpha = rng.choice([0.05, rng.uniform(0.001, 0.5)])
        theirs = proportion.proportion_confint(k, n, alpha, method="beta")
        assert clopper_pearson(k, n, alpha) == pytest.approx(theirs, abs=1e-12), (k, n, alpha)


def test_two_sided_binomial_p_matches_scipy_binomtest():
    # tolerance: 1e-12 relative (exact sums on both sides; p-values down to 1e-300)
    rng = random.Random(4)
    for _ in range(CASES):
        k, n = counts(rng, 1000)
        theirs = stats.binomtest(k, n, 0.5).pvalue
        assert binomial_two_sided(k, n) == pytest.approx(theirs, rel=1e-12, abs=0), (k, n)


def test_exact_mcnemar_matches_statsmodels():
    # tolerance: 1e-12 relative; the concordant cells carry no weight in either
    rng = random.Random(5)
    for _ in range(CASES):
        b, c = rng.randint(0, 60), rng.randint(0, 60)
        table = [[rng.randint(0, 50), b], [c, rng.randint(0, 50)]]
        theirs = tables.mcnemar(table, exact=True).pvalue
        assert mcnemar(b, c) == pytest.approx(theirs, rel=1e-12, abs=0), (b, c)


def test_newcombe_matches_statsmodels_newcomb():
    # tolerance: 1e-12 absolute; Newcombe's interval of b - a, statsmodels' of count1 - count2
    rng = random.Random(6)
    for _ in range(CASES):
        (ka, na), (kb, nb) = counts(rng), counts(rng)
        theirs = proportion.confint_proportions_2indep(
            kb, nb, ka, na, method="newcomb", compare="diff", alpha=0.05
        )
        ours = difference_interval(Rate(kb, nb), Rate(ka, na))
        assert ours == pytest.approx(theirs, abs=1e-12), (ka, na, kb, nb)


def test_paired_difference_of_unshared_episodes_is_newcombe():
    # tolerance: 1e-12 absolute. Episodes each in a cluster of its own and in one share only
    # have no correlation: MOVER's interval of a - b is then Newcombe's
    rng = random.Random(7)
    for _ in range(CASES):
        (ka, na), (kb, nb) = counts(rng, 80), counts(rng, 80)
        pair = Paired(Clustered(), Clustered())
        for i in range(na):
            pair.add(int(i < ka), 1, 0, 0)
        for i in range(nb):
            pair.add(0, 0, int(i < kb), 1)
        theirs = proportion.confint_proportions_2indep(
            ka, na, kb, nb, method="newcomb", compare="diff", alpha=0.05
        )
        result = pair.difference()
        assert result is not None
        assert result[1] == pytest.approx(theirs, abs=1e-12), (ka, na, kb, nb)


# -- Student's t -----------------------------------------------------------------------


def test_t_quantile_matches_scipy():
    # tolerance: 1e-9 relative. Degrees of freedom as the reports use them (scenarios less
    # one or two) and some large ones; above 10,000 the normal quantile stands in (below)
    rng = random.Random(8)
    for _ in range(CASES):
        df = rng.choice([rng.randint(1, 60), rng.randint(1, 60), rng.randint(61, 2000)])
        level = rng.choice([0.95, rng.uniform(0.05, 0.999)])
        theirs = float(stats.t.ppf(0.5 + level / 2, df))
        assert t_quantile(df, level) == pytest.approx(theirs, rel=1e-9), (df, level)


def test_t_quantile_past_ten_thousand_df_is_within_5e4_of_scipy():
    # tolerance: 5e-4 absolute, the normal approximation's own error from 10,001 df on
    for df in (10_001, 20_000, 10**6):
        for level in (0.5, 0.9, 0.95, 0.99):
            theirs = float(stats.t.ppf(0.5 + level / 2, df))
            assert abs(t_quantile(df, level) - theirs) < 5e-4, (df, level)


def test_t_pvalue_matches_scipy_two_sided_survival():
    # tolerance: 1e-9 relative or 1e-12 absolute (the level is bisected 50 times)
    rng = random.Random(9)
    for _ in range(CASES):
        df = rng.randint(1, 60)
        t = rng.choice([rng.uniform(-4, 4), rng.uniform(-30, 30), 0.0])
        theirs = float(2 * stats.t.sf(abs(t), df))
        assert t_pvalue(t, df) == pytest.approx(theirs, rel=1e-9, abs=1e-12), (t, df)


def test_t_pvalue_keeps_its_relative_accuracy_for_small_p():
    # tolerance: 1e-6 relative, enough for the three figures p_text prints
    for t, df in ((10.0, 30), (20.0, 30), (40.0, 8)):
        theirs = float(2 * stats.t.sf(t, df))
        assert t_pvalue(t, df) == pytest.approx(theirs, rel=1e-6, abs=0), (t, df)


# -- many tests at once ----------------------------------------------------------------


def pvalues(rng: random.Random) -> dict[str, float]:
    """1 to 20 p-values: uniform, small, tied and ones mixed."""
    pool = [rng.random(), rng.random() ** 4, 1.0, 0.05]
    out = {f"h{i}": rng.choice(pool) for i in range(rng.randint(1, 20))}
    return {k: rng.random() if rng.random() < 0.5 else p for k, p in out.items()}


@pytest.fixture
def no_gc_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    """statsmodels' Holm runs a full garbage collection on every call (tens of milliseconds
    in a test process); the results do not depend on it."""
    monkeypatch.setattr(gc, "collect", lambda *args: 0)


@pytest.mark.usefixtures("no_gc_pause")
def test_holm_matches_statsmodels_multipletests():
    # tolerance: 1e-12 absolute
    rng = random.Random(10)
    for _ in range(CASES):
        ps = pvalues(rng)
        theirs = multitest.multipletests(list(ps.values()), method="holm")[1]
        assert list(holm(ps).values()) == pytest.approx(list(theirs), abs=1e-12), ps


@pytest.mark.usefixtures("no_gc_pause")
def test_holm_of_a_larger_family_counts_hypotheses_that_cannot_reject_as_ones():
    # tolerance: 1e-12 absolute: ``size`` beyond the p-values given is statsmodels' Holm
    # with p-values of 1 for the rest (as Tarone's rule uses it)
    rng = random.Random(17)
    for _ in range(CASES):
        ps = pvalues(rng)
        size = len(ps) + rng.randint(0, 10)
        family = list(ps.values()) + [1.0] * (size - len(ps))
        theirs = multitest.multipletests(family, method="holm")[1][: len(ps)]
        ours = list(holm(ps, size=size).values())
        assert ours == pytest.approx(list(theirs), abs=1e-12), (ps, size)


@pytest.mark.usefixtures("no_gc_pause")
def test_holm_levels_reject_what_multipletests_rejects():
    # exact: a p-value below its level is rejected exactly when statsmodels' Holm rejects
    # at 5% (continuous p-values: ties with a level have probability zero)
    rng = random.Random(11)
    for _ in range(CASES):
        ps = {f"h{i}": rng.random() ** 3 for i in range(rng.randint(1, 20))}
        rejected = multitest.multipletests(list(ps.values()), alpha=0.05, method="holm")[0]
        levels = holm_levels(ps)
        assert [ps[k] < levels[k] for k in ps] == list(rejected), ps


def test_min_detectable_effect_matches_statsmodels_normal_power():
    # tolerance: 1e-4 relative (statsmodels solves for the effect numerically and, two-sided,
    # counts the far tail too: 1e-6 of the power). Its effect is in units of the standard
    # deviation: ours is that times the root mean square difference, floored at
    # effect ** 2 / trials (rare gains) and capped at 1
    power = pytest.importorskip("statsmodels.stats.power")
    rng = random.Random(16)
    for _ in range(60):
        n, trials = rng.randint(6, 400), rng.choice([1, 3, 5])
        diffs = [rng.choice([0.0, 0.0, rng.uniform(-1, 1)]) for _ in range(n)]
        rms = math.sqrt(math.fsum(d * d for d in diffs) / n)
        for sides, alternative in ((2, "two-sided"), (1, "larger")):
            effect = power.NormalIndPower().solve_power(
                nobs1=n, alpha=0.05, power=0.8, ratio=0, alternative=alternative
            )
            theirs = min(1.0, max(effect * rms, effect**2 / trials))
            ours = min_detectable_effect(diffs, trials, sides)
            assert ours == pytest.approx(theirs, rel=1e-4), (n, trials, sides)


# -- clustered shares, pass^k, sign flips ----------------------------------------------


def test_design_effect_is_ols_cluster_robust_variance_over_binomial():
    # tolerance: 1e-9 relative. The robust variance of a share is that of the mean of the
    # episodes' 0/1 outcomes with scenario clusters (statsmodels' CR1, whose small-sample
    # factor is s / (s - 1) with one regressor); the clamp to [1, trials per scenario] is ours
    api = pytest.importorskip("statsmodels.api")
    np = pytest.importorskip("numpy")
    rng = random.Random(12)
    done = 0
    while done < 100:
        clusters = [(0, rng.randint(1, 6)) for _ in range(rng.randint(2, 30))]
        clusters = [(rng.randint(0, m), m) for _, m in clusters]
        k, n = sum(y for y, _ in clusters), sum(m for _, m in clusters)
        if k in (0, n):
            continue
        y = np.array([float(i < c) for c, m in clusters for i in range(m)])
        groups = np.array([g for g, (_, m) in enumerate(clusters) for _ in range(m)])
        fit = api.OLS(y, np.ones(n)).fit(cov_type="cluster", cov_kwds={"groups": groups})
        p = k / n
        theirs = min(n / len(clusters), max(1.0, float(fit.bse[0]) ** 2 / (p * (1 - p) / n)))
        assert design_effect(clusters) == pytest.approx(theirs, rel=1e-9), clusters
        running = Clustered()
        for c, m in clusters:
            running.add(c, m)
        assert running.deff == pytest.approx(theirs, rel=1e-9), clusters
        done += 1


def test_pass_hat_k_is_the_hypergeometric_chance_of_k_successes_in_k_draws():
    # tolerance: 1e-12 relative; past 256 trials pass_hat_ks switches to a running product
    rng = random.Random(13)
    for _ in range(CASES):
        tasks = [counts(rng, rng.choice([20, 600])) for _ in range(rng.randint(1, 5))]
        k = rng.randint(1, 30)
        held = [(c, n) for c, n in tasks if n >= k]
        if not held:
            continue
        theirs = sum(float(stats.hypergeom.pmf(k, n, c, k)) for c, n in held) / len(held)
        assert pass_hat_k(tasks, k) == pytest.approx(theirs, rel=1e-12, abs=1e-300)
        assert pass_hat_ks(tasks, [k])[k] == pytest.approx(theirs, rel=1e-12, abs=1e-300)


def test_signflip_p_matches_scipy_exact_permutation_test():
    # tolerance: 1e-12 absolute. Per-scenario mean differences of 1 to 4 trials; scipy
    # enumerates all 2**n sign vectors, ours convolves the exact null distribution. scipy is
    # given the numerators (the test is the same on any scale): on float thirds its sums miss
    # ties (a sum of 0 is compared with no tolerance) and its p-values come out low
    rng = random.Random(14)
    for _ in range(100):
        trials = rng.randint(1, 4)
        numerators = [rng.randint(-trials, trials) for _ in range(rng.randint(2, 12))]
        diffs = [x / trials for x in numerators]
        two_sided, less = (
            stats.permutation_test(
                (numerators,),
                lambda x, axis: x.sum(axis=axis),
                permutation_type="samples",
                n_resamples=math.inf,
                alternative=alternative,
                vectorized=True,
            ).pvalue
            for alternative in ("two-sided", "less")
        )
        assert signflip_test(diffs).p == pytest.approx(two_sided, abs=1e-12), diffs
        assert drop_p(diffs) == pytest.approx(less, abs=1e-12), diffs


def test_drop_p_on_one_trial_is_the_one_sided_binomial_test():
    # tolerance: 1e-12 relative: scenarios lost and gained, the rest tied
    rng = random.Random(15)
    for _ in range(CASES):
        lost, gained = rng.randint(0, 40), rng.randint(0, 40)
        diffs = [-1.0] * lost + [1.0] * gained + [0.0] * rng.randint(0, 20)
        theirs = stats.binomtest(gained, lost + gained, 0.5, "less").pvalue if lost + gained else 1
        assert drop_p(diffs) == pytest.approx(theirs, rel=1e-12), (lost, gained)
