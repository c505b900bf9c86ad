"""The procedure horizon's curve: its Firth-penalised fit and the profile of its
penalised likelihood (:mod:`agentproc.analysis.measures.horizon` reads them).

The curve is ``P(success) = exp(-exp(a + b * log2(steps)))``: ``a + b * x`` is the
complementary log-log of failure, so **success falls with length when ``b > 0``**.

- :func:`_fit` is Firth's bias-reduced maximum likelihood (finite when the outcomes
  separate) and its covariance, quasi-binomial over scenarios.
- :func:`penalised` holds the penalised log-likelihood ``l*(a, b) = l(a, b) + log det
  I(a, b) / 2`` whose maximum that fit is, and maximises it along lines of ``(a, b)``:
  through a point of the curve (``a + b * x0 = eta0``, ``b`` free) or flat (``b = 0``).
  Those maxima are the profile on which the horizon's interval and the test of a fall
  are read (twice the drop from the maximum, over the overdispersion, against
  Student's ``t ** 2`` on ``scenarios - 2`` degrees of freedom): unlike Wald's or
  Fieller's interval, which read the covariance at the estimate and open up when the
  outcomes nearly separate, the profile stays bounded there (Heinze and Schemper, 2002).

statsmodels has binomial GLMs but neither Firth's penalty nor its profile, and importing
it costs about a second: the fit is a few lines of numpy. Each maximisation is a grid of
:data:`GRID` points, then a golden-section search around its best point (exact for a
function with one peak, which the penalised likelihood along a line is), vectorised over
many lines at once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from agentproc.analysis.stats.student_t import t_quantile

Row = tuple[int, int, int]
"""One scenario: its procedure's steps, its successes, its trials."""

Slopes = Literal["falling", "rising", "any"]
"""The curves a profile searches: success falling with length (``b >= 0``), rising
(``b <= 0``), or either."""
SLOPES: dict[Slopes, tuple[float, float]] = {
    "falling": (0.0, 1.0),
    "rising": (-1.0, 0.0),
    "any": (-1.0, 1.0),
}
"""Each set of curves as the range of ``b`` it searches, in :attr:`Penalised.span`."""

GRID = 9
"""Points of the grid a maximisation along a line starts from."""
ROUNDS = 24
"""Golden-section steps after it: the bracket shrinks by ``0.618 ** ROUNDS`` (1e-5)."""
SPAN = 48.0
"""The widest fall of ``a + b * x`` over the tested lengths a profile searches (success
from 1 to 0 and far past)."""


def cloglog_terms(design: Any, k: Any, n: Any, beta: Any) -> tuple[Any, Any]:
    """Each row's part of the complementary log-log model's score and information at
    ``beta``, ``k`` successes of ``n`` trials: ``(d loglik / d eta, its weight in the
    information)``; the score is ``design.T @ r``, the information ``design.T @ (design * w)``."""
    import numpy as np

    e = np.exp(np.clip(design @ beta, -30, 6))
    fail = np.clip(-np.expm1(-e), 1e-300, 1.0)  # P(failure) = 1 - exp(-exp(eta))
    # successes contribute -e each; failures contribute e (1 - F) / F each
    return (n - k) * e * (1 - fail) / fail - k * e, n * e * e * (1 - fail) / fail


def _info(design: Any, n: Any, beta: Any) -> Any:
    """Fisher information of the complementary log-log model at ``beta``."""
    _, w = cloglog_terms(design, n, n, beta)
    return design.T @ (design * w[:, None])


