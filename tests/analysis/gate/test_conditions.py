"""The CI gate: thresholds, forbidden labels, errors and the paired regression rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentproc.analysis.gate.conditions import check_files
from agentproc.cli import main
from agentproc.errors import ConfigError, InputError


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("check")
    suite = root / "s"
    argv = ["generate", "--steps", "5,25", "--lookback", "1,7", "--count", "10"]
    assert main([*argv, "--out", str(suite)]) == 0
    out = {"root": root}
    for agent in ("sim:oracle", "sim:skipped_step", "sim:hallucinated_call"):
        out[agent] = root / f"{agent.split(':')[1]}.jsonl"
        assert main(["run", str(suite), "--agent", agent, "--out", str(out[agent])]) == 0
    return out


def mixed(runs: dict[str, Path], bad: int, name: str, agent: str = "sim:skipped_step") -> Path:
    """The oracle's run with its first ``bad`` scenarios taken from ``agent``'s run."""
    good = [json.loads(x) for x in runs["sim:oracle"].read_text().splitlines()]
    worse = {r["scenario_id"]: r for r in map(json.loads, runs[agent].read_text().splitlines())}
    lines = []
    for i, rec in enumerate(good):
        if i < bad:
            rec = {**worse[rec["scenario_id"]], "agent": rec["agent"]}
        lines.append(json.dumps(rec))
    path = runs["root"] / name
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_run_like_its_baseline_passes_every_condition(runs):
    result = check_files(
        runs["sim:oracle"], runs["sim:oracle"], min_faithful=1.0, labels=["skipped_step"]
    )
    assert result.passed
    assert [c.name for c in result.conditions] == [
        "errored",
        "min_faithful",
        "label:skipped_step",
        "regression",
    ]


def test_a_significant_drop_beyond_max_drop_fails_naming_the_new_divergences(runs):
    run = mixed(runs, 8, "eight.jsonl")
    result = check_files(run, runs["sim:oracle"], max_drop=5)
    (failed,) = result.failed
    assert failed.name == "regression"
    assert failed.message.startswith(
        "faithful accuracy 100.0% -> 80.0% against the baseline (-20.0 points, one-sided "
        "p=0.00391 for a drop, exact McNemar over 40 scenarios): more than --max-drop 5 points "
        "and significant: new skipped_step at step "
    )
    assert len(failed.scenarios) == 8


def test_a_drop_within_max_drop_passes_even_when_significant(runs):
    result = check_files(mixed(runs, 8, "eight.jsonl"), runs["sim:oracle"], max_drop=25)
    assert result.passed
    assert result.conditions[-1].message.endswith(
        ": within --max-drop; this design could detect drops of 18 points or more"
    )


def test_a_drop_that_is_not_significant_passes_however_large_against_max_drop(runs):
    result = check_files(mixed(runs, 2, "two.jsonl"), runs["sim:oracle"], max_drop=1)
    assert result.passed
    assert "(-5.0 points, one-sided p=0.25 for a drop," in result.conditions[-1].message
    assert result.conditions[-1].message.endswith(
        ": not significant at 5%; this design could detect drops of 15 points or more"
    )


def test_errored_episodes_fail_the_check_with_a_clear_line(runs):
    lines = runs["sim:oracle"].read_text().splitlines()
    rec = json.loads(lines[0])
    rec["stop_reason"], rec["error"] = "error", {"kind": "endpoint", "message": "down"}
    path = runs["root"] / "errored.jsonl"
    path.write_text("\n".join([json.dumps(rec), *lines[1:]]) + "\n")
    result = check_files(path, min_faithful=0.9)
    (failed,) = result.failed
    assert failed.name == "errored"
    assert failed.message == (
        f"1 episode errored (endpoint 1) in 1 scenario ({rec['scenario_id']}): errors are "
        "not passes; --resume runs them again"
    )
    assert result.episodes == 39 and result.faithful == 1.0


def test_min_faithful_fails_naming_the_first_divergences_of_unfaithful_episodes(runs):
    result = check_files(mixed(runs, 8, "eight.jsonl"), min_faithful=0.9)
    (failed,) = result.failed
    assert failed.name == "min_faithful"
    assert failed.message.startswith(
        "faithful accuracy 80.0% (32 of 40 episodes) is below --min-faithful 90.0%: "
        "skipped_step at step "
    )


def test_each_forbidden_label_is_one_condition(runs):
    run = mixed(runs, 3, "halluc.jsonl", agent="sim:hallucinated_call")
    result = check_files(run, labels=["hallucinated_call", "skipped_step"])
    assert [(c.name, c.passed) for c in result.conditions] == [
        ("errored", True),
        ("label:hallucinated_call", False),
        ("label:skipped_step", True),
    ]
    assert result.conditions[1].message.startswith(
        "hallucinated_call (forbidden by --labels) in 3 episodes: "
        "hallucinated_call in 3 scenarios ("
    )


def test_an_unknown_label_kind_is_refused_listing_the_valid_ones(runs):
    with pytest.raises(ConfigError, match="unknown label 'nope' \\(expected one of: "):
        check_files(runs["sim:oracle"], labels=["nope"])


def test_a_run_of_several_agents_is_refused(runs):
    path = runs["root"] / "both.jsonl"
    path.write_text(runs["sim:oracle"].read_text() + runs["sim:skipped_step"].read_text())
    with pytest.raises(InputError, match="several agents or variants"):
        check_files(path)


def test_a_run_and_a_baseline_with_no_common_episode_are_refused(runs):
    first = runs["sim:oracle"].read_text().splitlines()
    (runs["root"] / "a.jsonl").write_text(first[0] + "\n")
    (runs["root"] / "b.jsonl").write_text(first[1] + "\n")
    with pytest.raises(ConfigError, match="share no scored episode"):
        check_files(runs["root"] / "a.jsonl", runs["root"] / "b.jsonl")


def test_an_empty_run_is_refused(runs):
    (runs["root"] / "empty.jsonl").write_text("")
    with pytest.raises(InputError, match="holds no episode: nothing to check"):
        check_files(runs["root"] / "empty.jsonl")


def test_the_drop_is_tested_one_sided(runs):
    # 5 of 40 scenarios lost, none gained: two-sided p = 0.0625 would pass, one-sided fails
    result = check_files(mixed(runs, 5, "five.jsonl"), runs["sim:oracle"], max_drop=5)
    (failed,) = result.failed
    assert "one-sided p=0.0312 for a drop" in failed.message
    assert result.drop is not None and result.drop.p == 0.03125
    assert result.to_json()["regression"]["p_drop"] == 0.03125


def test_a_design_too_small_to_fail_says_so(runs):
    few = runs["root"] / "few.jsonl"
    few.write_text("".join(runs["sim:skipped_step"].read_text().splitlines(True)[:4]))
    result = check_files(few, runs["sim:oracle"], max_drop=5)
    assert result.passed
    assert result.conditions[-1].message.endswith(
        ": this check cannot fail with 4 paired scenarios (a drop is significant from 5 on)"
    )
    assert result.to_json()["regression"]["can_fail"] is False


def test_a_baseline_that_cannot_drop_by_max_drop_says_the_check_cannot_fail(runs):
    result = check_files(runs["sim:skipped_step"], runs["sim:skipped_step"], max_drop=5)
    assert result.passed
    assert result.conditions[-1].message.endswith(
        "this check cannot fail: the baseline's 0.0% cannot drop by more than --max-drop 5 points"
    )


def test_a_run_whose_every_episode_errored_fails_errored_and_regression(runs):
    out = []
    for line in runs["sim:oracle"].read_text().splitlines():
        rec = json.loads(line)
        rec["stop_reason"], rec["error"] = "error", {"kind": "endpoint", "message": "down"}
        out.append(json.dumps(rec))
    path = runs["root"] / "all-errored.jsonl"
    path.write_text("\n".join(out) + "\n")
    result = check_files(path, runs["sim:oracle"])
    assert [c.name for c in result.failed] == ["errored", "regression"]
    assert result.failed[1].message.startswith("no scored episode to compare with the baseline")


def test_unequal_trials_give_rates_and_drop_as_means_over_scenarios(runs, tmp_path):
    # one scenario with ten trials, the other 39 with one; the run skips a step in nine of
    # the ten: per scenario 100% -> 97.75% (-2.25 points), not 100% -> 81.6% per episode
    good = runs["sim:oracle"].read_text().splitlines()
    first = json.loads(good[0])
    bad = {
        r["scenario_id"]: r
        for r in map(json.loads, runs["sim:skipped_step"].read_text().splitlines())
    }
    worse = {**bad[first["scenario_id"]], "agent": first["agent"]}
    base, run = tmp_path / "base.jsonl", tmp_path / "run.jsonl"
    base.write_text(
        "\n".join([*good, *(json.dumps({**first, "trial": t}) for t in range(1, 10))]) + "\n"
    )
    run.write_text(
        "\n".join([*good, *(json.dumps({**worse, "trial": t}) for t in range(1, 10))]) + "\n"
    )
    result = check_files(run, base, max_drop=1)
    assert result.comparison is not None
    f = result.comparison.overall["faithful"]
    assert (f.baseline, f.variant, f.diff) == pytest.approx((1.0, 0.9775, -0.0225))
    line = result.conditions[-1].message
    assert line.startswith(
        "faithful accuracy 100.0% -> 97.8% (means over scenarios: unequal trials) against the "
        "baseline (-2.2 points,"
    )
