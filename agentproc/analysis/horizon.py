"""The procedure horizon: how long a procedure an agent follows, with an interval.

As METR's time horizon does for task length, episode success is fitted against the
length of the procedure on a log scale, and the horizon at level ``q`` is the length at
which the fitted success falls to ``q``.

- **The curve** is ``P(success) = exp(-exp(a + b * log2(steps)))``: a binomial model on
  ``log2(steps)`` with the complementary log-log link on failure (the Weibull survival
  curve over steps). An agent that errs independently with chance ``p`` at each step
  succeeds with ``(1 - p) ** steps``, which is this curve exactly (``b = ln 2``), so its
  horizon ``log(q) / log(1 - p)`` is recovered without bias; an error rate growing with
  the step index (or falling) is a steeper (or flatter) ``b``. The logistic curve METR
  fits was measured on the same agents: it put the 50% horizon of a 2%-per-step agent at
  31.6 steps instead of 34.3, and its interval covered the truth 87% of the time.
- **The fit** is Firth's bias-reduced maximum likelihood on each scenario's successes
  over its trials (the penalty keeps the estimates finite when the outcomes separate,
  as they do when an agent passes every short procedure and fails every long one).
- **The interval** respects the design: the scenario is the unit (its trials are not
  independent), through the model's covariance scaled by the scenarios' overdispersion
  (quasi-binomial), and the interval of the ratio is Fieller's: every length at which
  the fitted curve is not rejected as equal to ``q`` at 5% (Student's t on
  ``scenarios - 2`` degrees of freedom). It is unbounded when the slope is not clearly
  told apart from 0. Calibrated in ``benchmarks/bench_horizon.py``.
- **Never extrapolated**: a horizon or a bound beyond the longest length tested reads
  "beyond N", one below the shortest "below N". With one length tested there is no fit.

statsmodels has binomial GLMs but not Firth's penalty nor Fieller's interval over a
quasi-binomial covariance, and importing it costs about a second: the fit is a few
lines of numpy.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentproc.analysis.cell_stats import t_quantile

LEVELS = (0.5, 0.8)
"""The success levels a horizon is reported at."""

Row = tuple[int, int, int]
"""One scenario: its procedure's steps, its successes, its trials."""


@dataclass(frozen=True, slots=True)
class Horizon:
    """The length at which fitted success falls to :attr:`level`, and its 95% interval."""

    level: float
    steps: float | None
    """The fitted length; ``None`` when it lies outside the tested lengths (see
    :attr:`beyond`) or there is no fit."""
    low: float | None
    """Lower bound; ``None`` when it is below the shortest length tested."""
    high: float | None
    """Upper bound; ``None`` when it is beyond the longest length tested."""
    shortest: int
    longest: int
    beyond: bool | None
    """The point estimate: ``True`` beyond the longest length, ``False`` below the
    shortest, ``None`` within the tested range (or no fit)."""
    scenarios: int

    @property
    def fitted(self) -> bool:
        """Whether two or more lengths were tested, so that there is a fit at all."""
        return self.shortest != self.longest

    def text(self, short: bool = False) -> str:
        """``23 steps [14, 41]``, ``beyond 95 (the longest tested)``, ``below 5 ...``
        (``short``: without what the bound is)."""
        if not self.fitted:
            return f"no fit (one length tested: {self.longest})"
        if self.beyond is True:
            head = f"beyond {self.longest}" + ("" if short else " (the longest tested)")
        elif self.beyond is False:
            head = f"below {self.shortest}" + ("" if short else " (the shortest tested)")
        else:
            head = f"{self.steps:.3g} steps"
        low = f"below {self.shortest}" if self.low is None else f"{self.low:.3g}"
        high = f"beyond {self.longest}" if self.high is None else f"{self.high:.3g}"
        return f"{head} [{low}, {high}]"

    def to_json(self) -> dict[str, Any]:
        """The JSON form: lengths rounded to 2 decimals, ``null`` where out of range."""

        def r(x: float | None) -> float | None:
            return None if x is None else round(x, 2)

        return {
            "level": self.level,
            "steps": r(self.steps),
            "ci": [r(self.low), r(self.high)],
            "beyond": self.beyond,
            "shortest": self.shortest,
            "longest": self.longest,
            "scenarios": self.scenarios,
            "text": self.text(),
        }


