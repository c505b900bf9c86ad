"""Paired statistics for comparing two ways of running the same scenarios.

Pure Python, exact and deterministic.

- :func:`mcnemar`: the exact McNemar test (a two-sided binomial test on the
  discordant pairs).
- :func:`pass_hat_k`: pass^k as tau-bench defines it, the chance that k trials
  drawn from a task's n all succeed, averaged over tasks.
- :func:`min_detectable_effect`: the smallest difference a test of this design
  (scenarios and trials) would find four times in five.

The paired tests that give verdicts, and their intervals, are in
:mod:`agentproc.analysis.stats.paired`; corrections for many tests in
:mod:`agentproc.analysis.stats.multiplicity`.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from statistics import NormalDist
from typing import Literal

from agentproc.analysis.stats.binomial import Z95

ALPHA = 0.05
"""Significance level of every test and verdict (two-sided)."""
Z_POWER = 0.8416212335729143
"""Standard normal quantile at the 80% power the minimum detectable effect assumes."""

Verdict = Literal["better", "worse", "no detectable difference"]
"""What a comparison concludes about a variant against the baseline."""


def binomial_two_sided(k: int, n: int) -> float:
    """Exact two-sided p-value of ``k`` successes in ``n`` fair coin flips.

    The probability of an outcome at least as far from ``n / 2`` as ``k``; the
    binomial with p = 1/2 is symmetric, so it is twice the smaller tail, capped at 1.

    >>> binomial_two_sided(0, 5)
    0.0625
    >>> binomial_two_sided(3, 6)
    1.0
    """
    if not 0 <= k <= n:
        raise ValueError(f"k must lie in [0, n] (got {k} of {n})")
    if n == 0:
        return 1.0
    low = min(k, n - k)
    tail = sum(math.comb(n, i) for i in range(low + 1))
    return min(1.0, 2 * tail / 2**n)


def mcnemar(b: int, c: int) -> float:
    """Exact McNemar p-value from the discordant pairs.

    Args:
        b: Pairs where only the baseline succeeded.
        c: Pairs where only the variant succeeded.

    Concordant pairs carry no information about the difference; under the null
    hypothesis each discordant pair falls either way with probability 1/2.

    >>> mcnemar(1, 9)
    0.021484375
    >>> mcnemar(0, 0)
    1.0
    """
    return binomial_two_sided(b, b + c)


def pass_hat_k(tasks: Iterable[tuple[int, int]], k: int) -> float | None:
    """pass^k: the chance that ``k`` of a task's trials, drawn without replacement, all
    succeed, averaged over tasks (tau-bench's estimator).

    Args:
        tasks: ``(successes, trials)`` per task; tasks with fewer than ``k`` trials
            are left out.
        k: Trials that must all succeed.

    Returns:
        The mean of ``C(c, k) / C(n, k)``, or ``None`` when no task has ``k`` trials.

    >>> pass_hat_k([(2, 4), (4, 4)], 2)
    0.5833333333333334
    """
    if k < 1:
        raise ValueError(f"k must be at least 1 (got {k})")
    values = [math.comb(c, k) / math.comb(n, k) for c, n in tasks if n >= k]
    return math.fsum(values) / len(values) if values else None


EXACT_TRIALS = 256
"""Up to this many trials a task's pass^k is the exact ratio of binomial coefficients; past
it, their running product (within a few units in the last place of it, and linear in trials
where the exact ratios of every k cost the square of them)."""


def pass_hat_ks(tasks: Iterable[tuple[int, int]], ks: Iterable[int]) -> dict[int, float | None]:
    """:func:`pass_hat_k` for every k of ``ks`` at once, in time linear in the trials: each
    distinct ``(successes, trials)`` is worked out once, its ratios for k = 1, 2, ... one from
    the last.

    >>> pass_hat_ks([(2, 4), (4, 4)], [1, 2, 5])
    {1: 0.75, 2: 0.5833333333333334, 5: None}
    """
    wanted = sorted(set(ks))
    if wanted and wanted[0] < 1:
        raise ValueError(f"k must be at least 1 (got {wanted[0]})")
    counts = Counter(tasks)
    top = wanted[-1] if wanted else 0
    ratios = {task: _ratios(*task, min(top, task[1])) for task in counts}
    out: dict[int, float | None] = {}
    for k in wanted:
        held = [(ratios[task][k - 1], m) for task, m in counts.items() if task[1] >= k]
        total = sum(m for _, m in held)
        values = itertools.chain.from_iterable(itertools.repeat(v, m) for v, m in held)
        out[k] = math.fsum(values) / total if total else None
    return out


def _ratios(c: int, n: int, top: int) -> list[float]:
    """``C(c, k) / C(n, k)`` for k = 1 .. ``top`` (``top`` at most ``n``)."""
    if n <= EXACT_TRIALS:
        return [math.comb(c, k) / math.comb(n, k) for k in range(1, top + 1)]
    out, r = [], 1.0
    for k in range(1, top + 1):
        r = r * (c - k + 1) / (n - k + 1) if r else 0.0
        out.append(r)
    return out


def min_detectable_effect(diffs: Sequence[float], trials: float = 1.0, sides: int = 2) -> float:
    """The smallest true difference the scenario-level test at :data:`ALPHA` finds with 80%
    power, for ``len(diffs)`` scenarios of ``trials`` paired trials each.

    Normal approximation with the scenarios' null variance, the mean square of the
    per-scenario differences: ``(z_a + z_p) * sqrt(mean(d^2) / n)``. When the effect
    is carried by rare gains, each trial gained with chance ``delta``, the mean
    square is about ``delta / trials``, which gives the floor
    ``(z_a + z_p)^2 / (n * trials)``. Capped at 1; 1 with fewer than six scenarios
    (neither test can reject below six: two-sided ``2 / 2**5`` is above 5%) and
    with none (nothing to divide by). ``sides=1`` gives it for a one-sided test (a drop,
    as ``check`` tests it), which can reject from five scenarios on.

    >>> round(min_detectable_effect([0.0] * 100), 4)
    0.0785
    >>> round(min_detectable_effect([0.0] * 60, trials=3), 4)
    0.0436
    >>> min_detectable_effect([])
    1.0
    >>> round(min_detectable_effect([0.0] * 100, sides=1), 4)
    0.0618
    """
    n = len(diffs)
    if n < (6 if sides == 2 else 5) or trials <= 0:
        return 1.0
    # Z95: the normal quantile at 1 - ALPHA / 2
    z = (Z95 if sides == 2 else NormalDist().inv_cdf(1 - ALPHA)) + Z_POWER
    spread = z * math.sqrt(math.fsum(d * d for d in diffs) / n / n)
    return min(1.0, max(spread, z * z / (n * trials)))


def verdict(diff: float, p: float, alpha: float = ALPHA) -> Verdict:
    """``better`` or ``worse`` when the paired test rejects at ``alpha`` (``p < alpha``:
    at exactly ``alpha`` it does not), else no detectable difference (at this sample size).

    >>> verdict(0.1, 0.05), verdict(-0.1, 0.0499)
    ('no detectable difference', 'worse')
    """
    if p < alpha and diff > 0:
        return "better"
    if p < alpha and diff < 0:
        return "worse"
    return "no detectable difference"
