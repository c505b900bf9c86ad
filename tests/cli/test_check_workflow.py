"""``agentproc check`` on runs of a declared workflow's suite: thresholds, forbidden
labels and a regression against a baseline, named by the workflow's scenarios."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentproc.cli import main
from agentproc.resources import folder
from tests.helpers import cli


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("check_workflow")
    suite = root / "invoices"
    path = folder("workflows") / "invoice_approval.toml"
    assert main(["generate", "--workflow", str(path), "--count", "8", "--out", str(suite)]) == 0
    out = {}
    for agent, variant in (("sim:oracle", "default"), ("sim:skipped_step", "shuffled")):
        out[agent] = root / f"{agent.split(':')[1]}.jsonl"
        argv = ["run", str(suite), "--agent", agent, "--variant", variant, "--out", str(out[agent])]
        assert main(argv) == 0
    return out


def test_a_faithful_workflow_run_passes(capsys, runs):
    code, out, err = cli(capsys, "check", runs["sim:oracle"], "--min-faithful", "0.9")
    assert (code, err) == (0, "")
    assert out.splitlines()[1] == (
        "ok   min_faithful: faithful accuracy 100.0% (8 of 8 episodes), at least 90.0%"
    )


def test_a_workflow_run_that_skips_steps_regresses_against_its_baseline(capsys, runs):
    argv = ["check", runs["sim:skipped_step"], "--baseline", runs["sim:oracle"], "--json"]
    code, out, _ = cli(capsys, *argv)
    assert code == 1
    result = json.loads(out)
    regression = next(c for c in result["conditions"] if c["name"] == "regression")
    assert not regression["passed"]
    assert "faithful accuracy 100.0% -> 0.0% against the baseline" in regression["message"]
    assert regression["scenarios"] and all(
        s.startswith("invoice_approval-") for s in regression["scenarios"]
    )


def test_a_forbidden_label_fails_on_a_workflow_run(capsys, runs):
    code, out, _ = cli(capsys, "check", runs["sim:skipped_step"], "--labels", "skipped_step")
    assert code == 1
    assert "FAIL label:skipped_step: skipped_step (forbidden by --labels) in 8 episodes" in out
