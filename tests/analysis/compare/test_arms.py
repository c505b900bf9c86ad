"""Paired comparison of arms on synthetic records with known differences."""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

import pytest

from agentproc.analysis.compare.arms import compare_records
from agentproc.analysis.measures.trials import outcome_of, trial_stats
from agentproc.analysis.stats.binomial import wilson
from agentproc.analysis.stats.student_t import t_quantile
from agentproc.errors import ConfigError


def rec(
    sid: str,
    *,
    agent: str = "sim:x",
    variant: str = "default",
    trial: int = 0,
    correct: bool = True,
    labels: tuple[tuple[str, int | None], ...] = (),
    steps: int = 5,
    lookback: int = 1,
    calls: list[str] | None = None,
) -> dict[str, Any]:
    """A scored record: correct and label-free is faithful."""
    verdict = ("unfaithful_correct" if labels else "faithful") if correct else "wrong"
    return {
        "scenario_id": sid,
        "agent": agent,
        "mode": "tools",
        "variant": variant,
        "trial": trial,
        "cell": f"n{steps}-L{lookback}",
        "params": {"steps": steps, "lookback": lookback},
        "metrics": {"first_answer_correct": correct},
        "verdict": verdict,
        "labels": [{"kind": k, "step": s, "call_index": 0} for k, s in labels],
        "calls": [{"name": c, "arguments": "{}"} for c in (calls or [])],
        "stop_reason": "answer",
    }


def two_arms(n: int, skip_in_prose: int) -> list[dict[str, Any]]:
    """Baseline all faithful; ``prose`` skips a step in the first ``skip_in_prose``."""
    out = [rec(f"s{i}") for i in range(n)]
    out += [
        rec(f"s{i}", variant="prose", labels=(("skipped_step", 2),) if i < skip_in_prose else ())
        for i in range(n)
    ]
    return out


def test_a_variant_that_skips_more_is_worse_with_skipped_step_risen():
    result = compare_records(two_arms(40, 12))
    (c,) = result.comparisons
    assert (c.arm, c.baseline, c.pairs, c.scenarios) == ("prose", "default", 40, 40)
    f = c.overall["faithful"]
    assert (f.baseline, f.variant, f.diff) == (1.0, 0.7, pytest.approx(-0.3))
    assert (f.lost, f.gained) == (12, 0)
    assert f.p == pytest.approx(2 * 0.5**12)
    assert f.ci[1] < 0
    assert c.overall["first_answer"].diff == 0.0 and c.overall["first_answer"].p == 1.0
    assert c.overall["unfaithful_correct"].diff == pytest.approx(0.3)
    skipped = next(d for d in c.labels if d.measure == "skipped_step")
    assert skipped.significant and skipped.diff > 0
    # the other kinds never occur, so cannot reject and leave the family (Tarone)
    assert skipped.p_holm == skipped.p
    assert [d.measure for d in c.labels if d.family] == ["skipped_step"]
    assert not any(d.significant for d in c.labels if d.measure != "skipped_step")
    assert c.verdict == "worse"
    assert c.line().startswith("prose: worse than default: faithful accuracy 100.0% -> 70.0%")
    assert "skipped_step rose" in c.line()


def test_too_few_discordant_pairs_is_no_detectable_difference_with_its_mde():
    (c,) = compare_records(two_arms(40, 3)).comparisons
    assert c.verdict == "no detectable difference"
    # three discordant pairs of 40: the floor (z_a + z_p)^2 / n, not the spread, decides
    assert c.mde == pytest.approx(2.8016**2 / 40, rel=1e-3)
    assert "no detectable difference from default at 40 scenarios" in c.line()


def test_pairs_are_matched_by_scenario_and_unpaired_episodes_are_left_out():
    records = [*two_arms(10, 0), rec("extra", variant="prose", correct=False)]
    (c,) = compare_records(records).comparisons
    assert (c.pairs, c.unpaired) == (10, 1)
    assert c.overall["first_answer"].diff == 0.0
    assert compare_records(records).arms["prose"].overall.rates["first_answer"].n == 11


def test_per_cell_differences_are_paired_within_the_cell():
    records = [rec(f"a{i}", steps=5) for i in range(10)] + [
        rec(f"b{i}", steps=25) for i in range(10)
    ]
    records += [rec(f"a{i}", steps=5, variant="v") for i in range(10)]
    records += [rec(f"b{i}", steps=25, variant="v", correct=i >= 8) for i in range(10)]
    (c,) = compare_records(records).comparisons
    assert {k[0]: d["first_answer"].diff for k, d in c.cells.items()} == {
        5: 0.0,
        25: pytest.approx(-0.8),
    }


