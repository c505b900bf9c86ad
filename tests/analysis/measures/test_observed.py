"""Observed self-conditioning: a step's error rate after an error against after a clean
history, by position bin, with intervals over the clusters, worked out by hand."""

from __future__ import annotations

import math

import pytest

from agentproc.analysis.measures.observed import doubling_bin, observed
from agentproc.analysis.stats.binomial import wilson
from agentproc.analysis.stats.clustered import Clustered, Paired
from agentproc.analysis.stats.student_t import t_quantile

# The outcomes of four episodes, each its own cluster (c correct, e error, p carried
# forward, s skipped)
OUTCOMES = [[b"cep"], [b"csc"], [b"ccc"], [b"cccee"]]


def test_bins_double_in_width():
    assert [doubling_bin(k) for k in range(1, 9)] == [0, 1, 1, 2, 2, 2, 2, 3]


def test_steps_are_counted_by_their_history_by_hand():
    sc = observed(OUTCOMES)
    got = [
        (b.first, b.last, b.after_error.k, b.after_error.n, b.clean.k, b.clean.n) for b in sc.bins
    ]
    # bin 1: the four first steps, clean. Bin 2-3: clean ones are e (step 2 of the
    # first), c c (third), c c (fourth): 1 error in 5; after an error: p (a carried
    # mistake is no new error) and c after a skip: 0 in 2. Bin 4-5: the fourth's
    # step 4 (clean, an error) and step 5 (after it, an error).
    assert got == [(1, 1, 0, 0, 0, 4), (2, 3, 0, 2, 1, 5), (4, 5, 1, 1, 1, 1)]


def test_a_bins_rate_is_wilsons_on_the_effective_count_over_its_clusters():
    clean = observed(OUTCOMES).bins[1].clean
    # clusters (errors, steps): (1, 1), (0, 2), (0, 2); p = 1/5
    p, s, n = 0.2, 3, 5
    robust = (1 - 2 * p * 1 + p * p * (1 + 4 + 4)) / n**2 * s / (s - 1)
    deff = min(n / s, robust / (p * (1 - p) / n))  # 1.8 capped at 5/3 trials a cluster
    assert clean.deff == pytest.approx(5 / 3)
    assert clean.ci == pytest.approx(wilson(1 / deff, n / deff, t_quantile(s - 1)))


def test_the_difference_interval_is_movers_from_the_two_intervals():
    b = observed(OUTCOMES).bins[1]
    (la, ua), (lb, ub) = b.after_error.ci, b.clean.ci
    pa, pb = 0.0, 0.2  # after an error 0 of 2; clean 1 of 5
    # the after-error rate does not vary over clusters: no correlation term
    low = (pa - pb) - math.sqrt((pa - la) ** 2 + (ub - pb) ** 2)
    high = (pa - pb) + math.sqrt((ua - pa) ** 2 + (pb - lb) ** 2)
    assert b.difference is not None
    value, ci = b.difference
    assert value == pytest.approx(-0.2)
    assert ci == (pytest.approx(low), pytest.approx(high))
    assert observed(OUTCOMES).bins[0].difference is None  # nothing after an error at step 1


def test_the_correlation_of_two_rates_over_shared_clusters_by_hand():
    pair = Paired(Clustered(), Clustered())
    for ya, ma, yb, mb in [(1, 2, 0, 1), (0, 2, 1, 1), (2, 2, 1, 2)]:
        pair.add(ya, ma, yb, mb)
    # p_a = 3/6, p_b = 2/4; residuals y - p m: a (0, -1, 1), b (-0.5, 0.5, 0)
    cov = 0 * -0.5 + -1 * 0.5 + 1 * 0
    assert pair.correlation() == pytest.approx(cov / math.sqrt(2 * 0.5))


def test_a_positive_correlation_narrows_the_difference():
    pair = Paired(Clustered(), Clustered())
    for row in [(3, 4, 2, 4), (0, 4, 0, 4), (4, 4, 3, 4), (1, 4, 1, 4)] * 3:
        pair.add(*row)
    r = pair.correlation()
    assert r > 0.9  # hard scenarios err in both histories
    (la, _), (_, ub) = pair.a.rate().ci, pair.b.rate().ci
    pa, pb = 8 / 16, 6 / 16
    independent = math.sqrt((pa - la) ** 2 + (ub - pb) ** 2)
    correlated = math.sqrt((pa - la) ** 2 + (ub - pb) ** 2 - 2 * r * (pa - la) * (ub - pb))
    d = pair.difference()
    assert d is not None
    assert d[1][0] == pytest.approx(pa - pb - correlated)
    assert correlated < independent


def test_an_episode_that_errs_everywhere_has_no_clean_step_after_the_first():
    sc = observed([[b"eeee"]])
    assert [(b.first, b.clean.n, b.after_error.n, b.after_error.k) for b in sc.bins] == [
        (1, 1, 0, 0),
        (2, 0, 2, 2),
        (4, 0, 1, 1),
    ]
    assert all(b.difference is None for b in sc.bins)
