"""Holm, the level Holm tests each hypothesis at, and Tarone's rule."""

from __future__ import annotations

import random

import pytest

from agentproc.analysis.stats.multiplicity import holm, holm_levels, tarone_holm


def test_holm_multiplies_by_rank_and_keeps_order():
    adjusted = holm({"a": 0.01, "b": 0.04, "c": 0.03, "d": 0.5})
    assert adjusted == pytest.approx({"a": 0.04, "c": 0.09, "b": 0.09, "d": 0.5})


def test_holm_caps_at_one_and_leaves_a_single_p_alone():
    assert holm({"x": 0.7, "y": 0.6}) == {"x": 1.0, "y": 1.0}
    assert holm({"x": 0.02}) == {"x": 0.02}
    assert holm({}) == {}


def test_holm_with_a_larger_family_counts_the_hypotheses_that_cannot_reject():
    assert holm({"x": 0.02}, size=3) == {"x": pytest.approx(0.06)}


def test_a_p_below_its_holm_level_is_exactly_a_holm_rejection():
    rng = random.Random(3)
    for _ in range(500):
        ps = {i: rng.random() ** 3 for i in range(rng.randint(1, 6))}
        adjusted, levels = holm(ps), holm_levels(ps)
        for k, p in ps.items():
            assert (p < levels[k]) == (adjusted[k] < 0.05), ps


def test_tarone_leaves_out_the_kinds_that_cannot_reject():
    # a skipped_step rise 0 -> 8 of 60 among ten kinds, nine of which never occur
    ps = {"skipped_step": 2 * 0.5**8, **{f"k{i}": 1.0 for i in range(9)}}
    minps = dict(ps)
    adjusted = tarone_holm(ps, minps)
    assert adjusted["skipped_step"] == pytest.approx(0.0078125)
    assert all(adjusted[f"k{i}"] is None for i in range(9))
    # plain Holm over all ten would not flag it
    assert holm(ps)["skipped_step"] > 0.05


def test_tarone_family_grows_until_it_fits_its_own_level():
    # five hypotheses that can each reach 0.031 at best: none can pass 0.05 / 5
    ps = {i: 0.03125 for i in range(5)}
    assert set(tarone_holm(ps, ps).values()) == {None}


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.05])
def test_holms_levels_and_tarones_family_refuse_an_alpha_outside_zero_to_one(alpha: float):
    with pytest.raises(ValueError, match="alpha must lie strictly between 0 and 1"):
        holm_levels({"a": 0.01}, alpha)
    with pytest.raises(ValueError, match="alpha must lie strictly between 0 and 1"):
        tarone_holm({"a": 0.01}, {"a": 0.01}, alpha)
