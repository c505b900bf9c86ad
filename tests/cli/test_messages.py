"""What the commands say about what they did: counts with their nouns in the right
number, a progress total that ``--limit`` fixes, and a finished resume said plainly."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import cli

import agentproc.runs.progress as progress
from agentproc.testing import timeline


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from agentproc.cli import main

    out = tmp_path_factory.mktemp("messages") / "s"
    assert main(["generate", "--steps", "3,5", "--count", "3", "--out", str(out)]) == 0
    return out


def test_one_episode_is_one_episode(capsys, suite: Path, tmp_path: Path):
    run = tmp_path / "r.jsonl"
    code, out, _ = cli(capsys, "run", suite, "--agent", "sim:oracle", "--limit", "1", "--out", run)
    assert code == 0 and out.startswith(f"wrote 1 episode to {run}:")
    code, out, _ = cli(capsys, "replay", run)
    assert code == 0 and "1 episode replayed; 0 differ from the recording" in out
    code, out, _ = cli(capsys, "relabel", run)
    assert code == 0 and out.startswith("relabelled 1 episode:")


def test_a_finished_resume_says_nothing_was_left_to_run(capsys, suite: Path, tmp_path: Path):
    run = tmp_path / "r.jsonl"
    assert cli(capsys, "run", suite, "--agent", "sim:oracle", "--out", run)[0] == 0
    code, out, _ = cli(capsys, "run", suite, "--agent", "sim:oracle", "--out", run, "--resume")
    assert code == 0
    assert out.strip() == (
        f"wrote 0 episodes to {run} (6 already done): all were already done, nothing left to run"
    )
    assert "none scored" not in out


def test_the_progress_total_is_the_limit_when_the_suite_does_not_say_its_size(
    capsys, suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(progress, "LOG_EVERY", 0.0)  # a line per episode
    code, _, err = cli(
        capsys,
        "run",
        suite,
        "--agent",
        "sim:oracle",
        "--per-cell",
        "2",
        "--limit",
        "3",
        "--out",
        tmp_path / "r.jsonl",
    )
    assert code == 0
    lines = [line for line in err.splitlines() if "episodes, acc" in line]
    assert lines and all("/3 episodes" in line and "ETA ?" not in line for line in lines), err
    assert "/?" not in err


def test_a_timeline_counts_one_call_before_as_one_call():
    calls = [{"index": i, "name": f"step_{i + 1}", "arguments": {}, "result": 1} for i in range(3)]
    episode = {
        "scenario_id": "x",
        "trial": 0,
        "verdict": "wrong",
        "calls": calls,
        "labels": [],
        "metrics": {"first_divergence": {"call_index": 3, "label": "skipped_step", "step": 4}},
    }
    text = timeline(episode, around=2)
    assert "… 1 call before" in text and "1 calls" not in text


def test_one_superseded_record_is_one_record():
    from agentproc.runs.runfile import superseded

    assert superseded(1).startswith("1 record was superseded")
    assert superseded(2).startswith("2 records were superseded")


def test_check_counts_one_episode_as_one(capsys, suite: Path, tmp_path: Path):
    run = tmp_path / "r.jsonl"
    assert (
        cli(capsys, "run", suite, "--agent", "sim:skipped_step", "--limit", "1", "--out", run)[0]
        == 0
    )
    code, out, _ = cli(capsys, "check", run, "--min-faithful", "0.5", "--labels", "skipped_step")
    assert code == 1
    flat = " ".join(out.split())
    assert "(0 of 1 episode)" in flat and "in 1 episode:" in flat and "1 episodes" not in flat
