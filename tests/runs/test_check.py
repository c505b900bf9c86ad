"""A suite's file given where a run file goes is said to be a suite, not a run file with a
field missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentproc.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("command", ["check", "report", "replay", "relabel"])
@pytest.mark.parametrize("kind", ["procedures", "workflow"])
def test_a_suites_file_is_said_to_be_no_run_file(capsys, tmp_path: Path, command, kind):
    suite = tmp_path / "s"
    if kind == "procedures":
        argv = ["--steps", "3", "--count", "1"]
        given = suite / "procedures.jsonl"
    else:
        argv = ["--workflow", str(ROOT / "scenarios/workflows/payroll.toml"), "--count", "1"]
        given = suite / "scenarios.jsonl"
    assert main(["generate", *argv, "--out", str(suite)]) == 0
    capsys.readouterr()
    assert main([command, str(given)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"agentproc: error: {given}: not a run file: it looks like a suite")
    assert "agentproc run SUITE --out RUN.jsonl" in line


def test_a_suite_folder_is_said_to_be_one(capsys, tmp_path: Path):
    assert main(["generate", "--steps", "3", "--count", "1", "--out", str(tmp_path / "s")]) == 0
    capsys.readouterr()
    assert main(["report", str(tmp_path / "s")]) == 2
    assert "is a suite folder, not a run file" in capsys.readouterr().err
