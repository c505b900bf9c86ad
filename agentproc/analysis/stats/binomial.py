"""A share of episodes (:class:`Rate`) and its Wilson interval, on the effective count of
scenarios run for several trials (their design effect)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

from agentproc.analysis.stats.student_t import check_level, t_quantile

Z95 = 1.959963984540054
"""The standard normal quantile of a two-sided 95% interval."""


def z_quantile(level: float = 0.95) -> float:
    """The standard normal quantile of a two-sided ``level`` interval (:data:`Z95` at 95%).

    >>> z_quantile() == Z95, round(z_quantile(0.9), 4)
    (True, 1.6449)
    """
    check_level(level)
    return Z95 if level == 0.95 else NormalDist().inv_cdf(0.5 + level / 2)


def wilson(successes: float, n: float, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (95% by default; ``z`` is the
    normal quantile of the level, :func:`z_quantile`).

    Unlike the normal approximation it stays inside [0, 1] and is sensible at
    0 or n successes; with no trials nothing is known, so it is (0, 1).

    >>> tuple(round(x, 4) for x in wilson(5, 10))
    (0.2366, 0.7634)
    >>> wilson(0, 0)
    (0.0, 1.0)
    """
    if not math.isfinite(n):
        raise ValueError(f"n must be a finite number (got {n!r})")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must lie in [0, n] (got {successes} of {n})")
    if not (z > 0 and math.isfinite(z)):
        raise ValueError(f"z must be a positive number (got {z!r})")
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def design_effect(clusters: Sequence[tuple[int, int]]) -> float:
    """How much a share's variance grows because episodes come in scenarios of several
    trials: the cluster-robust variance of ``sum(y) / sum(m)`` over the binomial one,
    from ``(successes, trials)`` per scenario; at least 1 (:func:`design_effect_of_sums`).

    >>> design_effect([(3, 3), (0, 3), (3, 3), (0, 3)])  # trials are copies: 3 for 1
    3.0
    >>> design_effect([(1, 1), (0, 1)])
    1.0
    >>> design_effect([(0, 4), (0, 4)])  # nothing to estimate it from: the most it can be
    4.0
    """
    return design_effect_of_sums(
        sum(y for y, _ in clusters),
        sum(m for _, m in clusters),
        len(clusters),
        sum(y * y for y, _ in clusters),
        sum(y * m for y, m in clusters),
        sum(m * m for _, m in clusters),
    )


def design_effect_of_sums(k: int, n: int, clusters: int, yy: int, ym: int, mm: int) -> float:
    """:func:`design_effect` from running sums over the clusters ``(y, m)``: ``k = sum(y)``,
    ``n = sum(m)``, their number, ``yy = sum(y * y)``, ``ym = sum(y * m)``, ``mm = sum(m * m)``.

    With fewer than two scenarios, or a share of 0 or 1, it cannot be estimated and is
    taken at its largest, the trials per scenario (as if every trial were a copy).

    >>> design_effect_of_sums(6, 12, 4, 18, 18, 36)
    3.0
    """
    if n == 0:
        return 1.0
    if clusters < 2 or k in (0, n):
        return n / clusters
    # CR1: the cluster-robust variance scaled by s / (s - 1), its usual small-sample fix;
    # never above the trials per scenario (every trial a copy of its scenario's first).
    # sum((y - p m)^2) n^2 = yy n^2 - 2 k n ym + k^2 mm with p = k / n: whole numbers, so
    # the ratio to the binomial variance p (1 - p) / n is rounded once, at the division.
    spread = yy * n * n - 2 * k * n * ym + k * k * mm
    robust = spread * clusters / (n * (clusters - 1) * k * (n - k))
    return max(1.0, min(n / clusters, robust))


@dataclass(slots=True)
class Rate:
    """A share of episodes, ``k`` of ``n``, with its Wilson 95% interval (a tally while it
    is counted: ``k`` and ``n`` grow). With trials, the interval is Wilson's on the
    effective number of episodes, ``n / deff`` (:func:`design_effect`)."""

    k: int = 0
    n: int = 0
    deff: float = 1.0
    """The design effect of the scenarios' trials (1: independent episodes)."""
    clusters: int = 0
    """Scenarios the episodes come in, when they have several trials (0: independent
    episodes). With few of them the interval widens: Student's t on ``clusters - 1``
    degrees of freedom in place of the normal quantile."""

    @property
    def value(self) -> float:
        """The share (0 with no episodes; the JSON form and tables show no figure then)."""
        return self.k / self.n if self.n else 0.0

    @property
    def ci(self) -> tuple[float, float]:
        """Wilson 95% interval (on the effective number of episodes)."""
        return self.interval()

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        """Wilson interval at ``level`` (on the effective number of episodes).

        >>> tuple(round(x, 4) for x in Rate(5, 10).interval(0.9))
        (0.2693, 0.7307)
        """
        z = t_quantile(self.clusters - 1, level) if self.clusters >= 2 else z_quantile(level)
        return wilson(self.k / self.deff, self.n / self.deff, z)

    def to_json(self) -> dict[str, Any]:
        """The JSON form (value and interval to 4 decimals; ``null`` with no episodes)."""
        ci = self.ci
        out: dict[str, Any] = {
            "value": round(self.value, 4) if self.n else None,
            "ci": [round(ci[0], 4), round(ci[1], 4)] if self.n else None,
            "k": self.k,
            "n": self.n,
        }
        if self.deff > 1:
            out["design_effect"] = round(self.deff, 4)
        return out


def ratio(k: float, n: int) -> float:
    """``k / n``, or 0 with no episodes."""
    return k / n if n else 0.0
