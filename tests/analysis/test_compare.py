"""Paired comparison of arms on synthetic records with known differences."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from agentproc.analysis.compare import compare_records
from agentproc.analysis.trials import outcome_of, trial_stats
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