def test_errored_episodes_are_counted_apart_and_never_paired():
    records = two_arms(5, 0)
    bad = rec("s0", variant="prose")
    bad["stop_reason"], bad["error"] = "error", {"kind": "endpoint", "message": "down"}
    records[5] = bad
    result = compare_records(records)
    assert result.arms["prose"].errored == {"endpoint": 1}
    assert result.comparisons[0].pairs == 4


def test_arms_are_named_by_agent_when_only_agents_differ_and_baseline_can_be_chosen():
    records = [rec("s0", agent="sim:oracle"), rec("s0", agent="sim:decay", correct=False)]
    result = compare_records(records, baseline="sim:decay")
    assert list(result.arms) == ["sim:oracle", "sim:decay"]
    assert result.comparisons[0].arm == "sim:oracle"
    with pytest.raises(ConfigError, match="no arm named 'nope'"):
        compare_records(records, baseline="nope")


def test_one_arm_is_not_a_comparison():
    with pytest.raises(ConfigError, match="at least two"):
        compare_records([rec("s0")])


def test_the_json_is_strict_and_deterministic():
    records = two_arms(30, 9)
    a = json.dumps(compare_records(records, seed=1).to_json(), allow_nan=False)
    b = json.dumps(compare_records(records, seed=1).to_json(), allow_nan=False)
    assert a == b
    data = json.loads(a)
    assert data["comparisons"][0]["verdict"] == "worse"
    assert data["arms"][1]["overall"]["skipped_step"]["value"] == 0.3


def test_deterministic_trials_count_once_in_the_test():
    records = []
    for t in range(5):
        records += [rec(f"s{i}", trial=t) for i in range(5)]
        records += [rec(f"s{i}", trial=t, variant="v", correct=False) for i in range(5)]
    result = compare_records(records)
    assert result.arms["v"].trials.deterministic is True
    f = result.comparisons[0].overall["faithful"]
    # five scenarios, each lost once: not 25 pairs' worth of evidence
    assert (f.lost, f.p) == (5, 2 * 0.5**5)


# -- trials -------------------------------------------------------------------


def test_pass_hat_k_and_determinism_of_an_arm():
    rng = random.Random(0)
    records = []
    for i in range(4):
        for t in range(3):
            ok = i < 2 or t == 0  # two always right, two right on the first trial only
            records.append(rec(f"s{i}", trial=t, correct=ok, calls=[f"step_{rng.random()}"]))
    stats = trial_stats(outcome_of(r) for r in records)
    assert stats.trials == 3 and stats.tasks == 4
    assert stats.pass_answer[1] == pytest.approx((1 + 1 + 1 / 3 + 1 / 3) / 4)
    assert stats.pass_answer[2] == pytest.approx(0.5)
    assert stats.pass_answer[3] == pytest.approx(0.5)
    assert stats.deterministic is False


def test_identical_trials_are_flagged_deterministic_and_single_trials_unknown():
    same = [rec("s0", trial=t, calls=["step_1"]) for t in range(3)]
    assert trial_stats(outcome_of(r) for r in same).deterministic is True
    assert trial_stats([outcome_of(rec("s0"))]).deterministic is None


def test_label_stability_tells_the_same_step_every_time_from_random_steps():
    steady = [rec("a", trial=t, labels=(("skipped_step", 3),)) for t in range(4)]
    wandering = [
        rec("b", trial=t, labels=(("skipped_step", t + 1),) if t < 2 else ()) for t in range(4)
    ]
    stats = trial_stats(outcome_of(r) for r in steady + wandering)
    (s,) = stats.stability
    assert s.kind == "skipped_step" and s.scenarios == 2
    assert s.recurrence == pytest.approx((1 + 0.5) / 2)
    assert s.same_step == pytest.approx((1 + 0.5) / 2)


# -- the scenario is the unit: defects of pooling trials --------------------------


def sampled(sid: str, variant: str, trial: int, correct: bool) -> dict[str, Any]:
    """A record whose calls differ by trial, so the arm is not deterministic."""
    return rec(sid, variant=variant, trial=trial, correct=correct, calls=[f"c{trial}"])


