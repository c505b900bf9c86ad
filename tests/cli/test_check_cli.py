"""``agentproc check``: exit statuses, one line per condition, JSON, JUnit XML, bad input."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from agentproc.cli import main
from tests.helpers import cli


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("check_cli")
    suite = root / "s"
    assert (
        main(["generate", "--steps", "5", "--lookback", "1", "--count", "10", "--out", str(suite)])
        == 0
    )
    out = {"root": root}
    for agent in ("sim:oracle", "sim:skipped_step"):
        out[agent] = root / f"{agent.split(':')[1]}.jsonl"
        assert main(["run", str(suite), "--agent", agent, "--out", str(out[agent])]) == 0
    return out


def test_a_passing_run_exits_0_with_one_line_per_condition(capsys, runs):
    code, out, err = cli(capsys, "check", runs["sim:oracle"], "--min-faithful", "0.9")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "ok   errored: no episode errored",
        "ok   min_faithful: faithful accuracy 100.0% (10 of 10 episodes), at least 90.0%",
        "check passed: 2 conditions",
    ]


def test_a_regression_exits_1_naming_the_new_divergences(capsys, runs):
    argv = ["check", runs["sim:skipped_step"], "--baseline", runs["sim:oracle"]]
    code, out, _ = cli(capsys, *argv)
    assert code == 1
    lines = out.splitlines()
    assert all(len(line) <= 80 for line in lines)  # wrapped within the width
    assert (
        " ".join(out.split())
        .split(" FAIL ", 1)[1]
        .startswith(
            "regression: faithful accuracy 100.0% -> 0.0% against the baseline (-100.0 points, "
            "one-sided p=0.000977 for a drop, exact McNemar over 10 scenarios): more than "
            "--max-drop 5 points and significant: new skipped_step at step "
        )
    )
    assert lines[-1] == "check failed: 1 of 2 conditions"


def test_json_is_strict_and_says_every_condition(capsys, runs):
    argv = ["check", runs["sim:skipped_step"], "--labels", "skipped_step", "--json"]
    code, out, _ = cli(capsys, *argv)
    assert code == 1
    data = json.loads(out)
    assert data["passed"] is False and data["faithful"] == 0.0 and data["regression"] is None
    assert [(c["name"], c["passed"]) for c in data["conditions"]] == [
        ("errored", True),
        ("label:skipped_step", False),
    ]
    assert len(data["conditions"][1]["scenarios"]) == 10


def test_junit_has_one_testcase_per_condition_and_a_failure_for_each_failed_one(
    capsys, runs, tmp_path
):
    report = tmp_path / "check.xml"
    report.write_text("an earlier build's report")  # replaced: CI writes it every build
    argv = ["check", runs["sim:skipped_step"], "--baseline", runs["sim:oracle"]]
    code, _, _ = cli(capsys, *argv, "--min-faithful", "0.5", "--junit", report)
    assert code == 1
    suite = ET.parse(report).getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures")) == ("3", "2")
    cases = {c.get("name"): c.find("failure") for c in suite.iter("testcase")}
    assert list(cases) == ["errored", "min_faithful", "regression"]
    assert cases["errored"] is None
    failure = cases["regression"]
    assert failure is not None and "new skipped_step at step" in failure.get("message", "")


def test_junit_over_the_run_itself_is_refused_before_reading(capsys, runs):
    before = runs["sim:oracle"].read_bytes()
    code, out, err = cli(capsys, "check", runs["sim:oracle"], "--junit", runs["sim:oracle"])
    assert (code, out) == (2, "")
    assert "--junit: is the input" in err
    assert runs["sim:oracle"].read_bytes() == before


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("--min-faithful", "90", "expected a fraction from 0 to 1 (not 90)"),
        ("--max-drop", "-1", "expected points from 0 to 100 (not -1)"),
        ("--labels", "skiped_step", "unknown label 'skiped_step' (expected one of: "),
        ("--min-horizon", "0", "expected a number of steps above 0 (not 0)"),
        ("--min-horizon", "nan", "expected a number of steps above 0 (not nan)"),
        ("--min-horizon", "ten", "expected a number of steps, not 'ten'"),
    ],
)
def test_a_bad_option_exits_2_in_one_line(capsys, runs, option, value, said):
    code, out, err = cli(capsys, "check", runs["sim:oracle"], option, value)
    assert (code, out) == (2, "")
    assert said in err and len(err.strip().splitlines()) == 1


def test_a_missing_run_file_exits_2_naming_it(capsys, tmp_path):
    code, _, err = cli(capsys, "check", tmp_path / "nope.jsonl")
    assert code == 2 and "nope.jsonl" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["{root}/nope.jsonl"], "nope.jsonl"),
        (["{oracle}", "--labels", "skiped_step"], "unknown label 'skiped_step'"),
        (["{oracle}", "--baseline", "{root}/empty.jsonl"], "empty.jsonl: holds no episode"),
    ],
    ids=["missing-run", "unknown-label", "empty-baseline"],
)
def test_bad_input_replaces_an_earlier_junit_report_with_one_error_case(
    capsys, runs, tmp_path, argv, said
):
    report = tmp_path / "check.xml"
    code, _, _ = cli(capsys, "check", runs["sim:oracle"], "--junit", report)
    assert code == 0 and 'failures="0"' in report.read_text()  # the earlier build passed
    (tmp_path / "empty.jsonl").write_text("")
    given = [a.format(root=tmp_path, oracle=runs["sim:oracle"]) for a in argv]
    code, out, err = cli(capsys, "check", *given, "--junit", report)
    assert (code, out) == (2, "")
    (line,) = err.splitlines()
    suite = ET.parse(report).getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("1", "0", "1")
    (case,) = suite.iter("testcase")
    error = case.find("error")
    assert case.get("name") == "input" and error is not None
    assert said in error.get("message", "") and error.get("message") in line


def test_help_states_the_regression_rule_and_exit_statuses(capsys):
    code, out, _ = cli(capsys, "check", "--help")
    assert code == 0
    text = " ".join(out.split())
    assert "fails only when faithful accuracy dropped by more than --max-drop points AND" in text
    assert "significant (one-sided p < 0.05) by compare's paired test" in text
    assert "a run whose every episode errored fails it" in text
    assert "exit status: 0 every condition holds, 1 a condition failed, 2 bad input" in text


@pytest.fixture(scope="module")
def lengths(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Runs over procedures of 5 to 80 steps: sim:decay (a horizon within them), sim:oracle
    (beyond them) and sim:skipped_step (below them)."""
    root = tmp_path_factory.mktemp("check_horizon")
    argv = ["generate", "--steps", "5,10,20,40,80", "--lookback", "1", "--count", "8"]
    assert main([*argv, "--out", str(root / "s")]) == 0
    out = {}
    for agent in ("sim:decay", "sim:oracle", "sim:skipped_step"):
        out[agent] = root / f"{agent.split(':')[1]}.jsonl"
        assert main(["run", str(root / "s"), "--agent", agent, "--out", str(out[agent])]) == 0
    return out


