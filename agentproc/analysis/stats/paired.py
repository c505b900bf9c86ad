"""One paired test per difference, and the interval that belongs to it.

The scenario is the unit of inference: trials of one scenario are not independent
evidence, so every test and interval here works on per-scenario differences.

- **One trial per scenario**: the exact McNemar test (a binomial test on the
  discordant scenarios) and its own interval. The difference is
  ``pi * (2 * theta - 1)``, with ``pi`` the share of discordant scenarios and
  ``theta`` the share of those the arm won; ``theta`` takes the Clopper-Pearson
  interval (the inversion of the same exact binomial test) and ``pi`` the Wilson
  score interval. The interval excludes 0 exactly when ``theta``'s does, which is
  exactly when McNemar rejects: verdict and interval cannot disagree.
- **Several trials**: the sign-flip permutation test on the per-scenario mean
  differences, its null distribution computed exactly for any number of scenarios
  (the differences on one grid of fractions, :data:`GRID`; no random sign vectors),
  and the interval obtained by inverting that same test (:func:`signflip_test`).
  With one trial per scenario the sign-flip test is exactly McNemar's, so both
  designs rest on one idea.

A percentile bootstrap was used before; it undercovers when discordance is rare
(0.886 at 3 of 60 discordant) and, as a different method from the test, gave
lines whose verdict contradicted their interval. scipy has the binomial test but
``scipy.stats`` takes about 1 s to import (``agentproc --help`` must stay under
0.3 s); the exact tails and their inversion are a few lines, so they are written
here. numpy (about 0.1 s) is imported only when a sign-flip test runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist
from typing import Literal

from agentproc.analysis.stats.binomial import wilson
from agentproc.analysis.stats.exact import ALPHA, mcnemar
from agentproc.analysis.stats.student_t import check_level

Method = Literal["exact McNemar", "sign-flip permutation"]
"""How a paired difference was tested (and its interval made)."""

MIN_SCENARIOS = 5
"""Below this many paired scenarios no interval is given ("too few scenarios")."""


@dataclass(frozen=True, slots=True)
class PairedTest:
    """A paired difference, its test and its interval (one method for both)."""

    diff: float
    """Mean over scenarios of the arm's rate minus the baseline's."""
    p: float
    ci: tuple[float, float] | None
    """At the level asked for; ``None`` with fewer than :data:`MIN_SCENARIOS` scenarios."""
    method: Method
    scenarios: int
    min_p: float
    """The smallest p-value this design could give (Tarone's rule reads it)."""


def _tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p), for 1 <= k <= n and 0 < p < 1: the domain
    :func:`clopper_pearson` bisects in (it never asks at an end)."""
    lp, lq, lg = math.log(p), math.log1p(-p), math.lgamma(n + 1)
    # terms more than 40 standard deviations from the mean are below 1e-300: left out
    reach = 40 * math.sqrt(n * p * (1 - p)) + 10
    first, last = max(k, math.floor(n * p - reach)), min(n, math.ceil(n * p + reach))
    terms = (
        math.exp(lg - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lp + (n - i) * lq)
        for i in range(first, last + 1)
    )
    return min(1.0, math.fsum(terms))


def clopper_pearson(k: int, n: int, alpha: float = ALPHA) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of a binomial share: every ``p`` that
    the exact test at ``alpha / 2`` a side does not reject.

    >>> tuple(round(x, 4) for x in clopper_pearson(5, 5))
    (0.4782, 1.0)
    >>> clopper_pearson(0, 0)
    (0.0, 1.0)
    """
    if not 0 <= k <= n:
        raise ValueError(f"k must lie in [0, n] (got {k} of {n})")
    check_level(alpha, "alpha")
    lo = 0.0 if k == 0 else _bisect(lambda p: _tail(k, n, p) >= alpha / 2, 0.0, k / n)
    hi = 1.0 if k == n else 1.0 - _bisect(lambda q: _tail(n - k, n, q) >= alpha / 2, 0.0, 1 - k / n)
    return lo, hi


def _bisect(
    accepted: Callable[[float], bool], rejected_end: float, accepted_end: float, steps: int = 60
) -> float:
    """The boundary between a rejected and an accepted end, on the accepted side."""
    lo, hi = rejected_end, accepted_end
    for _ in range(steps):
        mid = (lo + hi) / 2
        if accepted(mid):
            hi = mid
        else:
            lo = mid
    return hi


def mcnemar_test(lost: int, gained: int, n: int, alpha: float = ALPHA) -> PairedTest:
    """Exact McNemar on ``n`` paired scenarios and its interval at level ``1 - alpha``.

    >>> t = mcnemar_test(0, 5, 60)
    >>> round(t.p, 4), t.ci[0] < 0 < t.ci[1]
    (0.0625, True)
    """
    check_level(alpha, "alpha")
    if not 0 <= lost + gained <= n or min(lost, gained) < 0:
        raise ValueError(f"lost and gained must be pairs of the n (got {lost} + {gained} of {n})")
    p = mcnemar(lost, gained)
    diff = (gained - lost) / n if n else 0.0
    min_p = mcnemar(0, lost + gained)
    if n < MIN_SCENARIOS:
        return PairedTest(diff, p, None, "exact McNemar", n, min_p)
    t_lo, t_hi = clopper_pearson(gained, lost + gained, alpha)
    z = NormalDist().inv_cdf(1 - alpha / 2)
    d_lo, d_hi = wilson(lost + gained, n, z)

    # the extremes of pi * (2 * theta - 1) over the box of the two intervals
    s_lo, s_hi = 2 * t_lo - 1, 2 * t_hi - 1
    lo = s_lo * (d_lo if s_lo >= 0 else d_hi)
    hi = s_hi * (d_hi if s_hi >= 0 else d_lo)
    return PairedTest(diff, p, _agree((lo, hi), p, alpha), "exact McNemar", n, min_p)