def _info(design: Any, n: Any, beta: Any) -> Any:
    """Fisher information of the complementary log-log model at ``beta``."""
    import numpy as np

    eta = np.clip(design @ beta, -30, 6)
    e = np.exp(eta)
    fail = -np.expm1(-e)  # P(failure) = 1 - exp(-exp(eta))
    w = n * e * e * (1 - fail) / np.maximum(fail, 1e-300)
    return design.T @ (design * w[:, None])


MEASURES = {"faithful": "faithful", "first_answer": "first-answer"}
"""The measures a horizon is fitted for, and how a line names them."""


@dataclass(frozen=True, slots=True)
class Horizons:
    """One group's horizons: each of :data:`MEASURES` at each of :data:`LEVELS`."""

    of: dict[str, tuple[Horizon, ...]]
    """Measure -> its horizon at each level, in :data:`LEVELS` order."""
    rows: dict[str, tuple[Row, ...]] = field(default_factory=dict, compare=False)
    """Measure -> the scenarios' rows it was fitted on (for the HTML report's figure)."""

    def lines(self) -> list[str]:
        """One line per measure: ``faithful horizon: 50%: 23 steps [14, 41]; 80%: ...``."""
        return [
            f"{MEASURES[m]} horizon: " + "; ".join(f"{100 * h.level:.0f}%: {h.text()}" for h in hs)
            for m, hs in self.of.items()
        ]

    def to_json(self) -> dict[str, Any]:
        """Measure -> ``{"50": ..., "80": ...}``."""
        return {m: {f"{100 * h.level:.0f}": h.to_json() for h in hs} for m, hs in self.of.items()}


def by_lookback_lines(per: dict[int, Horizons]) -> list[str]:
    """Per measure, its 50% horizon at each look-back:
    ``faithful 50% horizon by look-back: 1: 23 steps [14, 41]; 2: below 5 [...]``."""
    if not per:
        return []
    measures = next(iter(per.values())).of
    return [
        f"{MEASURES[m]} 50% horizon by look-back: "
        + "; ".join(f"{lb}: {h.of[m][0].text(short=True)}" for lb, h in per.items())
        for m in measures
    ]


def horizons(rows: Mapping[str, Sequence[Row]]) -> Horizons | None:
    """Every measure's horizons from its scenarios' rows; ``None`` with one length or none
    (a suite of one length has no horizon to give)."""
    if len({s for r in rows.values() for s, _, _ in r}) < 2:
        return None
    return Horizons(
        {m: tuple(horizon(r, q) for q in LEVELS) for m, r in rows.items()},
        {m: tuple(r) for m, r in rows.items()},
    )


