"""Corrections for testing many things at once.

- :func:`holm`: Holm's step-down adjusted p-values.
- :func:`holm_levels`: the level at which each hypothesis is in effect tested by
  Holm's procedure, so that an interval at that level agrees with Holm's verdict.
- :func:`tarone_holm`: Holm over the hypotheses that can reject at all (Tarone's
  rule): a discrete test whose smallest attainable p-value is above its share of
  the level cannot reject and leaves the family.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from itertools import accumulate
from typing import TypeVar

from agentproc.analysis.stats.exact import ALPHA
from agentproc.analysis.stats.student_t import check_level

K = TypeVar("K", bound=Hashable)


def holm(pvalues: Mapping[K, float], size: int | None = None) -> dict[K, float]:
    """Holm-adjusted p-values (family-wise error controlled at any level).

    The i-th smallest of m p-values is multiplied by ``m - i`` (0-based), and the
    adjusted values are made non-decreasing in that order and capped at 1. ``size``
    (at least the number of p-values) counts hypotheses that cannot reject too.

    >>> holm({"a": 0.01, "b": 0.04, "c": 0.03})
    {'a': 0.03, 'b': 0.06, 'c': 0.06}
    """
    ordered = sorted(pvalues, key=lambda key: pvalues[key])
    m = len(ordered) if size is None else max(size, len(ordered))
    scaled = (min(1.0, (m - i) * pvalues[key]) for i, key in enumerate(ordered))
    out = dict(zip(ordered, accumulate(scaled, max), strict=True))
    return {key: out[key] for key in pvalues}


def holm_levels(pvalues: Mapping[K, float], alpha: float = ALPHA) -> dict[K, float]:
    """The level each hypothesis is in effect tested at by Holm's procedure.

    A hypothesis Holm rejects at rank ``r`` (0-based) is tested at ``alpha / (m - r)``;
    once a step fails, every later one is held to that failed step's level. An
    interval at ``1 - level`` then excludes the null exactly when Holm rejects
    (for a test whose p-value is below a level exactly when its interval at that
    level excludes the null).

    >>> holm_levels({"a": 0.01, "b": 0.04, "c": 0.03})
    {'a': 0.016666666666666666, 'b': 0.025, 'c': 0.025}
    """
    check_level(alpha, "alpha")
    ordered = sorted(pvalues, key=lambda key: pvalues[key])
    m = len(ordered)
    out: dict[K, float] = {}
    failed: float | None = None
    for i, key in enumerate(ordered):
        level = alpha / (m - i)
        if failed is None and pvalues[key] >= level:
            failed = level
        out[key] = level if failed is None else failed
    return {key: out[key] for key in pvalues}


def tarone_holm(
    pvalues: Mapping[K, float], min_pvalues: Mapping[K, float], alpha: float = ALPHA
) -> dict[K, float | None]:
    """Holm over the hypotheses that can reject (Tarone's rule); ``None`` for the others.

    The family size is the smallest ``m`` for which at most ``m`` hypotheses have a
    smallest attainable p-value at or below ``alpha / m``; those are tested, with
    Holm's multipliers counting from ``m``.

    >>> tarone_holm({"a": 0.0078, "b": 1.0}, {"a": 0.0078, "b": 1.0})
    {'a': 0.0078, 'b': None}
    """
    check_level(alpha, "alpha")
    m = 1
    while sum(min_pvalues[k] <= alpha / m for k in pvalues) > m:
        m += 1
    family = {k: p for k, p in pvalues.items() if min_pvalues[k] <= alpha / m}
    adjusted = holm(family, size=m) if family else {}
    return {k: adjusted.get(k) for k in pvalues}