def _agree(ci: tuple[float, float], p: float, alpha: float) -> tuple[float, float]:
    """The interval holds 0 when the test does not reject (guards rounding at p = alpha)."""
    return (min(ci[0], 0.0), max(ci[1], 0.0)) if p >= alpha else ci


def signflip_test(diffs: Sequence[float], alpha: float = ALPHA) -> PairedTest:
    """The sign-flip test of per-scenario differences, and the interval that belongs to it.

    The statistic is the sum of the differences; under the null each scenario's
    difference is as likely negated. Its distribution is computed exactly (no
    resampling), so a p-value can be as small as the design allows: ``2 / 2**m`` with
    ``m`` scenarios that differ. The interval is McNemar's construction carried over to
    scenario means: the difference is ``pi * (2 * theta - 1)`` with ``pi`` the mean
    absolute difference (a share of the scenarios' weight: Wilson interval) and
    ``theta`` the share of that weight the arm won, whose interval inverts the same
    test with each scenario's sign drawn ``+`` with chance ``theta`` (at ``1/2`` it is
    the sign-flip test itself). It never has zero width, and it excludes 0 exactly
    when the test rejects. With one trial per scenario it is :func:`mcnemar_test`.

    >>> t = signflip_test([0.5, 1.0, 0.25, 0.75, 1.0, 0.5])
    >>> t.p, t.ci[0] > 0
    (0.03125, True)
    >>> signflip_test([1 / 3] + [0.0] * 59).ci[0] < 0
    True
    """
    check_level(alpha, "alpha")
    if not all(-1 <= d <= 1 for d in diffs):  # NaN fails too
        raise ValueError("diffs must lie in [-1, 1] (differences of two shares)")
    n = len(diffs)
    mean = math.fsum(diffs) / n if n else 0.0
    weights, won = _grid(diffs)
    total = sum(weights)
    upper = lambda theta: _weighted_tail(weights, won, theta, above=True)  # noqa: E731
    lower = lambda theta: _weighted_tail(weights, won, theta, above=False)  # noqa: E731
    p = min(1.0, 2 * min(upper(0.5), lower(0.5))) if total else 1.0
    min_p = min(1.0, 2.0 ** (1 - len(weights))) if weights else 1.0
    if n < MIN_SCENARIOS:
        return PairedTest(mean, p, None, "sign-flip permutation", n, min_p)
    t_lo = 0.0 if won == 0 else _bisect(lambda t: upper(t) >= alpha / 2, 0.0, 1.0, 32)
    t_hi = 1.0 if won == total else 1.0 - _bisect(lambda t: lower(1 - t) >= alpha / 2, 0.0, 1.0, 32)
    z = NormalDist().inv_cdf(1 - alpha / 2)
    d_lo, d_hi = wilson(min(n, math.fsum(abs(d) for d in diffs)), n, z)
    s_lo, s_hi = 2 * t_lo - 1, 2 * t_hi - 1
    lo = s_lo * (d_lo if s_lo >= 0 else d_hi)
    hi = s_hi * (d_hi if s_hi >= 0 else d_lo)
    return PairedTest(mean, p, _agree((lo, hi), p, alpha), "sign-flip permutation", n, min_p)


def drop_p(diffs: Sequence[float]) -> float:
    """The one-sided sign-flip p-value for a drop: the chance, with every scenario's sign
    a fair coin, of a sum at most the observed one (exact; with one trial per scenario
    the one-sided binomial test on the discordant scenarios).

    >>> drop_p([-1.0] * 5 + [0.0] * 20)
    0.03125
    >>> drop_p([1.0, -1.0, 0.0, 0.0, 0.0])
    0.75
    """
    weights, won = _grid(diffs)
    return _weighted_tail(weights, won, 0.5, above=False) if weights else 1.0


GRID = 1000
"""Differences are read as fractions with denominators up to this (a scenario's trial
counts); others are rounded to the nearest ``1 / GRID``."""
_MAX_WEIGHT = 20_000
"""The null distribution's support is kept below this many points (coarser grid above)."""


def _grid(diffs: Sequence[float]) -> tuple[list[int], int]:
    """The nonzero differences' sizes as integers on one grid, and the weight the arm won.

    Per-scenario means of trials are fractions with small denominators (the trials), so
    on their common denominator the sign-flip distribution is exact.
    """
    fractions = [Fraction(d).limit_denominator(GRID) for d in diffs if d]
    scale = math.lcm(*(f.denominator for f in fractions)) if fractions else 1
    size = math.fsum(abs(d) for d in diffs)
    if scale > GRID or size * scale > _MAX_WEIGHT:
        scale = max(1, min(GRID, int(_MAX_WEIGHT / max(size, 1e-12))))
    ints = [(round(abs(f) * scale), f > 0) for f in fractions]
    weights = [w for w, _ in ints if w]
    return weights, sum(w for w, plus in ints if w and plus)


def _weighted_tail(weights: Sequence[int], won: int, theta: float, *, above: bool) -> float:
    """P(S >= won) (or P(S <= won)) where S sums each weight with chance ``theta``."""
    import numpy as np

    pmf = np.zeros(sum(weights) + 1)
    pmf[0], end = 1.0, 0
    for w in weights:  # one scenario at a time: S with it counted or not
        pmf[w : end + w + 1] = pmf[w : end + w + 1] * (1 - theta) + pmf[: end + 1] * theta
        pmf[:w] *= 1 - theta
        end += w
    part = pmf[won:] if above else pmf[: won + 1]
    return min(1.0, float(part.sum()))
