"""A share counted over clusters in one pass: the cluster-robust design effect from
running sums, so a per-step rate needs no list of its clusters.

A rate over steps (or episodes) that come in clusters (a scenario's trials, an
episode's steps) is ``sum(y) / sum(m)`` over the clusters' ``(y, m)``; its interval is
Wilson's on the effective count, as :func:`~agentproc.analysis.stats.binomial.design_effect`
gives it. That function takes the clusters as a list; the per-step measures have a
rate per step of the procedure, and a list per step would hold every scenario once for
each of its steps. The same figure follows from five running sums
(:func:`~agentproc.analysis.stats.binomial.design_effect_of_sums`, which both use).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from agentproc.analysis.stats.binomial import Z95, Rate, design_effect_of_sums
from agentproc.analysis.stats.student_t import t_quantile


@dataclass(slots=True)
class Clustered:
    """Running sums of the clusters ``(y, m)`` of one share: ``y`` of ``m`` each."""

    k: int = 0
    n: int = 0
    clusters: int = 0
    yy: int = 0
    ym: int = 0
    mm: int = 0

    def add(self, y: int, m: int, times: int = 1) -> None:
        """One cluster (or ``times`` alike): ``y`` of its ``m`` count (a cluster with
        ``m = 0`` is not one)."""
        if m <= 0:
            return
        self.k += times * y
        self.n += times * m
        self.clusters += times
        self.yy += times * y * y
        self.ym += times * y * m
        self.mm += times * m * m

    @property
    def deff(self) -> float:
        """:func:`~agentproc.analysis.stats.binomial.design_effect` of the clusters added.

        >>> c = Clustered()
        >>> for y, m in [(3, 3), (0, 3), (3, 3), (0, 3)]:
        ...     c.add(y, m)
        >>> c.deff
        3.0
        """
        return design_effect_of_sums(self.k, self.n, self.clusters, self.yy, self.ym, self.mm)

    def rate(self) -> Rate:
        """The share and its Wilson interval: on the effective count, with Student's t
        on ``clusters - 1`` degrees of freedom, when some cluster counts more than one
        (as a report group's rates are); else plain Wilson."""
        if self.n > self.clusters:
            return Rate(self.k, self.n, self.deff, self.clusters)
        return Rate(self.k, self.n)


@dataclass(slots=True)
class Paired:
    """Two shares over the same clusters (each cluster may count in both), for the
    correlation of their estimates."""

    a: Clustered
    b: Clustered
    ab: tuple[int, int, int, int] = (0, 0, 0, 0)
    """Sums of ``ya yb``, ``ya mb``, ``ma yb`` and ``ma mb`` over the clusters."""
    shared: int = 0
    """Clusters in both (or either: a cluster absent from one adds zeros)."""

    def add(self, ya: int, ma: int, yb: int, mb: int) -> None:
        """One cluster's counts in each share."""
        self.a.add(ya, ma)
        self.b.add(yb, mb)
        if ma or mb:
            s1, s2, s3, s4 = self.ab
            self.ab = (s1 + ya * yb, s2 + ya * mb, s3 + ma * yb, s4 + ma * mb)
            self.shared += 1

    def correlation(self) -> float:
        """The correlation of the two shares' estimates over the clusters (their
        linearised, cluster-robust covariance); 0 where either varies not at all."""
        a, b = self.a, self.b
        if not a.n or not b.n:
            return 0.0
        pa, pb = a.k / a.n, b.k / b.n
        va = a.yy - 2 * pa * a.ym + pa * pa * a.mm
        vb = b.yy - 2 * pb * b.ym + pb * pb * b.mm
        s1, s2, s3, s4 = self.ab
        cov = s1 - pb * s2 - pa * s3 + pa * pb * s4
        if va <= 0 or vb <= 0:
            return 0.0
        return max(-1.0, min(1.0, cov / math.sqrt(va * vb)))

    def difference(self, level: float = 0.95) -> tuple[float, tuple[float, float]] | None:
        """``a - b`` and its interval at ``level`` by MOVER (:func:`difference_interval`
        with the correlation of the two shares' estimates); ``None`` when either has
        nothing counted."""
        a, b = self.a.rate(), self.b.rate()
        if not a.n or not b.n:
            return None
        return a.value - b.value, difference_interval(a, b, self.correlation(), level)


def difference_interval(
    a: Rate, b: Rate, r: float = 0.0, level: float = 0.95
) -> tuple[float, float]:
    """The interval of ``a - b`` from the two rates' own intervals at ``level``: Newcombe's
    hybrid score interval for independent rates (``r = 0``), with Zou and Donner's term
    (MOVER) for estimates of correlation ``r``.

    >>> tuple(round(x, 3) for x in difference_interval(Rate(30, 100), Rate(10, 100)))
    (0.09, 0.306)
    """
    if not -1 <= r <= 1:
        raise ValueError(f"r must lie in [-1, 1] (got {r!r})")
    (la, ua), (lb, ub) = a.interval(level), b.interval(level)
    pa, pb = a.value, b.value
    d = pa - pb
    low = d - math.sqrt(max(0.0, (pa - la) ** 2 + (ub - pb) ** 2 - 2 * r * (pa - la) * (ub - pb)))
    high = d + math.sqrt(max(0.0, (ua - pa) ** 2 + (pb - lb) ** 2 - 2 * r * (ua - pa) * (pb - lb)))
    return max(-1.0, low), min(1.0, high)


def quantile(clusters: int, robust: bool) -> float:
    """The normal 95% quantile, or Student's t on ``clusters - 1`` degrees of freedom
    when a cluster-robust variance is used (as :class:`Rate` does)."""
    return t_quantile(clusters - 1) if robust and clusters >= 2 else Z95
