"""Running cluster sums give the design effect and interval a report's rates have."""

from __future__ import annotations

import random

import pytest

from agentproc.analysis.cell_stats import Rate, design_effect
from agentproc.analysis.clustered import Clustered


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
