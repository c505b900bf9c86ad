"""``run --resume`` goes on with the same agent over the same suite: a suite that changed
since the run, or another agent, is refused in one line before an episode is run, and the
run file is left byte-identical."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentproc.cli import main

ROOT = Path(__file__).resolve().parents[2]
REFUNDS = ROOT / "scenarios" / "workflows" / "refund_approval.toml"


def cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def generate_refunds(capsys, workflow: Path, suite: Path, *extra: str) -> None:
    code, _, err = cli(
        capsys, "generate", "--workflow", workflow, "--count", "3", "--out", suite, *extra
    )
    assert code == 0, err


@pytest.fixture
def edited(tmp_path: Path, capsys) -> tuple[Path, Path]:
    """A workflow's suite, a run of it, and the suite generated again (``--overwrite``)
    after the workflow's damage credit was edited: same ids, other scenarios."""
    workflow, suite, run = tmp_path / "refunds.toml", tmp_path / "suite", tmp_path / "r.jsonl"
    text = REFUNDS.read_text(encoding="utf-8")
    workflow.write_text(text, encoding="utf-8")
    generate_refunds(capsys, workflow, suite)
    assert cli(capsys, "run", suite, "--agent", "sim:oracle", "--out", run)[0] == 0
    changed = text.replace("a tenth of the order total", "a fifth of the order total")
    changed = changed.replace("min(order_total * 0.1, 25)", "min(order_total * 0.2, 25)")
    assert changed != text
    workflow.write_text(changed, encoding="utf-8")
    generate_refunds(capsys, workflow, suite, "--overwrite")
    return suite, run


def test_resume_refuses_a_suite_generated_again_from_an_edited_workflow(capsys, edited):
    suite, run = edited
    before = run.read_bytes()
    code, out, err = cli(capsys, "run", suite, "--agent", "sim:oracle", "--out", run, "--resume")
    assert code == 2 and out == ""
    (line,) = err.splitlines()
    assert line.startswith(f"agentproc: error: {run}: scenario_sha256: holds episodes of another")
    assert "scenario 'refunds-0000'" in line and "--overwrite" in line
    assert run.read_bytes() == before


def test_a_fresh_run_file_of_the_edited_suite_is_made_with_overwrite(capsys, edited):
    suite, run = edited
    code, out, _ = cli(capsys, "run", suite, "--agent", "sim:oracle", "--out", run, "--overwrite")
    assert code == 0 and "wrote 3 episodes" in out
    assert cli(capsys, "replay", run)[0] == 0  # the episodes are the new suite's


def test_a_file_written_before_fingerprints_is_refused_by_its_references(capsys, edited):
    suite, run = edited
    lines = [json.loads(line) for line in run.read_text().splitlines()]
    for rec in lines:  # as files written before ``scenario_sha256`` hold them
        rec.pop("scenario_sha256", None)
    run.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in lines))
    code, _, err = cli(capsys, "run", suite, "--agent", "sim:oracle", "--out", run, "--resume")
    assert code == 2 and "another version of scenario 'refunds-0000'" in err


def test_a_self_contained_run_is_refused_over_a_suite_drawn_again(capsys, tmp_path: Path):
    suite, run = tmp_path / "s", tmp_path / "r.jsonl"
    grid = ["generate", "--steps", "3", "--count", "2", "--out", suite]
    assert cli(capsys, *grid)[0] == 0
    argv = ["run", suite, "--agent", "sim:oracle", "--out", run]
    assert cli(capsys, *argv, "--self-contained")[0] == 0
    assert cli(capsys, *grid, "--seed", "7", "--overwrite")[0] == 0  # same ids, other draws
    code, _, err = cli(capsys, *argv, "--self-contained", "--resume")
    assert code == 2 and "scenario_sha256: holds episodes of another version" in err


def test_resume_over_an_unchanged_suite_goes_on(capsys, tmp_path: Path):
    workflow, suite, run = tmp_path / "refunds.toml", tmp_path / "suite", tmp_path / "r.jsonl"
    workflow.write_text(REFUNDS.read_text(encoding="utf-8"), encoding="utf-8")
    generate_refunds(capsys, workflow, suite)
    argv = ["run", suite, "--agent", "sim:oracle", "--out", run]
    assert cli(capsys, *argv, "--limit", "1")[0] == 0
    generate_refunds(capsys, workflow, suite, "--overwrite")  # the same suite again
    code, out, _ = cli(capsys, *argv, "--resume")
    assert code == 0 and "wrote 2 episodes" in out and "(1 already done)" in out


@pytest.mark.parametrize(
    ("again", "held"),
    [
        (["--agent", "sim:decay"], "(sim:oracle)"),
        (["--agent", "sim:oracle", "--name", "v2"], "(sim:oracle)"),
        (["--agent", "sim:oracle", "--seed", "3"], "(sim:oracle)"),
        (["--agent", "sim:oracle", "--guard", "enforce"], "(sim:oracle)"),
    ],
)
def test_resume_as_another_agent_is_refused_in_one_line(capsys, tmp_path, again, held):
    suite, run = tmp_path / "s", tmp_path / "r.jsonl"
    assert cli(capsys, "generate", "--steps", "3", "--count", "3", "--out", suite)[0] == 0
    assert cli(capsys, "run", suite, "--agent", "sim:oracle", "--out", run, "--limit", "2")[0] == 0
    before = run.read_bytes()
    code, _, err = cli(capsys, "run", suite, *again, "--out", run, "--resume")
    assert code == 2
    (line,) = err.splitlines()
    assert f"{run} holds 2 episodes of another agent {held}" in line and "--out" in line
    assert run.read_bytes() == before


def test_resume_over_workers_as_another_agent_is_refused_before_a_shard_is_cut(
    capsys, tmp_path: Path
):
    suite, run = tmp_path / "s", tmp_path / "r.jsonl"
    assert cli(capsys, "generate", "--steps", "3", "--count", "3", "--out", suite)[0] == 0
    assert cli(capsys, "run", suite, "--agent", "sim:oracle", "--out", run)[0] == 0
    argv = ["run", suite, "--agent", "sim:decay", "--out", run, "--resume", "--workers", "2"]
    code, _, err = cli(capsys, *argv)
    assert code == 2 and "holds 3 episodes of another agent (sim:oracle)" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.jsonl", "s"]
