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
  differences (exact for up to :data:`EXACT_UNITS` scenarios, else
  :data:`~agentproc.analysis.stats.RESAMPLES` seeded random sign vectors) and the
  interval obtained by inverting that same test: every shift of the differences
  the test does not reject. With one trial per scenario the sign-flip test is
  exactly McNemar's, so both designs rest on one idea.

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
from statistics import NormalDist
from typing import Literal

from agentproc.analysis.cell_stats import wilson
from agentproc.analysis.stats import ALPHA, RESAMPLES, mcnemar
from agentproc.errors import ConfigError

Method = Literal["exact McNemar", "sign-flip permutation"]
"""How a paired difference was tested (and its interval made)."""

MIN_SCENARIOS = 5
"""Below this many paired scenarios no interval is given ("too few scenarios")."""
EXACT_UNITS = 12
"""Up to this many scenarios the sign-flip test enumerates every sign vector."""


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
    lo = 0.0 if k == 0 else _bisect(lambda p: _tail(k, n, p) >= alpha / 2, 0.0, k / n)
    hi = 1.0 if k == n else 1.0 - _bisect(lambda q: _tail(n - k, n, q) >= alpha / 2, 0.0, 1 - k / n)
    return lo, hi


def _bisect(accepted: Callable[[float], bool], rejected_end: float, accepted_end: float) -> float:
    """The boundary between a rejected and an accepted end, on the accepted side."""
    lo, hi = rejected_end, accepted_end
    for _ in range(60):
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


def signflip_test(diffs: Sequence[float], alpha: float = ALPHA, *, seed: int = 0) -> PairedTest:
    """The sign-flip permutation test of per-scenario differences, and its inversion.

    The statistic is the sum of the differences; under the null each scenario's
    difference is as likely negated. The interval holds every shift ``delta`` at
    which the differences minus ``delta`` are not rejected, clipped to [-1, 1].

    >>> t = signflip_test([0.5, 1.0, 0.25, 0.75, 1.0, 0.5])
    >>> t.p, t.ci[0] > 0
    (0.03125, True)
    """
    if seed < 0:  # numpy's generator takes none, and only past EXACT_UNITS: refuse always
        raise ConfigError(f"a seed is a whole number of at least 0 (not {seed})")
    import numpy as np

    n = len(diffs)
    d = np.asarray(diffs, dtype=float)
    mean = float(d.mean()) if n else 0.0
    if n <= EXACT_UNITS:
        signs = 1 - 2 * ((np.arange(2**n)[:, None] >> np.arange(n)) & 1)
        extra = 0
    else:
        rng = np.random.default_rng([seed, n])
        signs = rng.choice(np.array([-1, 1]), size=(RESAMPLES, n))
        extra = 1  # the observed signs count once more: p is never 0
    a, b = signs @ d, signs.sum(axis=1)
    total, tol = float(d.sum()), 1e-9 * (float(np.abs(d).sum()) + n + 1)

    def p_at(delta: float) -> float:
        observed = abs(total - n * delta)
        count = int(np.count_nonzero(np.abs(a - delta * b) >= observed - tol))
        return (count + extra) / (len(a) + extra)

    p = p_at(0.0)
    nonzero = int(np.count_nonzero(d))
    min_p = max(2.0 ** (1 - nonzero), extra / (len(a) + extra)) if nonzero else 1.0
    if n < MIN_SCENARIOS:
        return PairedTest(mean, p, None, "sign-flip permutation", n, min(1.0, min_p))
    rejected_zero = p < alpha

    def bound(end: float) -> float:
        # from a rejected end (0 when it is rejected on that side) to the mean
        start = 0.0 if rejected_zero and (end - mean) * (0.0 - mean) > 0 else end
        if p_at(start) >= alpha:
            return start
        return _bisect(lambda x: p_at(x) >= alpha, start, mean)

    ci = _agree((bound(-1.0), bound(1.0)), p, alpha)
    return PairedTest(mean, p, ci, "sign-flip permutation", n, min(1.0, min_p))
