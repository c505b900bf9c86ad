"""A new user's first commands: re-runnable, spread over the suite, self-explaining."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentproc.agents.sim import SIM_AGENTS
from agentproc.cli import main
from agentproc.cli.examples import EXAMPLES
from agentproc.cli.examples import SIM_AGENTS as LISTED

ROOT = Path(__file__).resolve().parents[2]


def test_generate_without_out_writes_a_default_folder_and_reuses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    monkeypatch.chdir(tmp_path)
    assert main(["generate", "--preset", "quick"]) == 0
    suite = tmp_path / "suites" / "quick"
    before = (suite / "procedures.jsonl").read_bytes(), (suite / "suite.json").stat().st_mtime_ns
    capsys.readouterr()
    assert main(["generate", "--preset", "quick"]) == 0  # the quick start, run again
    assert "suites/quick already holds this suite" in capsys.readouterr().out
    after = (suite / "procedures.jsonl").read_bytes(), (suite / "suite.json").stat().st_mtime_ns
    assert after == before  # nothing written


def test_the_same_grid_names_the_same_default_folder_and_another_grid_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.chdir(tmp_path)
    assert main(["generate", "--steps", "2", "--count", "2"]) == 0
    assert main(["generate", "--steps", "2", "--count", "2"]) == 0
    assert main(["generate", "--preset", "quick", "--count", "1"]) == 0
    names = sorted(p.name for p in (tmp_path / "suites").iterdir())
    assert len(names) == 2
    assert all(n.startswith(("custom-", "quick-")) for n in names)


def test_generate_into_a_folder_holding_another_suite_still_needs_overwrite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    out = str(tmp_path / "s")
    assert main(["generate", "--steps", "2", "--count", "2", "--out", out]) == 0
    assert main(["generate", "--steps", "2", "--count", "2", "--out", out]) == 0
    assert main(["generate", "--steps", "3", "--count", "2", "--out", out]) == 2
    assert "already holds a suite: use --overwrite" in capsys.readouterr().err


def test_per_cell_spreads_a_run_over_every_cell_of_the_suite(tmp_path: Path):
    suite, run = tmp_path / "s", tmp_path / "r.jsonl"
    argv = ["generate", "--steps", "2,3", "--lookback", "1,2", "--count", "3", "--out", str(suite)]
    assert main(argv) == 0
    argv = ["run", str(suite), "--agent", "sim:oracle", "--per-cell", "1", "--out", str(run)]
    assert main(argv) == 0
    cells = [json.loads(line)["cell"] for line in run.read_text().splitlines()]
    assert len(cells) == 4 and len(set(cells)) == 4


def test_quick_start_runs_twice_in_a_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    for _ in range(2):
        assert main(["generate", "--preset", "quick"]) == 0
        run = ["run", "suites/quick", "--agent", "sim:decay", "--out", "runs/decay.jsonl"]
        assert main([*run, "--resume"]) == 0
        assert main(["report", "runs/decay.jsonl"]) == 0
    assert len((tmp_path / "runs" / "decay.jsonl").read_text().splitlines()) == 60


def test_version(capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.startswith("agentproc ")


def test_the_version_is_looked_up_only_when_asked_for():
    # Reading the package metadata costs every start (and every worker) 10-20 ms.
    code = (
        "import importlib.metadata as md; asked = []; real = md.version; "
        "md.version = lambda name: asked.append(name) or real(name); "
        "from agentproc.cli.parser import build_parser; "
        "build_parser().parse_args(['report', 'x.jsonl']); print(asked)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    shown = subprocess.run(
        [sys.executable, "-m", "agentproc", "--version"], capture_output=True, text=True
    )
    assert shown.returncode == 0
    assert shown.stdout == f"agentproc {importlib.metadata.version('agentproc')}\n"


@pytest.mark.parametrize("command", sorted(EXAMPLES))
def test_every_command_help_shows_examples(command: str, capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = capsys.readouterr().out
    assert "examples:\n  agentproc " + command in text


def test_run_help_lists_every_simulated_agent_and_describes_seed(
    capsys: pytest.CaptureFixture[str],
):
    assert sorted(LISTED) == sorted(SIM_AGENTS)
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert all(name in text for name in SIM_AGENTS)
    assert "module.path:factory" in text and "--seed SEED seed of the agent's randomness" in text


def test_json_options_are_described(capsys: pytest.CaptureFixture[str]):
    for command in ("report", "replay", "selfcheck"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert "--json print" in text, command


NO_BACKEND = """
import sys
for name in ("xllamacpp", "llama_cpp"):
    sys.modules[name] = None  # as if the local extra were not installed
from agentproc.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_run_without_a_model_backend_stops_at_once_naming_the_extra(tmp_path: Path):
    suite, run = tmp_path / "s", tmp_path / "r.jsonl"
    assert main(["generate", "--steps", "2", "--count", "2", "--out", str(suite)]) == 0
    proc = subprocess.run(
        [sys.executable, "-c", NO_BACKEND, "run", str(suite), "--out", str(run)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "200"},
        timeout=120,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("agentproc: error: ")
    assert "pip install 'agentproc[local]'" in lines[0]
    assert not run.exists()  # no failed episodes written


def test_report_writes_csv_tables_beside_the_printed_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    suite, run, tables = tmp_path / "s", tmp_path / "r.jsonl", tmp_path / "tables"
    assert main(["generate", "--steps", "2,3", "--count", "2", "--out", str(suite)]) == 0
    assert main(["run", str(suite), "--agent", "sim:decay", "--out", str(run)]) == 0
    capsys.readouterr()
    assert main(["report", str(run), "--csv", str(tables)]) == 0
    captured = capsys.readouterr()
    assert "sim:decay: n=4, first-answer acc" in captured.out
    assert f"wrote {tables / 'episodes.csv'}" in captured.err
    assert len((tables / "episodes.csv").read_text().splitlines()) == 5  # header + 4
    assert len((tables / "cells.csv").read_text().splitlines()) == 3  # header + 2 cells