def _fit(rows: Sequence[Row]) -> tuple[tuple[float, float], list[list[float]], float]:
    """The Firth estimates, their model covariance and the overdispersion (at least 1)."""
    import numpy as np

    x, k, n = _merged(rows)
    design = np.column_stack([np.ones_like(x), x])
    # start from least squares on each scenario's smoothed success, on the model's scale
    smoothed = (k + 0.5) / (n + 1)
    beta = np.linalg.lstsq(design, np.log(-np.log(smoothed)), rcond=None)[0]
    ridge = 1e-9 * np.eye(2)
    for _ in range(200):
        score = design.T @ cloglog_terms(design, k, n, beta)[0]
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
    # quasi-binomial: the model's covariance scaled by the scenarios' overdispersion
    # (trials of one scenario agree more than independent draws would), never below 1
    x, k, n = row_arrays(rows)
    fail = -np.expm1(-np.exp(np.clip(beta[0] + beta[1] * x, -30, 6)))
    c = len(rows)
    resid = (n - k) - n * fail
    pearson = float(np.sum(resid**2 / np.maximum(n * fail * (1 - fail), 1e-12)))
    phi = max(1.0, pearson / (c - 2)) if c > 2 else 1.0
    return (float(beta[0]), float(beta[1])), inv.tolist(), phi


def _merged(rows: Sequence[Row]) -> tuple[Any, Any, Any]:
    """One row per length: its successes and trials summed over its scenarios. The
    likelihood, its information and Firth's penalty are sums over trials that depend on
    the length alone, so they are the same on these rows as on the scenarios' (only the
    overdispersion and the degrees of freedom count scenarios), and a run of 10,000
    scenarios over five lengths is fitted as five rows."""
    totals: dict[int, list[int]] = {}
    for steps, k, n in rows:
        t = totals.setdefault(steps, [0, 0])
        t[0] += k
        t[1] += n
    return row_arrays([(steps, k, n) for steps, (k, n) in sorted(totals.items())])


def row_arrays(rows: Sequence[Row]) -> tuple[Any, Any, Any]:
    """log2 of each row's steps, its successes and its trials, as arrays."""
    import numpy as np

    return (
        np.array([math.log2(s) for s, _, _ in rows]),
        np.array([float(c) for _, c, _ in rows]),
        np.array([float(m) for _, _, m in rows]),
    )


