"""The paired difference of two arms' procedure horizons, with a test and the interval
that belongs to it (``agentproc compare``).

Both arms ran the same scenarios, so their horizons are not independent: an arm that
meets a hard scenario meets it in both. Each arm's curve is fitted once as ``report`` fits
it (:func:`~agentproc.analysis.measures.horizon.horizon_fit`, on the paired scenarios), and the two
fits' joint covariance is the **cluster-robust (sandwich) covariance with the scenario
as the cluster**: the score of each scenario in both arms at once, so that what the
arms share is counted once. The difference is taken where the horizon is a ratio's
natural scale, ``log2`` of the length (``x = (target - a) / b``): ``x_arm - x_base`` is
the log2 of the ratio of the horizons, its standard error by the delta method, tested
with Student's t on ``scenarios - 2`` degrees of freedom. The interval is the same
statistic inverted at the same level, so it excludes a ratio of 1 exactly when the test
rejects: the verdict and the interval cannot disagree. Shown as the difference in steps
(``+8.8 steps``) and the ratio of the horizons with its interval (``x1.27 [0.95, 1.70]``).

**Never extrapolated**: when either arm's horizon is out of the tested lengths
(``beyond N``, ``below N``), success is not shown to fall with length (no horizon), or
there is no fit (one length), the horizons cannot be compared, and the line says why for
each arm. A cluster bootstrap over scenarios was the alternative: a few
thousand refits a comparison, and its percentile interval would be another method than
the test. The sandwich is scaled by ``c / (c - 4)`` for ``c`` scenarios (the small-sample
factor of four estimates, as Stata's CR1). Calibrated in
``benchmarks/bench_horizon.py --paired``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from agentproc.analysis.measures.horizon import Horizon, HorizonFit, Row, horizon_fit
from agentproc.analysis.render.formats import p_text
from agentproc.analysis.stats.exact import ALPHA
from agentproc.analysis.stats.horizon_fit import cloglog_terms, row_arrays
from agentproc.analysis.stats.paired import MIN_SCENARIOS
from agentproc.analysis.stats.student_t import t_pvalue, t_quantile

LEVEL = 0.5
"""The success level whose horizons are compared (faithful accuracy falls to 50%)."""

HorizonVerdict = Literal["longer", "shorter", "no detectable difference", "not compared"]
"""The arm's horizon against the baseline's (not compared: either is out of range or has no
horizon)."""


@dataclass(frozen=True, slots=True)
class HorizonDifference:
    """The arm's 50% faithful horizon against the baseline's, on their paired scenarios."""

    baseline: Horizon
    arm: Horizon
    log2_ratio: float | None
    """``log2(arm / baseline)``; ``None`` when the horizons cannot be compared (:attr:`why`)."""
    se: float | None
    """Its standard error (delta method over the sandwich covariance)."""
    p: float | None
    """Two-sided p-value of "the horizons are equal"."""
    df: int
    """Student's t degrees of freedom: paired scenarios less 2."""
    level: float = 1 - ALPHA
    """The level of :attr:`ci` (above 95% when Holm corrects across arms: the level Holm
    tested this arm at)."""
    p_holm: float | None = None
    """:attr:`p` Holm-adjusted across arms (``None``: one comparison)."""

    @property
    def why(self) -> str | None:
        """Why the horizons cannot be compared (each one out of the tested lengths, or
        with no horizon), or ``None`` when they can."""
        if self.baseline.scenarios < MIN_SCENARIOS:
            n = self.baseline.scenarios
            return f"too few paired scenarios ({n}, at least {MIN_SCENARIOS} needed)"
        out = [
            f"{name} {_state(h)}"
            for name, h in (("the baseline's", self.baseline), ("the arm's", self.arm))
            if h.steps is None
        ]
        if out:
            return " and ".join(out)
        return None if self.log2_ratio is not None else "the fits are degenerate"

    @property
    def diff(self) -> float | None:
        """The arm's horizon minus the baseline's, in steps."""
        if self.arm.steps is None or self.baseline.steps is None:
            return None
        return self.arm.steps - self.baseline.steps

    @property
    def ratio(self) -> float | None:
        """The arm's horizon over the baseline's."""
        return None if self.log2_ratio is None else 2**self.log2_ratio

    @property
    def ci(self) -> tuple[float, float] | None:
        """The ratio's interval at :attr:`level`: it excludes 1 exactly when the (Holm-
        adjusted, if any) p-value is below ``1 - level``."""
        if self.log2_ratio is None or self.se is None:
            return None
        half = t_quantile(self.df, self.level) * self.se
        return 2 ** (self.log2_ratio - half), 2 ** (self.log2_ratio + half)

    @property
    def significant(self) -> bool:
        """Whether the (adjusted, if any) p-value is below :data:`ALPHA`."""
        p = self.p if self.p_holm is None else self.p_holm
        return p is not None and p < ALPHA

    @property
    def verdict(self) -> HorizonVerdict:
        """``longer`` or ``shorter`` (significant), ``no detectable difference``, or ``not
        compared`` (a horizon out of the tested lengths, or no fit)."""
        if self.log2_ratio is None or self.why is not None:
            return "not compared"
        if not self.significant:
            return "no detectable difference"
        return "longer" if self.log2_ratio > 0 else "shorter"

    def text(self) -> str:
        """``+8.8 steps (x1.27 [0.95, 1.70], p = 0.12)``, or why the horizons cannot be
        compared (``cannot be compared: the arm's horizon is beyond 80``)."""
        ci, diff, ratio = self.ci, self.diff, self.ratio
        if ci is None or diff is None or ratio is None:
            return f"cannot be compared: {self.why}"
        holm = "" if self.p_holm is None else f", Holm {p_text(self.p_holm)}"
        at = "" if self.p_holm is None else f" at {100 * self.level:.3g}%"
        return (
            f"{diff:+.3g} steps (x{ratio:.3g} [{ci[0]:.3g}, {ci[1]:.3g}]{at}, "
            f"p = {p_text(self.p or 1.0)}{holm})"
        )

    def to_json(self) -> dict[str, Any]:
        """The JSON form: both horizons, the difference in steps, the ratio and its interval
        (``null`` with ``why`` when the horizons cannot be compared)."""
        ci = self.ci

        def r(x: float | None) -> float | None:
            return None if x is None else round(x, 4)

        return {
            "level": LEVEL,
            "baseline": self.baseline.to_json(),
            "arm": self.arm.to_json(),
            "diff_steps": r(self.diff) if self.why is None else None,
            "ratio": r(self.ratio),
            "ratio_ci": None if ci is None else [r(ci[0]), r(ci[1])],
            "ci_level": round(self.level, 4),
            "p": self.p,
            "p_holm": self.p_holm,
            "method": "sandwich delta method on log2 horizons (scenario clusters)",
            "significant": self.significant if self.why is None else False,
            "verdict": self.verdict,
            "why": self.why,
            "text": self.text(),
        }


