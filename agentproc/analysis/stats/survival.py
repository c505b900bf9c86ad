"""Still on the procedure, step by step: the Kaplan-Meier curve over the first
divergence, its 95% band, and the hazard per step.

An episode's time is the step of its first divergence (the step the procedure expected
when it first left it): it was on the procedure through every step before. An episode
that never left the steps (faithful throughout, or leaving only at the answer) is
*censored* at its procedure's length ``N``: it was seen on the procedure through step
``N`` and no further, because its procedure ends there. So procedures of every length
pool into one curve: at step ``t`` the episodes *at risk* are those whose procedure
reaches ``t`` and that had not left before it.

- **The curve**: ``S(t) = prod over j <= t of (1 - d_j / n_j)`` (``d_j`` episodes left
  at step ``j`` of the ``n_j`` at risk there).
- **The band** is the log-log transformed one, ``S(t) ** exp(+-z se)`` with ``se`` the
  standard error of ``log(-log S(t))``: Greenwood's variance when every scenario has
  one trial (independent episodes); with several trials, the cluster-robust variance
  over scenarios (the infinitesimal jackknife of ``log S``, summed per scenario, with
  the small-sample factor ``s / (s - 1)`` and Student's t on ``s - 1`` degrees of
  freedom, never narrower than Greenwood's). With one episode per cluster the
  jackknife sum is Greenwood's exactly. Where ``S(t)`` is 1 (no one has left yet) or 0
  (every one has) the band is undefined and not given.
- **The median** step of leaving is the first step at which ``S`` is at or below a half;
  its interval (Brookmeyer and Crowley, through the band) runs from the first step whose
  lower bound is at or below a half to the first whose upper bound is; past the last
  step observed it reads "beyond T".
- **The hazard** at step ``t`` is ``d_t / n_t``, the chance of leaving there for an
  episode still on the procedure, with the Wilson interval of a report's rates (on the
  effective count over scenarios when a scenario has several trials at risk).

lifelines computes the curve and Greenwood's band, but not a cluster-robust band, and
costs a pandas import; the arithmetic is a few lines.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from agentproc.analysis.stats.binomial import Rate
from agentproc.analysis.stats.clustered import Clustered, quantile

Episode = tuple[int, bool]
"""An episode's time (a step, from 1) and whether it left the procedure there (``False``:
censored, still on it at the end of its procedure)."""


@dataclass(frozen=True, slots=True)
class SurvivalPoint:
    """The curve at one step."""

    step: int
    at_risk: int
    events: int
    """Episodes that left the procedure at this step."""
    censored: int
    """Episodes whose procedure ends at this step, still on it."""
    survival: float
    low: float | None
    high: float | None

    def to_json(self) -> dict[str, Any]:
        """``{"step", "at_risk", "events", "censored", "survival", "ci"}``."""
        ci = (
            None
            if self.low is None or self.high is None
            else [round(self.low, 4), round(self.high, 4)]
        )
        return {
            "step": self.step,
            "at_risk": self.at_risk,
            "events": self.events,
            "censored": self.censored,
            "survival": round(self.survival, 4),
            "ci": ci,
        }


@dataclass(frozen=True, slots=True)
class Median:
    """The median step of leaving the procedure and its 95% interval (``None``: beyond
    :attr:`last`, the last step observed)."""

    step: int | None
    low: int | None
    high: int | None
    last: int

    def text(self) -> str:
        """``12 [9, 15]``, or ``beyond 40 (the last step observed) [31, beyond 40]``."""
        head = (
            f"beyond {self.last} (the last step observed)" if self.step is None else str(self.step)
        )
        low = f"beyond {self.last}" if self.low is None else str(self.low)
        high = f"beyond {self.last}" if self.high is None else str(self.high)
        return f"{head} [{low}, {high}]"

    def to_json(self) -> dict[str, Any]:
        """``{"step", "ci", "beyond", "last", "text"}``, ``null`` past the last step."""
        return {
            "step": self.step,
            "ci": [self.low, self.high],
            "beyond": self.step is None,
            "last": self.last,
            "text": self.text(),
        }


@dataclass(frozen=True, slots=True)
class Survival:
    """The Kaplan-Meier curve, how its band was computed, and its median."""

    points: list[SurvivalPoint]
    variance: str
    """``greenwood`` (independent episodes) or ``cluster-robust`` (scenarios of trials)."""
    median: Median


def kaplan_meier(
    clusters: Sequence[Sequence[Episode]], counts: Sequence[int] | None = None
) -> Survival:
    """The curve over clusters (scenarios) of episodes ``(time, left)``; ``counts[i]``:
    how many clusters are like ``clusters[i]`` (1 each when not given), so that a run of
    independent episodes is folded into one cluster per time.

    >>> s = kaplan_meier([[(2, True)], [(3, False)], [(3, True)], [(1, True)]])
    >>> [(p.step, p.at_risk, p.events, round(p.survival, 4)) for p in s.points]
    [(1, 4, 1, 0.75), (2, 3, 1, 0.5), (3, 2, 1, 0.25)]
    >>> s.median.step
    2
    """
    counts = counts or [1] * len(clusters)
    last = max((t for c in clusters for t, _ in c), default=0)
    at, left, censored = [0] * (last + 2), [0] * (last + 2), [0] * (last + 2)
    for c, w in zip(clusters, counts, strict=True):
        for t, event in c:
            at[t] += w
            (left if event else censored)[t] += w
    risk = [0] * (last + 2)
    for t in range(last, 0, -1):
        risk[t] = risk[t + 1] + at[t]
    robust = any(len(c) > 1 for c in clusters)
    var = _robust_var(clusters, counts, risk, left, last) if robust else None
    z = quantile(sum(counts), robust)
    points, s, greenwood, defined = [], 1.0, 0.0, True
    for t in range(1, last + 1):
        n, d = risk[t], left[t]
        s *= 1 - d / n
        if d == n:
            defined = False  # every one at risk left: S is 0 from here on
        else:
            greenwood += d / (n * (n - d))
        v = greenwood if var is None else max(greenwood, var[t])
        low = high = None
        if defined and 0 < s < 1:
            se = z * math.sqrt(v) / abs(math.log(s))
            low, high = s ** math.exp(se), s ** math.exp(-se)
        points.append(SurvivalPoint(t, n, d, censored[t], s, low, high))
    return Survival(points, "cluster-robust" if robust else "greenwood", _median(points, last))


def _robust_var(
    clusters: Sequence[Sequence[Episode]],
    counts: Sequence[int],
    risk: list[int],
    left: list[int],
    last: int,
) -> list[float]:
    """Per step, the cluster-robust variance of ``log S``: ``s / (s - 1)`` times the sum
    over clusters of their summed influence, squared. An episode's influence on
    ``log S(t)`` is ``-sum over j <= t of (dN_j - Y_j d_j / n_j) / (n_j - d_j)``
    (``dN_j``: it left at ``j``; ``Y_j``: it was at risk there)."""
    sums = [0.0] * (last + 2)
    tail = [0.0] * (last + 2)  # a cluster's influence after its last step, from there on
    stop = next((t for t in range(1, last + 1) if left[t] == risk[t]), last + 1)
    for c, w in zip(clusters, counts, strict=True):
        mine_at: dict[int, int] = {}
        mine_left: dict[int, int] = {}
        for t, event in c:
            mine_at[t] = mine_at.get(t, 0) + 1
            if event:
                mine_left[t] = mine_left.get(t, 0) + 1
        end = min(max(mine_at), stop - 1)
        u, mine_risk = 0.0, len(c)
        for t in range(1, end + 1):
            n, d = risk[t], left[t]
            u -= (mine_left.get(t, 0) - mine_risk * d / n) / (n - d)
            sums[t] += w * u * u
            mine_risk -= mine_at.get(t, 0)
        tail[end + 1] += w * u * u
    s = sum(counts)
    out, carried = [0.0] * (last + 2), 0.0
    for t in range(1, last + 1):
        carried += tail[t]
        out[t] = (sums[t] + carried) * s / (s - 1) if s > 1 else 0.0
    return out


def _at_most_half(points: list[SurvivalPoint], i: int) -> bool:
    """Whether the curve is at or below a half at ``points[i]``. The curve is a running
    float product, so a value within 1e-9 of a half is decided on the exact product of its
    factors (``S = 5/10`` reads 0.5000000000000001)."""
    v = points[i].survival
    if abs(v - 0.5) > 1e-9:
        return v <= 0.5
    exact = Fraction(1)
    for p in points[: i + 1]:
        exact *= Fraction(p.at_risk - p.events, p.at_risk)
    return exact <= Fraction(1, 2)


def _median(points: list[SurvivalPoint], last: int) -> Median:
    def first(values: list[float | None]) -> int | None:
        return next(
            (p.step for p, v in zip(points, values, strict=True) if v is not None and v <= 0.5),
            None,
        )

    def bound(p: SurvivalPoint, high: bool) -> float | None:
        if p.low is not None and p.high is not None:
            return p.high if high else p.low
        return p.survival if p.survival == 0 else None  # undefined at 1: not below a half

    return Median(
        next((p.step for i, p in enumerate(points) if _at_most_half(points, i)), None),
        first([bound(p, False) for p in points]),
        first([bound(p, True) for p in points]),
        last,
    )


def hazard(
    clusters: Sequence[Sequence[Episode]], last: int, counts: Sequence[int] | None = None
) -> list[tuple[int, Rate]]:
    """Per step ``1 .. last``, the share of the episodes at risk that left there, its
    interval over the clusters (:class:`~agentproc.analysis.stats.clustered.Clustered`;
    ``counts`` as :func:`kaplan_meier` takes them)."""
    per = [Clustered() for _ in range(last + 1)]
    for c, w in zip(clusters, counts or [1] * len(clusters), strict=True):
        ends: dict[int, tuple[int, int]] = {}  # time -> (episodes, of which left)
        for t, event in c:
            at, out = ends.get(t, (0, 0))
            ends[t] = (at + 1, out + event)
        mine_risk = len(c)
        for t in range(1, min(max(ends), last) + 1):
            at, out = ends.get(t, (0, 0))
            per[t].add(out, mine_risk, w)
            mine_risk -= at
    return [(t, per[t].rate()) for t in range(1, last + 1)]
