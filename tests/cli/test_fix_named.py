"""A missing suite or a missing extra is one error naming the command that fixes it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentproc.cli import main

ROOT = Path(__file__).resolve().parents[2]
NO_BACKEND = """
import sys
for name in ("xllamacpp", "llama_cpp"):
    sys.modules[name] = None  # as if the local extra were not installed
from agentproc.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "{suite}", "--agent", "sim:decay", "--out", "r.jsonl"],
        ["run", "{suite}", "--agent", "sim:decay", "--out", "r.jsonl", "--workers", "2"],
        ["compare", "{suite}", "--variants", "default,terse", "--agent", "sim:decay", "--out", "r"],
        ["stress", "{suite}", "--agent", "sim:decay", "--out", "r"],
        ["scenario", "{suite}"],
    ],
)
@pytest.mark.parametrize(
    ("suite", "preset"),
    [("suites/quick", "quick"), ("suites/reference", "reference"), ("mine", "quick")],
)
def test_a_missing_suite_names_the_generate_command_that_makes_it(
    tmp_path, monkeypatch, capsys, argv, suite, preset
):
    monkeypatch.chdir(tmp_path)
    code = main([a.format(suite=suite) for a in argv])
    assert code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    fix = f"agentproc generate --preset {preset} --out {suite}"
    assert line == f"agentproc: error: {suite}: no such file; make it with: {fix}"
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_the_named_generate_command_makes_the_suite_the_run_wanted(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert (
        main(["run", "suites/quick", "--agent", "sim:oracle", "--out", "r.jsonl", "--limit", "1"])
        == 2
    )
    fix = capsys.readouterr().err.strip().split("make it with: agentproc ")[1]
    assert main(fix.split()) == 0
    assert (
        main(["run", "suites/quick", "--agent", "sim:oracle", "--out", "r.jsonl", "--limit", "1"])
        == 0
    )


def test_a_missing_scenario_file_is_only_said_to_be_missing(tmp_path, capsys):
    code = main(
        ["run", str(tmp_path / "x.jsonl"), "--agent", "sim:decay", "--out", str(tmp_path / "r")]
    )
    assert code == 2
    assert capsys.readouterr().err.strip().endswith("x.jsonl: no such file")


@pytest.mark.parametrize(
    "argv",
    [
        ["compare", "{suite}", "--variants", "default,terse", "--out", "{tmp}/r"],
        ["stress", "{suite}", "--out", "{tmp}/r"],
    ],
)
def test_compare_and_stress_without_the_local_extra_name_the_pip_command(tmp_path: Path, argv):
    suite = tmp_path / "s"
    assert main(["generate", "--steps", "2", "--count", "2", "--out", str(suite)]) == 0
    proc = subprocess.run(
        [sys.executable, "-c", NO_BACKEND, *(a.format(suite=suite, tmp=tmp_path) for a in argv)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "200"},
        timeout=120,
    )
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("agentproc: error: ") and "pip install 'agentproc[local]'" in line
    assert not (tmp_path / "r").exists()