@dataclass(frozen=True, slots=True)
class Penalised:
    """One group's penalised log-likelihood, its maximum, and how far below it a curve
    may lie and not be rejected at 95%."""

    x: Any
    """Each length's ``log2(steps)`` (its scenarios merged: :func:`_merged`)."""
    k: Any
    n: Any
    a: float
    """Firth's estimates (the maximum)."""
    b: float
    cov: list[list[float]]
    """Their covariance, quasi-binomial."""
    phi: float
    """The scenarios' overdispersion, at least 1."""
    crit: float
    """Student's ``t ** 2`` on ``scenarios - 2`` degrees of freedom (two-sided 95%)."""
    top: float
    """The penalised log-likelihood at the estimates."""
    flat_at: tuple[float, float] = (0.0, 0.0)
    """The best flat curve: its ``a`` and its value (:meth:`flat`)."""

    @property
    def shortest(self) -> float:
        return float(self.x.min())

    @property
    def longest(self) -> float:
        return float(self.x.max())

    @property
    def span(self) -> float:
        """The largest ``|b|`` a profile searches: :data:`SPAN` over the tested range."""
        return SPAN / max(self.longest - self.shortest, 1e-9)

    def rejected(self, value: Any) -> Any:
        """Whether curves of penalised log-likelihood ``value`` are rejected at 95%."""
        return 2 * (self.top - value) / self.phi > self.crit

    def value(self, eta: Any) -> Any:
        """``l*`` of linear predictors ``eta`` (one per scenario on the last axis)."""
        import numpy as np

        e = np.exp(np.minimum(np.maximum(eta, -700.0), 30.0))
        fail = np.maximum(-np.expm1(-e), 1e-300)
        loglik = np.log(fail) @ (self.n - self.k) - e @ self.k
        w = self.n * e * e * (1 - fail) / fail
        s0 = w.sum(-1)
        s1 = w @ self.x
        # det I = s0 * sum w (x - mean)^2 (centred: no cancellation), with the fit's ridge
        mean = s1 / np.maximum(s0, 1e-300)
        s2 = w * (self.x - mean[..., None]) ** 2
        det = s0 * s2.sum(-1) + 1e-9 * (s0 + w @ (self.x * self.x))
        return loglik + 0.5 * np.log(np.maximum(det, 1e-300))

    def line_max(self, base: Any, slope: Any, lo: float, hi: float) -> tuple[Any, Any]:
        """The maximum over ``t`` in ``[lo, hi]`` of ``l*(base + t * slope)`` and where it
        is, for each line (``base`` and ``slope`` of shape ``(lines, scenarios)``): the
        best of a grid of :data:`GRID` points, then a golden-section search between its
        neighbours (:data:`ROUNDS` steps)."""
        import numpy as np

        m, rows = base.shape[0], np.arange(base.shape[0])

        def at(ts: Any) -> Any:  # ts: (lines, points)
            return self.value(base[:, None, :] + ts[:, :, None] * slope[:, None, :])

        ts = np.broadcast_to(np.linspace(lo, hi, GRID), (m, GRID))
        v = at(ts)
        j = v.argmax(1)
        best, where = v[rows, j], ts[rows, j]
        left = ts[rows, np.maximum(j - 1, 0)]
        right = ts[rows, np.minimum(j + 1, GRID - 1)]
        g = (math.sqrt(5) - 1) / 2
        c, d = right - g * (right - left), left + g * (right - left)
        fc, fd = at(np.column_stack([c, d])).T
        for _ in range(ROUNDS):
            up = fc > fd  # the peak is left of d: keep [left, d]
            left, right = np.where(up, left, c), np.where(up, d, right)
            c, d = (
                np.where(up, right - g * (right - left), d),
                np.where(up, c, left + g * (right - left)),
            )
            t = np.where(up, c, d)
            new = at(t[:, None])[:, 0]
            fc, fd = np.where(up, new, fd), np.where(up, fc, new)
            where = np.where(new > best, t, where)
            best = np.maximum(best, new)
        return best, where

    def through(self, x0: Any, eta0: Any, slopes: Slopes = "falling") -> Any:
        """The profile through points of the curve: for each ``(x0, eta0)``, the best
        curve with ``a + b * x0 = eta0`` and ``b`` of the sign ``slopes`` allows
        (``falling``: ``b >= 0``, success does not rise with length)."""
        import numpy as np

        x0, eta0 = np.atleast_1d(x0), np.atleast_1d(eta0)
        base = np.broadcast_to(eta0[:, None], (len(eta0), len(self.x)))
        slope = self.x[None, :] - x0[:, None]
        lo, hi = SLOPES[slopes]
        return self.line_max(base, slope, lo * self.span, hi * self.span)[0]

    def flat(self) -> tuple[float, float]:
        """The best flat curve (``b = 0``): its ``a`` and its value."""
        import numpy as np

        ones = np.ones((1, len(self.x)))
        value, a = self.line_max(ones * 0.0, ones, -40.0, 10.0)
        return float(a[0]), float(value[0])

    def flat_beyond(self, eta: float, over: bool) -> float:
        """The best flat curve with ``a`` at least ``eta`` (``over``) or at most it: the
        best flat one when it lies there, else the one at ``eta`` (one peak)."""
        import numpy as np

        a, value = self.flat_at
        if (a >= eta) == over:
            return value
        return float(self.value(np.full(len(self.x), eta)))


def penalised(rows: Sequence[Row]) -> Penalised:
    """The penalised log-likelihood of scenarios ``(steps, successes, trials)`` of two
    lengths or more, at its maximum (Firth's fit).

    >>> p = penalised([(5, 9, 10), (10, 7, 10), (20, 3, 10), (40, 1, 10)] * 3)
    >>> bool(p.rejected(p.flat_at[1]))  # a flat curve (success does not fall) is rejected
    True
    >>> [round(2**x) for x in p.x.tolist()]  # one row a length, its three scenarios merged
    [5, 10, 20, 40]
    """
    (a, b), cov, phi = _fit(rows)
    x, k, n = _merged(rows)
    crit = t_quantile(max(1, len(rows) - 2)) ** 2
    shell = Penalised(x, k, n, a, b, [[c * phi for c in r] for r in cov], phi, crit, 0.0)
    top = float(shell.value(a + b * x))
    return Penalised(x, k, n, a, b, shell.cov, phi, crit, top, shell.flat())