def weibull_fit(rows: Sequence[Row]) -> tuple[tuple[float, float], list[list[float]]]:
    """Firth-penalised fit of ``P(success) = exp(-exp(a + b log2(steps)))`` (a binomial
    model with the complementary log-log link on failure): the estimates ``(a, b)`` and
    their covariance, quasi-binomial over scenarios.

    >>> (a, b), _ = weibull_fit([(5, 9, 10), (10, 7, 10), (20, 3, 10), (40, 1, 10)])
    >>> b > 0
    True
    """
    import numpy as np

    x = np.array([math.log2(s) for s, _, _ in rows])
    k = np.array([float(c) for _, c, _ in rows])
    n = np.array([float(m) for _, _, m in rows])
    design = np.column_stack([np.ones_like(x), x])
    # start from least squares on each scenario's smoothed success, on the model's scale
    smoothed = (k + 0.5) / (n + 1)
    beta = np.linalg.lstsq(design, np.log(-np.log(smoothed)), rcond=None)[0]
    ridge = 1e-9 * np.eye(2)
    for _ in range(200):
        eta = np.clip(design @ beta, -30, 6)
        e = np.exp(eta)
        fail = np.clip(-np.expm1(-e), 1e-300, 1.0)
        # d loglik / d eta for k successes of n: successes contribute -e each; failures
        # contribute e (1 - F) / F each
        score = design.T @ ((n - k) * e * (1 - fail) / fail - k * e)
        info = _info(design, n, beta) + ridge
        inv = np.linalg.inv(info)
        # Firth: half the trace of I^-1 dI/dbeta_r, by central differences
        adj = np.array(
            [
                0.5
                * np.trace(inv @ (_info(design, n, beta + d) - _info(design, n, beta - d)))
                / (2 * 1e-5)
                for d in (np.array([1e-5, 0.0]), np.array([0.0, 1e-5]))
            ]
        )
        step = inv @ (score + adj)
        step = step * min(1.0, 1.0 / max(1e-12, float(np.max(np.abs(step)))))  # a damped step
        beta = beta + step
        if float(np.max(np.abs(step))) < 1e-9:
            break
    inv = np.linalg.inv(_info(design, n, beta) + ridge)
    eta = np.clip(design @ beta, -30, 6)
    fail = -np.expm1(-np.exp(eta))
    # quasi-binomial: the model's covariance scaled by the scenarios' overdispersion
    # (trials of one scenario agree more than independent draws would), never below 1
    c = len(rows)
    resid = (n - k) - n * fail
    pearson = float(np.sum(resid**2 / np.maximum(n * fail * (1 - fail), 1e-12)))
    phi = max(1.0, pearson / (c - 2)) if c > 2 else 1.0
    return (float(beta[0]), float(beta[1])), (inv * phi).tolist()


def horizon(rows: Sequence[Row], level: float = 0.5) -> Horizon:
    """The procedure horizon at ``level`` over scenarios ``(steps, successes, trials)``.

    >>> rows = [(s, round(10 * 0.97**s), 10) for s in (5, 10, 20, 40, 80) for _ in range(6)]
    >>> h = horizon(rows)
    >>> 18 < h.steps < 28 and h.low < h.steps < h.high
    True
    >>> horizon([(5, 0, 3), (10, 0, 3)]).text()
    'below 5 (the shortest tested) [below 5, beyond 10]'
    """
    lengths = [s for s, _, _ in rows]
    shortest, longest = (min(lengths), max(lengths)) if lengths else (0, 0)
    if shortest == longest:
        return Horizon(level, None, None, None, shortest, longest, None, len(rows))
    (a, b), cov = weibull_fit(rows)
    target = math.log(-math.log(level))  # eta at which success is ``level``
    lo_x, hi_x = math.log2(shortest), math.log2(longest)
    point: float | None = None
    beyond: bool | None = None
    if a + b * hi_x <= target:  # still at or above the level at the longest length
        beyond = True
    elif a + b * lo_x > target:  # already below it at the shortest
        beyond = False
    else:  # falls through the level within the tested lengths
        point = (target - a) / b
    t = t_quantile(max(1, len(rows) - 2))
    low, high = _fieller(a - target, b, cov, t)
    return Horizon(
        level,
        None if point is None else 2**point,
        None if low is None or low < lo_x else 2 ** min(low, hi_x),
        None if high is None or high > hi_x else 2 ** max(high, lo_x),
        shortest,
        longest,
        beyond,
        len(rows),
    )


def _fieller(
    a: float, b: float, cov: list[list[float]], t: float
) -> tuple[float | None, float | None]:
    """Every ``x`` with ``(a + b x)^2 <= t^2 var(a + b x)``: the lengths (log2) at which
    the fitted logit is not told apart from the target; ``None`` for an open end."""
    vaa, vab, vbb = cov[0][0], cov[0][1], cov[1][1]
    qa = b * b - t * t * vbb
    qb = 2 * (a * b - t * t * vab)
    qc = a * a - t * t * vaa
    disc = qb * qb - 4 * qa * qc
    if qa <= 0 or disc < 0:  # the slope is not told apart from 0: no bound on either side
        return None, None
    r1 = (-qb - math.sqrt(disc)) / (2 * qa)
    r2 = (-qb + math.sqrt(disc)) / (2 * qa)
    return min(r1, r2), max(r1, r2)