def test_trials_of_a_scenario_are_not_counted_as_independent_pairs():
    # deterministic baseline; the arm gains every trial on 6 scenarios and loses one trial
    # in ten on the other 24: pooled, 60 gained / 24 lost is p = 1e-4; per scenario it is
    # six big gains against 24 small losses, which the data cannot tell from chance
    records = []
    for i in range(30):
        base_ok = i >= 6
        for t in range(10):
            records.append(rec(f"s{i}", trial=t, correct=base_ok, calls=["same"]))
            arm_ok = True if i < 6 else t != 0
            records.append(sampled(f"s{i}", "v", t, arm_ok))
    (c,) = compare_records(records).comparisons
    f = c.overall["faithful"]
    assert (f.gained, f.lost) == (60, 24)
    assert f.method == "sign-flip permutation" and f.scenarios == 30
    assert c.verdict == "no detectable difference" and f.p > 0.05
    assert f.ci is not None and f.ci[0] < 0 < f.ci[1]
    assert "sign-flip permutation p =" in c.line()
    assert "30 scenarios x 10 trials" in c.line()


def test_verdict_and_interval_agree_at_rare_discordance_and_the_line_names_the_method():
    # 5 gained, 0 lost of 60: McNemar p = 0.0625; the old bootstrap said [+1.7, +16.7]
    records = [rec(f"s{i}", correct=i >= 5) for i in range(60)]
    records += [rec(f"s{i}", variant="v") for i in range(60)]
    (c,) = compare_records(records).comparisons
    f = c.overall["faithful"]
    assert c.verdict == "no detectable difference" and f.p == 0.0625
    assert f.ci is not None and f.ci[0] < 0 < f.ci[1]
    assert c.verdict_ci == f.ci
    assert "exact McNemar p = 0.0625" in c.line()


def test_several_arms_are_holm_corrected_and_the_line_interval_agrees():
    # v1 loses 6 of 40 (p = 0.031) and two arms change nothing: Holm over three arms
    records = [rec(f"s{i}") for i in range(40)]
    records += [rec(f"s{i}", variant="v1", correct=i >= 6) for i in range(40)]
    records += [rec(f"s{i}", variant=v) for v in ("v2", "v3") for i in range(40)]
    result = compare_records(records)
    c = next(c for c in result.comparisons if c.arm == "v1")
    assert c.overall["faithful"].p == pytest.approx(0.03125)
    assert c.p_holm == pytest.approx(0.09375)
    assert c.verdict == "no detectable difference"
    assert c.verdict_ci is not None and c.verdict_ci[1] >= 0  # at the level Holm tested it
    assert c.level == pytest.approx(1 - 0.05 / 3)
    assert "Holm across arms 0.0938" in c.line()
    assert c.to_json()["p_holm"] == pytest.approx(0.09375)


def test_per_cell_marks_are_corrected_across_cells():
    # five cells, each 3 lost / 3 gained except one with 6 lost: raw p = 0.031 there
    records = []
    for cell in range(5):
        steps = 5 + cell
        for i in range(10):
            sid = f"c{cell}-{i}"
            records.append(rec(sid, steps=steps))
            lose = i < 6 if cell == 0 else i < 3
            records.append(rec(sid, steps=steps, variant="v", correct=not lose))
            if cell and 3 <= i < 6:
                records[-2] = rec(sid, steps=steps, correct=False)
                records[-1] = rec(sid, steps=steps, variant="v")
    (c,) = compare_records(records).comparisons
    first = c.cells[(5, 1, "n5-L1")]["faithful"]
    assert first.p == pytest.approx(0.03125)
    assert not first.significant
    assert not any(d.significant for ds in c.cells.values() for d in ds.values() if d.p_holm)


def test_a_label_rise_is_flagged_when_the_other_kinds_cannot_reject():
    # skipped_step 0 -> 8 of 60, p = 0.0078: Holm over all ten kinds made it 0.078
    (c,) = compare_records(two_arms(60, 8)).comparisons
    skipped = next(d for d in c.labels if d.measure == "skipped_step")
    assert skipped.p == pytest.approx(0.0078125)
    assert skipped.significant
    assert c.verdict == "worse" and "skipped_step rose" in c.line()
    never = next(d for d in c.labels if d.measure == "repeated_step")
    assert never.to_json()["tested"] is False


def test_mde_with_trials_is_for_scenarios_and_trials():
    records = [
        sampled(f"s{i}", v, t, True) for v in ("default", "v") for i in range(60) for t in range(3)
    ]
    (c,) = compare_records(records).comparisons
    assert c.mde == pytest.approx(2.8016**2 / 180, rel=1e-3)  # not 2.80^2 / 60 = 13.1 points


