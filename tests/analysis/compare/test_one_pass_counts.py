"""The comparison's counts taken in one pass over the episodes (every measure at once)
are those taken one measure at a time, to the last bit: the same rates, intervals,
tests and p-values."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from agentproc.analysis.compare.rate_diff import paired_test, rate_differences
from agentproc.analysis.compare.result import (
    ARM_MEASURES,
    arm_stats,
    clustered_rate,
    has_measure,
    measures_of,
)
from agentproc.analysis.gate.conditions import _read
from agentproc.analysis.measures.trials import Outcome, by_scenario, outcome_of
from agentproc.cli import main
from agentproc.runs import ReadReport, is_error, latest_records
from agentproc.runs.layout import line_of

KINDS = ["skipped_step", "wrong_argument", "premature_finish", "never_seen"]


def outcome(rng: random.Random, sid: str, trial: int, p: float) -> Outcome:
    labels = frozenset(k for k in KINDS[:3] if rng.random() < p)
    answer = rng.random() < 0.8
    return Outcome(
        sid, trial, 5, 1, f"c{int(sid[1:]) % 3}", answer, answer and not labels,
        answer and bool(labels), labels, frozenset((k, 1) for k in labels), "x",
    )  # fmt: skip


@pytest.mark.parametrize(("scenarios", "trials"), [(1, 1), (8, 1), (30, 3), (13, 20)])
def test_one_pass_differences_equal_one_measure_at_a_time(scenarios, trials):
    rng = random.Random(scenarios * 100 + trials)
    pairs = [
        (outcome(rng, f"s{s}", t, 0.2), outcome(rng, f"s{s}", t, 0.35))
        for s in range(scenarios)
        for t in range(trials)
    ]
    rng.shuffle(pairs)
    measures = [*ARM_MEASURES, *KINDS]
    got = rate_differences(pairs, measures)
    for d, m in zip(got, measures, strict=True):
        # each measure on its own: the paired test, and the rates as means over scenarios
        test = paired_test(pairs, m)
        per: dict[str, list[tuple[bool, bool]]] = {}
        for b, v in pairs:
            per.setdefault(b.scenario_id, []).append((has_measure(b, m), has_measure(v, m)))
        base = sum(sum(hb for hb, _ in f) / len(f) for f in per.values()) / len(per)
        var = sum(sum(hv for _, hv in f) / len(f) for f in per.values()) / len(per)
        assert (d.measure, d.n, d.p, d.ci, d.diff) == (m, len(pairs), test.p, test.ci, test.diff)
        assert (d.baseline, d.variant) == (pytest.approx(base), pytest.approx(var))
        assert d.gained == sum(has_measure(v, m) and not has_measure(b, m) for b, v in pairs)
        assert d.lost == sum(has_measure(b, m) and not has_measure(v, m) for b, v in pairs)


def test_one_pass_arm_rates_equal_each_clustered_rate():
    rng = random.Random(7)
    outcomes = [outcome(rng, f"s{s}", t, 0.3) for s in range(12) for t in range(4)]
    stats = arm_stats(outcomes, KINDS)
    groups = list(by_scenario(outcomes).values())
    assert stats.rates == {m: clustered_rate(groups, m) for m in [*ARM_MEASURES, *KINDS]}


def test_the_measures_of_an_episode_are_those_has_measure_is_true_of():
    rng = random.Random(1)
    for _ in range(50):
        o = outcome(rng, "s1", 0, 0.5)
        assert measures_of(o) == {m for m in [*ARM_MEASURES, *KINDS] if has_measure(o, m)}


def test_check_reads_a_run_in_one_pass_as_the_latest_records_give_it(tmp_path):
    scenario = Path(__file__).resolve().parents[3] / "scenarios" / "pinned"
    scenario = scenario / "n5-L3-r1_10-mixed-decimal-0000.json"
    runs = []
    for agent in ("sim:oracle", "sim:skipped_step"):
        out = tmp_path / f"{agent[4:]}.jsonl"
        argv = ["run", scenario, "--agent", agent, "--out", out, "--trials", "3"]
        assert main([str(a) for a in argv]) == 0
        runs += [dict(rec) for _, _, rec in latest_records([out])]
    errored = {**runs[0], "stop_reason": "error", "error": {"kind": "endpoint", "message": "x"}}
    lines = [{**r, "agent": "a", "name": "a"} for r in [runs[0], *runs[3:], errored, *runs[1:3]]]
    path = tmp_path / "mixed.jsonl"
    path.write_text("".join(line_of(r) for r in lines), encoding="utf-8")
    warnings: list[str] = []
    got = _read(path, warnings)
    report = ReadReport()
    latest = [rec for _, _, rec in latest_records([path], [report])]
    assert got.outcomes == [outcome_of(r) for r in latest if not is_error(r)]
    assert got.errored == {(str(r["scenario_id"]), 0): "endpoint" for r in latest if is_error(r)}
    assert len(got.errored) == 1 and len(got.outcomes) == 2  # the later records count
    assert warnings == [f"{path}: {w}" for w in report.warnings] and warnings
