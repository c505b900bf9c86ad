"""pass^k of every k at once, linear in the trials: exactly :func:`pass_hat_k` up to
``EXACT_TRIALS`` trials a scenario, within rounding past it, and never a binomial
coefficient of thousands of trials (which made ``check --baseline`` quadratic)."""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import pytest

from agentproc.analysis.measures.trials import Outcome, trial_stats
from agentproc.analysis.stats import exact
from agentproc.analysis.stats.exact import EXACT_TRIALS, pass_hat_k, pass_hat_ks


def outcomes(trials: int, rate: float, scenarios: int = 1) -> list[Outcome]:
    rng = random.Random(trials)
    out = []
    for s in range(scenarios):
        for t in range(trials):
            ok = rng.random() < rate
            out.append(
                Outcome(f"s{s}", t, 5, 1, "c", ok, ok, False, frozenset(), frozenset(), str(ok))
            )
    return out


def test_every_k_equals_pass_hat_k_exactly_up_to_the_exact_limit():
    rng = random.Random(0)
    for n in (1, 2, 3, 7, 40, EXACT_TRIALS):
        tasks = [(rng.randint(0, n), n) for _ in range(9)] + [(rng.randint(0, 3), 3)]
        ks = range(1, n + 2)
        assert pass_hat_ks(tasks, ks) == {k: pass_hat_k(tasks, k) for k in ks}


def test_past_the_exact_limit_every_k_is_within_rounding_of_the_exact_ratio():
    n = 3_000
    tasks = [(2_990, n), (2_500, n), (n, n), (0, n)]
    got = pass_hat_ks(tasks, range(1, n + 1))
    for k in (1, 2, 10, 100, 1_000, 2_990, 2_991, n):
        exact = sum(Fraction(math.comb(c, k), math.comb(m, k)) for c, m in tasks) / len(tasks)
        assert got[k] == pytest.approx(float(exact), rel=1e-9, abs=1e-300)


def test_a_k_no_task_reaches_is_none_and_k_below_1_is_refused():
    assert pass_hat_ks([(1, 2)], [3]) == {3: None}
    with pytest.raises(ValueError, match="at least 1"):
        pass_hat_ks([(1, 2)], [0])


def test_trial_stats_of_20000_trials_take_no_binomial_coefficient_of_them(monkeypatch):
    real = math.comb

    def small_only(n: int, k: int) -> int:
        assert n <= EXACT_TRIALS, f"comb({n}, {k}): quadratic in trials"
        return real(n, k)

    monkeypatch.setattr(exact.math, "comb", small_only)
    result = trial_stats(outcomes(20_000, 0.999))
    assert len(result.pass_answer) == 20_000
    assert result.pass_answer[1] == pytest.approx(
        sum(o.answer for o in outcomes(20_000, 0.999)) / 20_000
    )
    values = list(result.pass_faithful.values())
    assert all(a >= b for a, b in itertools.pairwise(values))  # never rises with k
