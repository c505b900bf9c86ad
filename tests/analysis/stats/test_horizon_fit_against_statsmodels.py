"""The horizon's Firth-penalised complementary log-log fit agrees with statsmodels' binomial
GLM (its log-likelihood and expected information) maximised by scipy, over random suites.

statsmodels fits the model without Firth's penalty; the penalised log-likelihood
``l(beta) + log det I(beta) / 2`` is built here from its pieces and maximised by Nelder-Mead.
The libraries come with the ``test`` extra only: without them the file is skipped.
"""

from __future__ import annotations

import math
import random
import warnings

import pytest

np = pytest.importorskip("numpy")
sm = pytest.importorskip("statsmodels.api")
optimize = pytest.importorskip("scipy.optimize")

from agentproc.analysis.stats.horizon_fit import Row, penalised  # noqa: E402

CASES = 40
"""Random suites."""


def suite(rng: random.Random) -> list[Row]:
    """Two to five lengths of 2 to 80 steps, 1 to 5 scenarios each of 1 to 10 trials, from a
    random falling (or flat, or rising) curve; some suites separate completely."""
    a, b = rng.uniform(-5, 1), rng.choice([0.0, rng.uniform(-0.5, 2.5)])
    rows = []
    for steps in sorted(rng.sample(range(2, 81), rng.randint(2, 5))):
        p = math.exp(-math.exp(a + b * math.log2(steps)))
        for _ in range(rng.randint(1, 5)):
            n = rng.randint(1, 10)
            rows.append((steps, sum(rng.random() < p for _ in range(n)), n))
    return rows


def glm(rows: list[Row]) -> object:
    """statsmodels' binomial GLM of failures with the complementary log-log link."""
    x = np.array([[1.0, math.log2(s)] for s, _, _ in rows])
    counts = np.array([[n - k, k] for _, k, n in rows], dtype=float)
    family = sm.families.Binomial(link=sm.families.links.CLogLog())
    return sm.GLM(counts, x, family=family)


def minus_penalised(model: object, beta: object) -> float:
    """``-(l + log det I / 2)`` at ``beta``, from statsmodels' log-likelihood and expected
    information."""
    info = -model.hessian(np.asarray(beta), observed=False)
    return -(model.loglike(np.asarray(beta)) + 0.5 * np.linalg.slogdet(info)[1])


def firth(model: object, start: tuple[float, float]) -> object:
    """The maximum of ``l + log det I / 2`` by Nelder-Mead from near ``start``."""
    begin = [start[0] + 0.2, start[1] - 0.1]
    options = {"xatol": 1e-10, "fatol": 1e-13, "maxiter": 20_000, "maxfev": 20_000}
    return optimize.minimize(
        lambda beta: minus_penalised(model, beta), begin, method="Nelder-Mead", options=options
    )


def test_firth_estimates_are_the_penalised_maximum_of_statsmodels_likelihood():
    # tolerance: the penalised log-likelihood at our estimates within 1e-9 of scipy's
    # maximum, and the fitted curve's a + b * log2(steps) within 1e-5 at every length tested.
    # The estimates themselves can differ by 3e-5 where the lengths lie close together
    # (48 to 53 steps): the maximum is a long flat ridge there, along which the curve moves
    # by less than 1e-8
    rng = random.Random(31)
    for _ in range(CASES):
        rows = suite(rng)
        fit = penalised(rows)
        a, b = fit.a, fit.b
        model = glm(rows)
        with warnings.catch_warnings():  # statsmodels warns of fitted values near 0 or 1
            warnings.simplefilter("ignore")
            found = firth(model, (a, b))
            assert minus_penalised(model, (a, b)) <= found.fun + 1e-9, rows
        lengths = np.log2(sorted({s for s, _, _ in rows}))
        ours, theirs = a + b * lengths, found.x[0] + found.x[1] * lengths
        assert ours == pytest.approx(theirs, abs=1e-5), rows


def test_covariance_is_the_inverse_information_times_the_pearson_overdispersion():
    # tolerance: 1e-8 relative. The model covariance is the inverse of statsmodels' expected
    # information at our estimates, plus the ridge of 1e-9 ours adds before inverting (it
    # moves the inverse by 1e-6 where the outcomes separate); the overdispersion is the
    # Pearson chi-square there over scenarios - 2, at least 1 (1 with two scenarios or fewer)
    rng = random.Random(32)
    for _ in range(CASES):
        rows = suite(rng)
        fit = penalised(rows)
        (a, b), cov = (fit.a, fit.b), fit.cov
        model = glm(rows)
        beta = np.array([a, b])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            at = model.fit(start_params=beta, maxiter=0)  # no step: statistics at beta
        assert at.params == pytest.approx(beta, abs=1e-12)
        dof = len(rows) - 2
        phi = max(1.0, at.pearson_chi2 / dof) if dof > 0 else 1.0
        theirs = np.linalg.inv(-model.hessian(beta, observed=False) + 1e-9 * np.eye(2)) * phi
        assert np.array(cov) == pytest.approx(theirs, rel=1e-8), rows
