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
  over its trials (:mod:`agentproc.analysis.stats.horizon_fit`).
- **A horizon needs a fall**: success falls with length when ``b > 0``, tested against a
  flat curve on the profile of the penalised likelihood. Where it is not shown to fall
  (a slope that is not positive, or not significantly so), no length is given: the line
  says ``success does not fall with length over 3 to 12 steps`` (or ``is not shown to
  fall``). The one exception needs no fall: the fit stays above the level through the
  longest length and every curve the data allow, rising or falling, is above it at the
  shortest (``beyond N (the longest tested); lower bound L``, as for an agent that never
  failed), or the mirror (``below N (the shortest tested); upper bound U``).
- **The interval** is every length at which a curve crossing the level there (success
  not rising with length) is not rejected at 95% by the profile of the penalised
  likelihood (the scenario is the unit: the drop is scaled by the scenarios'
  overdispersion and read against Student's t on ``scenarios - 2`` degrees of freedom).
  It holds near separation, where Fieller's interval on the Wald covariance opened up
  (an agent faithful 3/20 at 5 steps and never after was "below 5 [below 5, beyond
  80]"); the point estimate is always inside it. Calibrated in
  ``benchmarks/bench_horizon.py``.
- **Never extrapolated**: a horizon or a bound beyond the longest length tested reads
  "beyond N", one below the shortest "below N"; a horizon out of the tested lengths has
  one bound, the one the data give (``beyond 80 (the longest tested); lower bound 62``),
  and a bound that lies past the tested lengths is the length it lies past (``lower
  bound 80``). With one length tested there is no fit.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agentproc.analysis.stats.binomial import Rate, design_effect
from agentproc.analysis.stats.horizon_fit import Penalised, Row, penalised
from agentproc.analysis.stats.horizon_profile import Ends, band

LEVELS = (0.5, 0.8)
"""The success levels a horizon is reported at."""

Trend = Literal["falls", "not shown to fall", "does not fall"]
"""Whether success falls with length: shown to (``b > 0`` and a flat curve rejected at
95%), estimated to but not shown (``b > 0``), or not even estimated to (``b <= 0``)."""

FLAT = 1e-6
"""A fitted slope at most this is flat: a run of all successes, or all failures, is fitted
a slope of about 1e-8 of either sign."""

_TREND_WORDS: dict[Trend, str] = {
    "falls": "falls",
    "not shown to fall": "is not shown to fall",
    "does not fall": "does not fall",
}


def shown(x: float) -> float:
    """A length as the text shows it (three significant figures): the value a gate
    decides on, so that it decides on what it prints."""
    return float(f"{x:.3g}")


@dataclass(frozen=True, slots=True)
class Horizon:
    """The length at which fitted success falls to :attr:`level`, and its 95% interval."""

    level: float
    steps: float | None
    """The fitted length; ``None`` when it lies outside the tested lengths (see
    :attr:`beyond`), success is not shown to fall, or there is no fit."""
    low: float | None
    """Lower bound; ``None`` when it is below the shortest length tested; the longest
    length when the whole interval lies beyond it."""
    high: float | None
    """Upper bound; ``None`` when it is beyond the longest length tested; the shortest
    length when the whole interval lies below it."""
    shortest: int
    longest: int
    beyond: bool | None
    """``True`` beyond the longest length, ``False`` below the shortest, ``None`` within
    the tested range, with no horizon (:attr:`trend`) or no fit."""
    scenarios: int
    trend: Trend | None = None
    """Whether success falls with length (``None``: no fit)."""

    @property
    def fitted(self) -> bool:
        """Whether two or more lengths were tested, so that there is a fit at all."""
        return self.shortest != self.longest

    @property
    def claimed(self) -> bool:
        """Whether a horizon is given (within, beyond or below the tested lengths): not
        when there is no fit, nor when success is not shown to fall and the data allow
        a crossing of the level within the tested lengths."""
        return self.fitted and (self.steps is not None or self.beyond is not None)

    def head(self, short: bool = False) -> str:
        """The horizon without its interval: ``23 steps``, ``beyond 95 (the longest
        tested)``, ``success does not fall with length over 5 to 95 steps``."""
        if not self.fitted:
            return f"no fit (one length tested: {self.longest})"
        if not self.claimed:
            words = _TREND_WORDS[self.trend or "does not fall"]
            return f"success {words} with length over {self.shortest} to {self.longest} steps"
        if self.beyond is True:
            return f"beyond {self.longest}" + ("" if short else " (the longest tested)")
        if self.beyond is False:
            return f"below {self.shortest}" + ("" if short else " (the shortest tested)")
        return f"{self.steps:.3g} steps"

    def bounds(self) -> str:
        """The interval as the text gives it: ``[14, 41]``, ``; lower bound 62`` (beyond
        the longest), ``; upper bound 5`` (below the shortest), or nothing."""
        low = f"below {self.shortest}" if self.low is None else f"{self.low:.3g}"
        high = f"beyond {self.longest}" if self.high is None else f"{self.high:.3g}"
        if not self.claimed:
            return ""
        if self.beyond is True:
            return f"; lower bound {low}"
        if self.beyond is False:
            return f"; upper bound {high}"
        return f" [{low}, {high}]"

    def text(self, short: bool = False) -> str:
        """``23 steps [14, 41]``, ``beyond 95 (the longest tested); lower bound 62``,
        ``below 5 (the shortest tested); upper bound 5``, ``success does not fall with
        length over 5 to 95 steps`` (``short``: without what the bound is)."""
        return self.head(short) + self.bounds()

    def to_json(self) -> dict[str, Any]:
        """The JSON form: lengths rounded to 2 decimals, ``null`` where out of range."""

        def r(x: float | None) -> float | None:
            return None if x is None else round(x, 2)

        return {
            "level": self.level,
            "steps": r(self.steps),
            "ci": [r(self.low), r(self.high)],
            "beyond": self.beyond,
            "trend": self.trend,
            "shortest": self.shortest,
            "longest": self.longest,
            "scenarios": self.scenarios,
            "text": self.text(),
        }


MEASURES = {"faithful": "faithful", "first_answer": "first-answer"}
"""The measures a horizon is fitted for, and how a line names them."""
BINS = 8
"""With more distinct lengths than this, :meth:`HorizonFit.observed` bins them in equal
steps of log2."""


@dataclass(frozen=True, slots=True, eq=False)
class HorizonFit:
    """One group's curve fitted once, and everything read from it: the horizon at any
    level (``fit(0.8)``), the curve with its band (:meth:`band`), the observed rate per
    bin of lengths (:meth:`observed`); the paired difference reads its estimates and
    rows (:mod:`agentproc.analysis.compare.horizon_diff`)."""

    rows: tuple[Row, ...]
    """The scenarios' rows ``(steps, successes, trials)`` it was fitted on."""
    fit: Penalised | None
    """The penalised likelihood at its maximum (Firth's estimates, their covariance, the
    overdispersion); ``None`` with one length tested: no fit."""

    @property
    def shortest(self) -> int:
        return min((s for s, _, _ in self.rows), default=0)

    @property
    def longest(self) -> int:
        return max((s for s, _, _ in self.rows), default=0)

    @property
    def trend(self) -> Trend | None:
        """Whether success falls with length (``None``: no fit)."""
        if self.fit is None:
            return None
        if self.fit.b <= FLAT:
            return "does not fall"
        return "falls" if self.fit.rejected(self.fit.flat_at[1]) else "not shown to fall"

    def __call__(self, level: float) -> Horizon:
        """The horizon at ``level``."""
        fit, n = self.fit, len(self.rows)
        shell = Horizon(level, None, None, None, self.shortest, self.longest, None, n, self.trend)
        if fit is None:
            return shell
        if fit.b <= FLAT and fit.rejected(fit.flat_at[1]):  # success rises: no curve that
            return shell  # does not is allowed
        return _located(fit, Ends(fit, math.log(-math.log(level))), shell)

    def band(self, samples: int) -> list[tuple[float, float, float, float]]:
        """The fitted curve and its pointwise 95% band at ``samples + 1`` log2 lengths over
        the tested ones: ``(x, success, lower, upper)``, every success the profile of the
        penalised likelihood allows there (:func:`~agentproc.analysis.stats.horizon_profile.band`),
        so that it crosses a level where the horizon's interval ends; none without a fit."""
        if self.fit is None:
            return []
        lo, hi = self.fit.shortest, self.fit.longest
        xs = [lo + (hi - lo) * i / samples for i in range(samples + 1)]
        # a higher eta is a lower success: the band's upper success is its lowest eta
        return [
            (x, _success(e), _success(top), _success(bottom))
            for x, (e, bottom, top) in zip(xs, band(self.fit, xs), strict=True)
        ]

    def observed(self) -> list[tuple[float, Rate]]:
        """The observed rate per bin of lengths: each length its own bin when there are at
        most :data:`BINS`, else equal steps of log2; each bin at the mean log2 of its
        scenarios' lengths, its interval with the design effect of their trials.

        >>> [(x, r.k, r.n) for x, r in horizon_fit([(4, 1, 2), (4, 2, 2), (8, 0, 2)]).observed()]
        [(2.0, 3, 4), (3.0, 0, 2)]
        """
        xs = sorted({math.log2(s) for s, _, _ in self.rows})
        lo, width = xs[0], (xs[-1] - xs[0]) / BINS

        def key(x: float) -> float:
            return x if len(xs) <= BINS else min(BINS - 1, int((x - lo) / width))

        groups: dict[float, list[Row]] = {}
        for row in self.rows:
            groups.setdefault(key(math.log2(row[0])), []).append(row)
        out = []
        for _, group in sorted(groups.items()):
            clusters = [(k, n) for _, k, n in group]
            k, n = sum(c for c, _ in clusters), sum(m for _, m in clusters)
            rate = (
                Rate(k, n, design_effect(clusters), len(clusters)) if n > len(group) else Rate(k, n)
            )
            out.append((sum(math.log2(s) for s, _, _ in group) / len(group), rate))
        return out


def _success(eta: float) -> float:
    return math.exp(-math.exp(min(max(eta, -700.0), 30.0)))


@dataclass(frozen=True, slots=True)
class Horizons:
    """One group's horizons: each of :data:`MEASURES` at each of :data:`LEVELS`."""

    of: dict[str, tuple[Horizon, ...]]
    """Measure -> its horizon at each level, in :data:`LEVELS` order."""
    fits: dict[str, HorizonFit] = field(default_factory=dict, compare=False)
    """Measure -> the fit the horizons were read from (the HTML report's figure reads its
    curve, band and observed rates)."""

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
    ``faithful 50% horizon by look-back: 1: 23 steps [14, 41]; 2: below 5; upper ...``."""
    if not per:
        return []
    measures = next(iter(per.values())).of
    return [
        f"{MEASURES[m]} 50% horizon by look-back: "
        + "; ".join(f"{lb}: {h.of[m][0].text(short=True)}" for lb, h in per.items())
        for m in measures
    ]


def horizons(rows: Mapping[str, Sequence[Row]]) -> Horizons | None:
    """Every measure's horizons from its scenarios' rows, each fitted once; ``None`` with
    one length or none (a suite of one length has no horizon to give)."""
    if len({s for r in rows.values() for s, _, _ in r}) < 2:
        return None
    fits = {m: horizon_fit(r) for m, r in rows.items()}
    return Horizons({m: tuple(f(q) for q in LEVELS) for m, f in fits.items()}, fits)


def horizon(rows: Sequence[Row], level: float = 0.5) -> Horizon:
    """The procedure horizon at ``level`` over scenarios ``(steps, successes, trials)``.

    >>> rows = [(s, round(10 * 0.97**s), 10) for s in (5, 10, 20, 40, 80) for _ in range(6)]
    >>> h = horizon(rows)
    >>> 18 < h.steps < 28 and h.low < h.steps < h.high
    True
    >>> horizon([(5, 0, 3), (10, 0, 3)]).text()
    'success does not fall with length over 5 to 10 steps'
    """
    return horizon_fit(rows)(level)


def horizon_fit(rows: Sequence[Row]) -> HorizonFit:
    """Fit once, then query: ``horizon_fit(rows)(0.8)``, ``.band(32)``, ``.observed()``."""
    return HorizonFit(tuple(rows), penalised(rows) if len({s for s, _, _ in rows}) > 1 else None)


def _located(fit: Penalised, ends: Ends, shell: Horizon) -> Horizon:
    """``shell`` (no horizon) with its horizon, where the profile gives one."""
    lo_x, hi_x = fit.shortest, fit.longest

    def length(x: float | None) -> float | None:  # a bound at an end is that length
        return None if x is None else {lo_x: shell.shortest, hi_x: shell.longest}.get(x, 2**x)

    low, high = (length(x) for x in ends.both(lo_x, hi_x))
    # the fitted crossing (b > 0), or where a flat or rising fit puts it: past the longest
    # length when it stays above the level, before the shortest otherwise
    if fit.b > FLAT:
        point = (ends.target - fit.a) / fit.b
    else:
        point = math.inf if fit.flat_at[0] < ends.target else -math.inf
    beyond = True if point > hi_x else (False if point < lo_x else None)
    if shell.trend == "falls":
        steps = 2**point if beyond is None else None
        return dataclasses.replace(shell, steps=steps, low=low, high=high, beyond=beyond)
    # not shown to fall: at most a one-sided bound, where the fit, the interval (open on
    # that side) and every rising curve agree: success above the level at the shortest
    # length (beyond), or below it at the longest (below)
    if beyond is True and high is None and low is not None and ends.no_rise_across(lo_x, True):
        return dataclasses.replace(shell, low=low, beyond=True)
    if beyond is False and low is None and high is not None and ends.no_rise_across(hi_x, False):
        return dataclasses.replace(shell, high=high, beyond=False)
    return shell