def horizon_of(capsys, run: Path) -> dict:
    assert main(["report", str(run), "--json"]) == 0
    (agent,) = json.loads(capsys.readouterr().out)["agents"].values()
    return agent["horizon"]["faithful"]["50"]


@pytest.mark.parametrize(
    ("agent", "steps", "code"),
    [
        ("sim:decay", "low", 0),
        ("sim:decay", "above low", 1),
        ("sim:oracle", "80", 0),
        ("sim:oracle", "81", 1),
        ("sim:skipped_step", "1", 1),
    ],
)
def test_min_horizon_gates_on_the_lower_bound_report_gives(capsys, lengths, agent, steps, code):
    h = horizon_of(capsys, lengths[agent])
    if steps == "low":
        steps = str(h["ci"][0])
    elif steps == "above low":
        steps = str(h["ci"][0] + 0.1)
    got, out, _ = cli(capsys, "check", lengths[agent], "--min-horizon", steps, "--json")
    assert got == code
    (cond,) = [c for c in json.loads(out)["conditions"] if c["name"] == "min_horizon"]
    assert cond["passed"] is (code == 0)
    assert cond["message"].startswith(f"faithful 50% horizon {h['text']}: ")


def test_a_failed_min_horizon_is_one_failed_line_and_a_junit_failure(capsys, lengths, tmp_path):
    xml = tmp_path / "check.xml"
    code, out, _ = cli(
        capsys, "check", lengths["sim:skipped_step"], "--min-horizon", "5", "--junit", xml
    )
    assert code == 1
    text = " ".join(out.split())
    assert "FAIL min_horizon: faithful 50% horizon below 5 (the shortest tested)" in text
    assert text.endswith("check failed: 1 of 2 conditions")
    cases = {c.get("name"): c.find("failure") for c in ET.parse(xml).iter("testcase")}
    assert list(cases) == ["errored", "min_horizon"] and cases["min_horizon"] is not None
