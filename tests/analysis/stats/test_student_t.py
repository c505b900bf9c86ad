"""agentproc.analysis.stats.student_t: Student's t from one distribution function, its arguments
checked."""

from __future__ import annotations

import math
import random

import pytest

from agentproc.analysis.stats.student_t import NORMAL_DF, t_inside, t_pvalue, t_quantile


def bisected_pvalue(t: float, df: int) -> float:
    """The p-value as it was first computed: the quantile inverted by bisection on the level
    (the reference the one-step form must reproduce)."""
    t = abs(t)
    if t == 0:
        return 1.0
    lo, hi = 0.0, 1.0
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_quantile(df, mid) <= t else (lo, mid)
    return max(0.0, 1.0 - lo)


def random_cases(n: int, seed: int = 7) -> list[tuple[float, int]]:
    rng = random.Random(seed)
    dfs = [1, 2, 3, 4, 5, 9, 30, 101, 2000, NORMAL_DF + 1]
    return [(rng.choice([1, -1]) * rng.expovariate(0.4), rng.choice(dfs)) for _ in range(n)]


@pytest.mark.parametrize(("t", "df"), random_cases(40))
def test_the_p_value_from_the_distribution_is_the_bisected_one(t: float, df: int) -> None:
    assert t_pvalue(t, df) == pytest.approx(bisected_pvalue(t, df), abs=1e-12)


@pytest.mark.parametrize(("t", "df"), random_cases(200, seed=11))
def test_the_p_value_and_the_quantile_agree_with_scipy(t: float, df: int) -> None:
    stats = pytest.importorskip("scipy.stats")
    if df <= NORMAL_DF:
        assert t_pvalue(t, df) == pytest.approx(2 * stats.t.sf(abs(t), df), abs=1e-12)
        level = 1 - 2 * stats.t.sf(abs(t), df)
        if 1e-6 < level < 1 - 1e-6:  # nearer 1 the level, not the quantile, is unsure
            assert t_quantile(df, level) == pytest.approx(abs(t), rel=1e-9)
    else:
        assert t_pvalue(t, df) == pytest.approx(2 * stats.norm.sf(abs(t)), abs=1e-12)


def test_the_two_sided_probability_is_zero_at_zero_and_one_far_out() -> None:
    assert t_inside(0.0, 7) == 0.0
    assert t_inside(1e9, 7) == pytest.approx(1.0)
    assert t_pvalue(math.inf, 3) == 0.0


@pytest.mark.parametrize("df", [0, -3, 2.5, True])
def test_degrees_of_freedom_must_be_a_whole_number_of_at_least_one(df: int) -> None:
    with pytest.raises(ValueError, match="df must be a whole number of at least 1"):
        t_quantile(df)
    with pytest.raises(ValueError, match="df must be a whole number of at least 1"):
        t_pvalue(2.0, df)


@pytest.mark.parametrize("level", [0.0, 1.0, -0.5, 1.5, math.nan])
def test_the_level_must_lie_strictly_between_zero_and_one(level: float) -> None:
    with pytest.raises(ValueError, match="level must lie strictly between 0 and 1"):
        t_quantile(5, level)


def test_a_p_value_of_no_number_is_refused() -> None:
    with pytest.raises(ValueError, match="t must be a number"):
        t_pvalue(math.nan, 5)