def test_no_interval_from_fewer_than_five_scenarios():
    # 2 scenarios x 10 trials, the arm always right, the baseline always wrong
    records = [sampled(f"s{i}", "default", t, False) for i in range(2) for t in range(10)]
    records += [sampled(f"s{i}", "v", t, True) for i in range(2) for t in range(10)]
    (c,) = compare_records(records).comparisons
    f = c.overall["faithful"]
    assert f.ci is None and f.too_few
    assert c.verdict == "no detectable difference"
    assert "too few scenarios" in c.line()
    assert c.to_json()["overall"]["faithful"]["ci"] is None


def test_unpaired_counts_episodes_left_out_not_trials_reduced_to_one():
    records = []
    for t in range(5):
        records += [rec(f"s{i}", trial=t) for i in range(8)]
        records += [rec(f"s{i}", trial=t, variant="v", correct=False) for i in range(8)]
    (c,) = compare_records(records).comparisons
    assert c.pairs == 8 and c.unpaired == 0


def test_a_comparison_with_no_paired_episode_divides_by_nothing():
    records = [rec("a"), rec("b", variant="v")]
    (c,) = compare_records(records).comparisons
    assert (c.pairs, c.scenarios, c.unpaired, c.mde) == (0, 0, 2, 1.0)
    assert c.verdict == "no detectable difference"


def test_pass_hat_k_is_over_scenarios_with_every_trial_and_never_rises_with_k():
    # scenario a: 3 of 3 right; scenario b: 0 of 2 (a trial errored)
    records = [rec("a", trial=t) for t in range(3)]
    records += [rec("b", trial=t, correct=False) for t in range(2)]
    stats = trial_stats(outcome_of(r) for r in records)
    assert stats.pass_scenarios == 1 and stats.tasks == 2
    values = [stats.pass_answer[k] for k in (1, 2, 3)]
    assert values == [1.0, 1.0, 1.0]  # the old estimate was {1: .5, 2: .5, 3: 1.0}
    assert stats.to_json()["pass_scenarios"] == 1


def test_pass_hat_k_never_rises_with_k_on_random_trials():
    rng = random.Random(2)
    for _ in range(50):
        records = [
            rec(f"s{i}", trial=t, correct=rng.random() < 0.6)
            for i in range(6)
            for t in range(rng.randint(1, 4))
        ]
        p = trial_stats(outcome_of(r) for r in records).pass_answer
        values = [v for _, v in sorted(p.items())]
        assert all(b <= a + 1e-12 for a, b in itertools.pairwise(values))


def test_label_stability_same_step_is_over_scenarios_where_the_label_recurs():
    once = [rec("a", trial=t, labels=(("skipped_step", 3),) if t == 0 else ()) for t in range(4)]
    twice = [
        rec("b", trial=t, labels=(("skipped_step", t + 1),) if t < 2 else ()) for t in range(4)
    ]
    (s,) = trial_stats(outcome_of(r) for r in once + twice).stability
    assert (s.scenarios, s.recurring) == (2, 1)
    assert s.same_step == pytest.approx(0.5)  # not (1.0 + 0.5) / 2
    (only,) = trial_stats(outcome_of(r) for r in once).stability
    assert only.same_step is None and only.to_json()["same_step"] is None


def test_arm_intervals_with_trials_carry_the_design_effect():
    # ten scenarios x ten identical-outcome trials: ten scenarios' worth, not a hundred
    records = [
        sampled(f"s{i}", v, t, i < 5)
        for v in ("default", "v")
        for i in range(10)
        for t in range(10)
    ]
    rate = compare_records(records).arms["v"].overall.rates["faithful"]
    assert rate.deff == pytest.approx(10.0) and rate.clusters == 10
    assert rate.ci == pytest.approx(wilson(5, 10, t_quantile(9)))


def test_label_flags_across_several_arms_are_one_family():
    # v1: skipped_step 0 -> 8 of 40 (p = 0.0078); v2 and v3: 0 -> 6 (p = 0.031 each).
    # Alone, v2's rise would be flagged; with three arms only v1's survives.
    records = [rec(f"s{i}") for i in range(40)]
    for v, k in (("v1", 8), ("v2", 6), ("v3", 6)):
        records += [
            rec(f"s{i}", variant=v, labels=(("skipped_step", 2),) if i < k else ())
            for i in range(40)
        ]
    result = compare_records(records)
    flagged = {
        c.arm: next(d for d in c.labels if d.measure == "skipped_step").significant
        for c in result.comparisons
    }
    assert flagged == {"v1": True, "v2": False, "v3": False}
