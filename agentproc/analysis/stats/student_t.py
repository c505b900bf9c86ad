"""Student's t for integer degrees of freedom: its two-sided probability, its quantile and
the p-value of a statistic (its tail computed as itself, so that a small p keeps its
relative accuracy).

Pure Python and exact: for integer ``df`` the probability ``P(|T| <= t)`` is a finite sum in
``theta = atan(t / sqrt(df))`` (Abramowitz and Stegun 26.7.3-4). ``scipy.stats.t`` has all
three but takes about 1 s to import (``agentproc --help`` must stay under 0.3 s); the tests
compare these with it over random inputs. Past :data:`NORMAL_DF` degrees of freedom the
normal distribution stands in for t (they differ by less than 1e-4 in the quantile).
"""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist

NORMAL_DF = 10_000
"""Above this many degrees of freedom the normal distribution is used in place of t."""


def check_df(df: int) -> None:
    """Raise a ``ValueError`` naming ``df`` unless it is a whole number of at least 1."""
    if isinstance(df, bool) or not isinstance(df, int) or df < 1:
        raise ValueError(f"df must be a whole number of at least 1 (got {df!r})")


def check_level(level: float, name: str = "level") -> None:
    """Raise a ``ValueError`` naming the argument unless ``0 < level < 1``."""
    if not 0 < level < 1:  # NaN fails too
        raise ValueError(f"{name} must lie strictly between 0 and 1 (got {level!r})")


def t_inside(t: float, df: int) -> float:
    """``P(|T| <= t)`` for Student's t with ``df`` degrees of freedom (``t >= 0``), up to
    :data:`NORMAL_DF` degrees of freedom.

    >>> round(t_inside(2.776445105, 4), 6), t_inside(0.0, 3)
    (0.95, 0.0)
    """
    theta = math.atan(t / math.sqrt(df))
    c2, term = math.cos(theta) ** 2, 1.0
    if df % 2:
        total = 0.0
        if df > 1:
            total = term = 1.0
            for k in range(3, df - 1, 2):
                term *= c2 * (k - 1) / k
                total += term
            total *= math.sin(theta) * math.cos(theta)
        return 2 / math.pi * (theta + total)
    total = 1.0
    for k in range(2, df - 1, 2):
        term *= c2 * (k - 1) / k
        total += term
    return math.sin(theta) * total


@lru_cache(maxsize=4096)  # a report asks for the same few degrees of freedom many times
def t_quantile(df: int, level: float = 0.95) -> float:
    """The two-sided ``level`` quantile of Student's t with ``df`` degrees of freedom:
    :func:`t_inside` bisected.

    >>> round(t_quantile(4), 3), round(t_quantile(1), 3), round(t_quantile(10**6), 3)
    (2.776, 12.706, 1.96)
    >>> t_quantile(0)
    Traceback (most recent call last):
    ...
    ValueError: df must be a whole number of at least 1 (got 0)
    """
    check_df(df)
    check_level(level)
    if df > NORMAL_DF:
        return NormalDist().inv_cdf(0.5 + level / 2)
    lo, hi = 0.0, 1.0
    while t_inside(hi, df) < level:
        lo, hi = hi, 2 * hi
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_inside(mid, df) < level else (lo, mid)
    return hi


def t_pvalue(t: float, df: int) -> float:
    """Two-sided p-value of Student's t: ``P(|T| >= |t|)``, the level at which ``|t|`` is
    the :func:`t_quantile`.

    >>> round(t_pvalue(2.776, 4), 3), t_pvalue(0.0, 9)
    (0.05, 1.0)
    """
    check_df(df)
    if math.isnan(t):
        raise ValueError("t must be a number (got nan)")
    t = abs(t)
    if t == 0:
        return 1.0
    if df > NORMAL_DF:
        return math.erfc(t / math.sqrt(2))
    return _incomplete_beta(df / (df + t * t), df / 2, 0.5)


def _incomplete_beta(x: float, a: float, b: float) -> float:
    """The regularised incomplete beta function ``I_x(a, b)`` by its continued fraction
    (modified Lentz), on the side where it converges fast: a small tail is computed as
    itself, never as one minus a probability near 1, so it keeps its relative accuracy
    (``P(|T| >= t) = I_x(df/2, 1/2)`` with ``x = df / (df + t^2)``)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1) / (a + b + 2):
        return front * _fraction(x, a, b) / a
    return 1.0 - front * _fraction(1.0 - x, b, a) / b


def _fraction(x: float, a: float, b: float) -> float:
    tiny = 1e-300

    def nonzero(v: float) -> float:
        return v if abs(v) > tiny else tiny

    c, d = 1.0, 1.0 / nonzero(1.0 - (a + b) * x / (a + 1))
    h = d
    for m in range(1, 1000):
        even = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        d = 1.0 / nonzero(1.0 + even * d)
        c = nonzero(1.0 + even / c)
        h *= d * c
        odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        d = 1.0 / nonzero(1.0 + odd * d)
        c = nonzero(1.0 + odd / c)
        step = d * c
        h *= step
        if abs(step - 1.0) < 1e-16:
            break
    return h