def _state(h: Horizon) -> str:
    """Why a horizon has no length to compare: ``horizon is beyond 80``, ``success does
    not fall with length over 5 to 80 steps``, ``has no horizon (one length tested)``."""
    if not h.fitted:
        return f"has no horizon (one length tested: {h.longest})"
    if not h.claimed:
        return h.head(short=True)
    return f"horizon is {h.head(short=True)}"


def _pieces(rows: Sequence[Row], beta: tuple[float, float]) -> tuple[Any, Any]:
    """Each scenario's score (a row each) and the Fisher information at ``beta``."""
    import numpy as np

    x, k, n = row_arrays(rows)
    design = np.column_stack([np.ones_like(x), x])
    r, w = cloglog_terms(design, k, n, np.array(beta))
    return design * r[:, None], design.T @ (design * w[:, None])


def horizon_difference(base: Sequence[Row], arm: Sequence[Row]) -> HorizonDifference:
    """The paired difference of the 50% horizons of two arms' rows over the same
    scenarios, in the same order (each ``(steps, successes, trials)``).

    >>> rows = [(s, round(20 * 0.98**s), 20) for s in (5, 10, 20, 40, 80) for _ in range(8)]
    >>> slower = [(s, round(20 * 0.99**s), 20) for s, _, _ in rows]
    >>> d = horizon_difference(rows, slower)
    >>> 1.6 < d.ratio < 2.4 and d.ci[0] > 1 and d.p < 0.05
    True
    """
    return difference(horizon_fit(base), horizon_fit(arm))


def difference(base: HorizonFit, arm: HorizonFit) -> HorizonDifference:
    """:func:`horizon_difference` of two arms' fits on their paired scenarios (each fitted
    once, its estimates read here)."""
    hb, ha = base(LEVEL), arm(LEVEL)
    df = max(1, len(base.rows) - 2)
    empty = HorizonDifference(hb, ha, None, None, None, df)
    if hb.steps is None or ha.steps is None or len(base.rows) < MIN_SCENARIOS:
        return empty
    import numpy as np

    target = math.log(-math.log(LEVEL))
    grads, blocks, infos = [], [], []
    for fitted, sign in ((base, 1.0), (arm, -1.0)):
        if fitted.fit is None or fitted.fit.b <= 0:
            return empty
        a, b = fitted.fit.a, fitted.fit.b
        x = (target - a) / b
        scores, info = _pieces(fitted.rows, (a, b))
        # x = (target - a) / b: dx/da = -1/b, dx/db = -x/b, in x_arm - x_base
        grads += [sign / b, sign * x / b]
        blocks.append(scores - scores.mean(axis=0))
        infos.append(info)
    grad = np.array(grads)
    meat = np.hstack(blocks)
    c = len(base.rows)
    bread = np.zeros((4, 4))
    bread[:2, :2], bread[2:, 2:] = np.linalg.inv(infos[0]), np.linalg.inv(infos[1])
    # small samples: the scenarios over those left after the 4 estimates (as Stata's CR1)
    cov = bread @ (meat.T @ meat) @ bread * (c / max(1, c - 4))
    var = float(grad @ cov @ grad)
    log2_ratio = math.log2(ha.steps) - math.log2(hb.steps)
    if not var > 0:  # both arms did the same in every scenario: no difference, none unsure
        return HorizonDifference(hb, ha, 0.0, 0.0, 1.0, df) if log2_ratio == 0 else empty
    se = math.sqrt(var)
    return HorizonDifference(hb, ha, log2_ratio, se, t_pvalue(log2_ratio / se, df), df)
