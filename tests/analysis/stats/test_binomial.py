"""agentproc.analysis.stats.binomial: the Wilson interval of each rate."""

from __future__ import annotations

import math
import random

import pytest

from agentproc.analysis.measures.cells import CellStats
from agentproc.analysis.stats.binomial import Z95, Rate, design_effect, wilson, z_quantile
from agentproc.analysis.stats.student_t import t_quantile
from agentproc.labelling import LabelKind


@pytest.mark.parametrize(
    ("successes", "n", "expected"),
    [
        (5, 10, (0.2366, 0.7634)),
        (0, 10, (0.0, 0.2775)),
        (10, 10, (0.7225, 1.0)),
        (1, 1, (0.2065, 1.0)),
        (81, 263, (0.2553, 0.3662)),
    ],
)
def test_wilson_interval_matches_known_values(
    successes: int, n: int, expected: tuple[float, float]
) -> None:
    lo, hi = wilson(successes, n)
    assert (round(lo, 4), round(hi, 4)) == expected


def test_wilson_interval_with_no_trials_is_zero_to_one() -> None:
    assert wilson(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize(("successes", "n"), [(-1, 10), (11, 10)])
def test_wilson_rejects_successes_outside_zero_to_n(successes: int, n: int) -> None:
    with pytest.raises(ValueError, match="successes must lie in"):
        wilson(successes, n)


def _stats_with_design_effects() -> CellStats:
    counts = dict.fromkeys(LabelKind, 0)
    return CellStats(
        n=40,
        first_answer_correct=30,
        final_answer_correct=31,
        faithful=20,
        unfaithful_correct=10,
        wrong=8,
        no_answer=2,
        exact_steps=18,
        label_counts=counts,
        episodes_with_label=counts,
        progress_rate=0.9,
        prefix_rate=0.8,
        scenarios=20,
        design_effects={"first_answer": 1.5, "faithful": 1.8, "unfaithful_correct": 1.2},
    )


@pytest.mark.parametrize(
    ("name", "count", "measure"),
    [
        ("accuracy", "first_answer_correct", "first_answer"),
        ("faithful_accuracy", "faithful", "faithful"),
        ("unfaithful_correct_rate", "unfaithful_correct", "unfaithful_correct"),
    ],
)
def test_a_headline_rate_by_name_is_its_property_with_the_design_effect(
    name: str, count: str, measure: str
) -> None:
    s = _stats_with_design_effects()
    k, deff = getattr(s, count), s.design_effects[measure]
    z = t_quantile(s.scenarios - 1)  # few scenarios: Student's t, not the normal
    assert s.rate(name) == (getattr(s, name), wilson(k / deff, s.n / deff, z))
    assert s.rate(name)[1] != wilson(k, s.n)  # deff applied


def test_a_study_rate_by_name_without_a_design_effect_is_plain_wilson() -> None:
    s = _stats_with_design_effects()
    assert s.rate("exact_step_rate") == (18 / 40, wilson(18, 40))


def test_an_unknown_rate_name_raises_key_error() -> None:
    with pytest.raises(KeyError):
        _stats_with_design_effects().rate("speed")


@pytest.mark.parametrize(
    ("df", "expected"), [(1, 12.7062), (2, 4.3027), (4, 2.7764), (9, 2.2622), (29, 2.0452)]
)
def test_t_quantile_matches_students_table(df: int, expected: float) -> None:
    # scipy.stats.t.ppf(0.975, df), to 4 decimals
    assert t_quantile(df) == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize(("scenarios", "trials"), [(5, 10), (5, 3), (10, 5)])
def test_a_rate_with_few_scenarios_of_many_trials_keeps_its_level(
    scenarios: int, trials: int
) -> None:
    # scenarios of differing difficulty around a true rate of one half; the design-effect
    # Wilson interval with the normal quantile covered 89.6% at 5 x 10
    import random

    from agentproc.analysis.stats.binomial import Rate, design_effect

    rng = random.Random(scenarios * 100 + trials)
    covered = 0
    for _ in range(1500):
        ps = [rng.uniform(0.2, 0.8) for _ in range(scenarios)]
        clusters = [(sum(rng.random() < p for _ in range(trials)), trials) for p in ps]
        k = sum(y for y, _ in clusters)
        low, high = Rate(k, scenarios * trials, design_effect(clusters), scenarios).ci
        covered += low <= 0.5 <= high
    assert covered / 1500 >= 0.94


@pytest.mark.parametrize("z", [0.0, -1.96, math.nan, math.inf])
def test_wilson_rejects_a_quantile_that_is_not_a_positive_number(z: float) -> None:
    with pytest.raises(ValueError, match="z must be a positive number"):
        wilson(5, 10, z)


def test_wilson_rejects_an_infinite_count() -> None:
    with pytest.raises(ValueError, match="n must be a finite number"):
        wilson(5, math.inf)


def test_a_rates_interval_at_95_percent_is_its_ci_and_other_levels_are_wilsons() -> None:
    r = Rate(7, 40, 2.0, 8)
    assert r.interval() == r.ci == r.interval(0.95)
    assert r.interval(0.8) == wilson(3.5, 20, t_quantile(7, 0.8))
    assert Rate(7, 40).interval(0.9) == wilson(7, 40, z_quantile(0.9))
    assert z_quantile(0.95) == Z95
    lo90, hi90 = Rate(7, 40).interval(0.9)
    lo99, hi99 = Rate(7, 40).interval(0.99)
    assert lo99 < lo90 and hi90 < hi99


@pytest.mark.parametrize("level", [0.0, 1.0, 95.0])
def test_a_rates_interval_refuses_a_level_outside_zero_to_one(level: float) -> None:
    with pytest.raises(ValueError, match="level must lie strictly between 0 and 1"):
        Rate(7, 40).interval(level)


def listed_design_effect(clusters: list[tuple[int, int]]) -> float:
    """The design effect as it was first computed, from the listed clusters in floating
    point (the reference the exact form must reproduce)."""
    s, total = len(clusters), sum(m for _, m in clusters)
    if total == 0:
        return 1.0
    p = sum(y for y, _ in clusters) / total
    if s < 2 or p in (0.0, 1.0):
        return total / s
    robust = math.fsum((y - p * m) ** 2 for y, m in clusters) / total**2 * s / (s - 1)
    return max(1.0, min(total / s, robust / (p * (1 - p) / total)))


@pytest.mark.parametrize("seed", range(30))
def test_the_design_effect_from_sums_is_the_listed_one(seed: int) -> None:
    rng = random.Random(seed)
    clusters = []
    for _ in range(rng.randint(1, 40)):
        m = rng.randint(1, 12)
        clusters.append((rng.randint(0, m), m))
    assert design_effect(clusters) == pytest.approx(listed_design_effect(clusters), rel=1e-12)
