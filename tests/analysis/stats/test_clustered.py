"""Running cluster sums give the design effect and interval a report's rates have."""

from __future__ import annotations

import random

import pytest

from agentproc.analysis.stats.binomial import Rate, design_effect
from agentproc.analysis.stats.clustered import Clustered, Paired, difference_interval


@pytest.mark.parametrize("seed", range(20))
def test_the_running_sums_give_design_effect_of_the_listed_clusters(seed):
    rng = random.Random(seed)
    clusters = []
    for _ in range(rng.randint(1, 12)):
        m = rng.randint(1, 5)
        clusters.append((rng.randint(0, m), m))
    c = Clustered()
    for y, m in clusters:
        c.add(y, m)
    assert c.deff == pytest.approx(design_effect(clusters))
    k, n = sum(y for y, _ in clusters), sum(m for _, m in clusters)
    want = Rate(k, n, design_effect(clusters), len(clusters)) if n > len(clusters) else Rate(k, n)
    assert c.rate().ci == pytest.approx(want.ci)


def test_clusters_added_alike_count_each():
    once, thrice = Clustered(), Clustered()
    for _ in range(3):
        once.add(2, 3)
    thrice.add(2, 3, times=3)
    assert once == thrice


def test_a_cluster_of_nothing_is_not_one():
    c = Clustered()
    c.add(0, 0)
    assert (c.n, c.clusters) == (0, 0)


def test_the_paired_difference_is_the_mover_interval_with_their_correlation():
    pair = Paired(Clustered(), Clustered())
    for ya, yb in [(3, 1), (2, 2), (3, 0), (1, 1), (0, 1), (3, 2)]:
        pair.add(ya, 3, yb, 3)
    d, ci = pair.difference()
    a, b = pair.a.rate(), pair.b.rate()
    assert d == a.value - b.value
    assert ci == difference_interval(a, b, pair.correlation())
    assert pair.difference(0.8)[1] == difference_interval(a, b, pair.correlation(), 0.8)
    # a correlation of the two estimates narrows the interval of their difference
    lo0, hi0 = difference_interval(a, b)
    assert (lo0 < ci[0] and ci[1] < hi0) or pair.correlation() <= 0


def test_the_difference_interval_refuses_a_correlation_outside_minus_one_to_one():
    with pytest.raises(ValueError, match=r"r must lie in \[-1, 1\]"):
        difference_interval(Rate(1, 10), Rate(2, 10), 1.5)
