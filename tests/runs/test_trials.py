"""Repeated trials: each scenario k times, each trial its own seed, resume by (scenario, trial)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentproc.cli import main
from agentproc.runs import episode_seed, trial_seed


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    out = tmp_path / "s"
    assert (
        main(["generate", "--steps", "6", "--lookback", "2", "--count", "3", "--out", str(out)])
        == 0
    )
    return out


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_trials_run_each_scenario_k_times_numbered_from_zero(suite: Path, tmp_path: Path):
    out = tmp_path / "r.jsonl"
    assert (
        main(["run", str(suite), "--agent", "sim:oracle", "--trials", "3", "--out", str(out)]) == 0
    )
    keys = [(r["scenario_id"], r["trial"]) for r in records(out)]
    ids = sorted({k[0] for k in keys})
    assert len(ids) == 3
    assert sorted(keys) == [(i, t) for i in ids for t in range(3)]


def test_trials_reseed_a_simulated_agent(suite: Path, tmp_path: Path):
    out = tmp_path / "r.jsonl"
    main(["run", str(suite), "--agent", "sim:wrong_argument", "--trials", "6", "--out", str(out)])
    by_scenario: dict[str, set[str]] = {}
    for r in records(out):
        where = json.dumps([(lab["call_index"], lab["kind"]) for lab in r["labels"]])
        by_scenario.setdefault(r["scenario_id"], set()).add(where)
    # one fault at a seeded random place: six trials do not all put it in the same place
    assert all(len(places) > 1 for places in by_scenario.values())


def test_trial_zero_repeats_a_run_without_trials(suite: Path, tmp_path: Path):
    one, three = tmp_path / "one.jsonl", tmp_path / "three.jsonl"
    main(["run", str(suite), "--agent", "sim:decay", "--out", str(one)])
    main(["run", str(suite), "--agent", "sim:decay", "--trials", "3", "--out", str(three)])
    first = [r for r in records(three) if r["trial"] == 0]
    assert [r["calls"] for r in first] == [r["calls"] for r in records(one)]


def test_resume_runs_only_the_missing_trials(suite: Path, tmp_path: Path):
    out = tmp_path / "r.jsonl"
    main(["run", str(suite), "--agent", "sim:oracle", "--trials", "2", "--out", str(out)])
    assert (
        main(
            [
                "run",
                str(suite),
                "--agent",
                "sim:oracle",
                "--trials",
                "3",
                "--out",
                str(out),
                "--resume",
            ]
        )
        == 0
    )
    recs = records(out)
    assert len(recs) == 9
    assert [r["trial"] for r in recs[6:]] == [2, 2, 2]


def test_trial_seeds_differ_by_trial_and_keep_trial_zero():
    assert trial_seed(7, 0) == 7
    assert len({trial_seed(7, t) for t in range(1, 50)}) == 49
    assert episode_seed(0, "x", "y", 0).random() == episode_seed(0, "x", "y").random()
    assert episode_seed(0, "x", "y", 1).random() != episode_seed(0, "x", "y").random()
