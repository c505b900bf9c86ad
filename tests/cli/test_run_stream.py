"""``run`` streams: the suite is read as the run goes, progress is logged off a terminal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import agentproc.runs.progress as progress
import agentproc.workflow.load as load
from agentproc.cli import main
from agentproc.procedures import MANIFEST


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    out = tmp_path / "s"
    argv = ["generate", "--steps", "2,3", "--lookback", "1", "--count", "4", "--out", str(out)]
    assert main(argv) == 0
    return out


def test_the_first_episode_is_written_before_the_suite_is_read_to_its_end(
    suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    run = tmp_path / "r.jsonl"
    seen: list[int] = []
    real = load.scenario_of

    def spy(p):  # type: ignore[no-untyped-def]
        seen.append(run.read_text().count("\n") if run.exists() else 0)
        return real(p)

    monkeypatch.setattr(load, "scenario_of", spy)
    assert main(["run", str(suite), "--agent", "sim:oracle", "--out", str(run)]) == 0
    assert len(seen) == 8
    assert seen[-1] >= 6  # the earlier episodes are on disk when the last one is compiled


def test_progress_is_logged_as_lines_when_stderr_is_not_a_terminal(
    suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    monkeypatch.setattr(progress, "LOG_EVERY", 0.0)
    assert main(["run", str(suite), "--agent", "sim:oracle", "--out", str(tmp_path / "r")]) == 0
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("sim:oracle: ")]
    assert len(lines) == 8
    assert lines[0].startswith("sim:oracle: 1/8 episodes, acc 1.000, errors 0, elapsed ")
    assert lines[-1].startswith("sim:oracle: 8/8 episodes")


def test_progress_total_follows_limit_and_is_unknown_for_a_shard(
    suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    monkeypatch.setattr(progress, "LOG_EVERY", 0.0)
    main(["run", str(suite), "--agent", "sim:oracle", "--limit", "3", "--out", str(tmp_path / "a")])
    assert "sim:oracle: 3/3 episodes" in capsys.readouterr().err
    main(
        ["run", str(suite), "--agent", "sim:oracle", "--shard", "1/2", "--out", str(tmp_path / "b")]
    )
    assert "/? episodes" in capsys.readouterr().err


def test_an_unfinished_suite_is_refused_before_an_existing_run_file_is_replaced(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    run = tmp_path / "r.jsonl"
    assert main(["run", str(suite), "--agent", "sim:oracle", "--out", str(run)]) == 0
    before = run.read_bytes()
    (suite / MANIFEST).unlink()
    code = main(["run", str(suite), "--agent", "sim:oracle", "--overwrite", "--out", str(run)])
    assert code == 2
    assert "suite.json is missing" in capsys.readouterr().err
    assert run.read_bytes() == before


def test_episodes_of_a_suite_record_its_sweeps(suite: Path, tmp_path: Path):
    run = tmp_path / "r.jsonl"
    main(["run", str(suite), "--agent", "sim:oracle", "--limit", "1", "--out", str(run)])
    assert json.loads(run.read_text())["params"]["sweeps"] == ["block 1"]
