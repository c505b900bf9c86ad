"""Inputs refused in one line naming the file and field: nested TOML variant files, and
comparisons that compare nothing (disjoint arms, an arm whose every episode errored)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentproc.cli import main
from tests.helpers import cli

SIM = ["--agent", "sim:oracle"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two suites (different cells) and runs of them under two variants."""
    root = tmp_path_factory.mktemp("runs")
    for name, steps in (("suite1", "3"), ("suite2", "4")):
        argv = ["generate", "--steps", steps, "--count", "3", "--out", str(root / name)]
        assert main(argv) == 0
    for suite, variant in (("suite1", "default"), ("suite1", "prose"), ("suite2", "prose")):
        out = root / f"{suite}-{variant}.jsonl"
        assert main(["run", str(root / suite), *SIM, "--variant", variant, "--out", str(out)]) == 0
    return root


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_compare_of_runs_over_different_suites_is_refused(capsys, runs: Path):
    code, out, err = cli(
        capsys, "compare", runs / "suite1-default.jsonl", runs / "suite2-prose.jsonl"
    )
    assert code == 2 and out == ""
    assert "share no scenario" in one_line(err)


def test_compare_with_an_arm_whose_every_episode_errored_exits_3(capsys, runs: Path, tmp_path):
    lines = (runs / "suite1-prose.jsonl").read_text().splitlines()
    bad = []
    for line in lines:
        rec = json.loads(line)
        rec["stop_reason"], rec["error"] = "error", {"kind": "endpoint", "message": "down"}
        bad.append(json.dumps(rec))
    (tmp_path / "errored.jsonl").write_text("\n".join(bad) + "\n")
    code, out, err = cli(
        capsys, "compare", runs / "suite1-default.jsonl", tmp_path / "errored.jsonl"
    )
    assert code == 3 and out == ""
    assert "no scored episode" in one_line(err) and "endpoint 3" in err


def test_compare_of_paired_runs_still_renders(capsys, runs: Path):
    code, out, _ = cli(
        capsys, "compare", runs / "suite1-default.jsonl", runs / "suite1-prose.jsonl"
    )
    assert code == 0 and "prose" in out


@pytest.mark.parametrize("depth", [100_000, 2_000])
@pytest.mark.parametrize("shape", ["[", "{a="])
def test_a_toml_variant_nested_deep_is_bad_input(capsys, tmp_path: Path, depth: int, shape: str):
    close = {"[": "]", "{a=": "}"}[shape]
    value = shape * depth + ("1" if shape != "[" else "") + close * depth
    (tmp_path / "v.toml").write_text(f"x = {value}\n")
    (tmp_path / "s.json").write_text("{}")
    code, _, err = cli(
        capsys, "run", tmp_path / "s.json", *SIM, "--variant", tmp_path / "v.toml",
        "--out", tmp_path / "r.jsonl",
    )  # fmt: skip
    assert code == 2
    assert "v.toml" in one_line(err) and "nested too deeply" in err
    assert not (tmp_path / "r.jsonl").exists()
